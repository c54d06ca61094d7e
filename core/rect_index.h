#ifndef WAYFINDER_CORE_RECT_INDEX_H_
#define WAYFINDER_CORE_RECT_INDEX_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/quadtree.h"

namespace wayfinder {

// The blockers of a rect field, bucketed on a uniform grid over the field so
// that a quadtree repair looks only at the blockers near the change (a
// living rects map keeps one and updates it with each obstacle added or
// removed). Each blocker sits in a slot (a stable id); freed slots are
// reused. Blockers may stick out of the field: they are bucketed by their
// extent clamped to the field and answered by their true extent, so every
// query is exact. A blocker spanning more than kMaxBucketsPerBlocker
// buckets goes to a list every query scans instead, which bounds memory
// (at most that many entries a blocker).
//
// Queries are const and thread-safe; Insert / Erase are not.
class RectBlockerIndex {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
  static constexpr size_t kMaxBucketsPerBlocker = 64;

  RectBlockerIndex() = default;
  // The field's blockers in slots 0 .. size - 1, in order.
  explicit RectBlockerIndex(const RectField& field);

  bool built() const { return width_ > 0; }
  double width() const { return width_; }
  double height() const { return height_; }
  // Live blockers.
  size_t size() const { return live_; }

  // Adds a blocker; returns its slot. The bucket grid is sized again when
  // the count has grown or shrunk fourfold since it was last sized
  // (amortised O(1) entries a change).
  uint32_t Insert(const Rect& r);
  // Removes the blocker in `slot` (from Insert or the constructor).
  void Erase(uint32_t slot);

  // Calls f(const Rect&) once for each blocker whose open interior meets
  // the open interior of `r` (the overlap test of the quadtree build).
  template <typename F>
  void ForEachTouching(const Rect& r, F&& f) const;
  // Whether some blocker's open interior meets `r`'s.
  bool AnyTouching(const Rect& r) const;
  // Whether one blocker covers all of `r` (looks at one bucket: the one
  // of r's corner (x0, y0), which a covering blocker contains).
  bool AnyCovering(const Rect& r) const;
  // Buckets a query over `r` visits.
  size_t BucketsOver(const Rect& r) const;

  // The live blockers, in slot order (tests).
  std::vector<Rect> Blockers() const;
  size_t MemoryBytes() const;

 private:
  static bool Meets(const Rect& a, const Rect& b) {
    return a.x0 < b.x1 && a.x1 > b.x0 && a.y0 < b.y1 && a.y1 > b.y0;
  }
  uint32_t Column(double x) const;
  uint32_t Row(double y) const;
  void Regrid(size_t count);
  void Place(uint32_t slot);
  void Unplace(uint32_t slot);

  double width_ = 0;
  double height_ = 0;
  // Buckets: cols_ x rows_, each cw_ x ch_ world units.
  uint32_t cols_ = 1;
  uint32_t rows_ = 1;
  double cw_ = 1;
  double ch_ = 1;
  size_t sized_for_ = 0;
  std::vector<std::vector<uint32_t>> buckets_;
  // Blockers too large for the buckets.
  std::vector<uint32_t> large_;
  std::vector<Rect> rects_;
  std::vector<uint8_t> used_;
  std::vector<uint32_t> free_slots_;
  size_t live_ = 0;
};

template <typename F>
void RectBlockerIndex::ForEachTouching(const Rect& r, F&& f) const {
  for (uint32_t s : large_) {
    if (Meets(rects_[s], r)) f(rects_[s]);
  }
  const uint32_t c0 = Column(r.x0), c1 = Column(r.x1);
  const uint32_t r0 = Row(r.y0), r1 = Row(r.y1);
  for (uint32_t row = r0; row <= r1; ++row) {
    for (uint32_t col = c0; col <= c1; ++col) {
      for (uint32_t s : buckets_[size_t{row} * cols_ + col]) {
        const Rect& b = rects_[s];
        if (!Meets(b, r)) continue;
        // Reported from the first bucket the blocker and the query share.
        if (col != std::max(c0, Column(b.x0)) || row != std::max(r0, Row(b.y0))) continue;
        f(b);
      }
    }
  }
}

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_RECT_INDEX_H_

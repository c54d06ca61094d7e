#include "core/rect_index.h"

#include <algorithm>
#include <cmath>

namespace wayfinder {
namespace {

// Most buckets a side and in all: the grid stays small next to the field's
// own limits (100,000 blockers by default).
constexpr double kMaxSide = 1024;
constexpr size_t kMaxBuckets = size_t{1} << 18;

}  // namespace

RectBlockerIndex::RectBlockerIndex(const RectField& field)
    : width_(field.width), height_(field.height) {
  rects_ = field.blockers;
  used_.assign(rects_.size(), 1);
  live_ = rects_.size();
  Regrid(live_);
}

uint32_t RectBlockerIndex::Column(double x) const {
  return static_cast<uint32_t>(std::clamp(std::floor(x / cw_), 0.0, double(cols_ - 1)));
}

uint32_t RectBlockerIndex::Row(double y) const {
  return static_cast<uint32_t>(std::clamp(std::floor(y / ch_), 0.0, double(rows_ - 1)));
}

// About one bucket a blocker, shaped like the field.
void RectBlockerIndex::Regrid(size_t count) {
  sized_for_ = count;
  const double n = std::max<double>(1, double(count));
  double cols = std::clamp(std::ceil(std::sqrt(n * width_ / height_)), 1.0, kMaxSide);
  double rows = std::clamp(std::ceil(std::sqrt(n * height_ / width_)), 1.0, kMaxSide);
  while (cols * rows > double(kMaxBuckets)) {
    cols = std::max(1.0, std::floor(cols / 2));
    rows = std::max(1.0, std::floor(rows / 2));
  }
  cols_ = static_cast<uint32_t>(cols);
  rows_ = static_cast<uint32_t>(rows);
  cw_ = width_ / cols_;
  ch_ = height_ / rows_;
  buckets_.assign(size_t{cols_} * rows_, {});
  large_.clear();
  for (uint32_t s = 0; s < rects_.size(); ++s) {
    if (used_[s]) Place(s);
  }
}

void RectBlockerIndex::Place(uint32_t slot) {
  const Rect& b = rects_[slot];
  const uint32_t c0 = Column(b.x0), c1 = Column(b.x1), r0 = Row(b.y0), r1 = Row(b.y1);
  if (size_t{c1 - c0 + 1} * (r1 - r0 + 1) > kMaxBucketsPerBlocker) {
    large_.push_back(slot);
    return;
  }
  for (uint32_t row = r0; row <= r1; ++row) {
    for (uint32_t col = c0; col <= c1; ++col) buckets_[size_t{row} * cols_ + col].push_back(slot);
  }
}

void RectBlockerIndex::Unplace(uint32_t slot) {
  auto drop = [slot](std::vector<uint32_t>& v) {
    auto it = std::find(v.begin(), v.end(), slot);
    if (it == v.end()) return;
    *it = v.back();
    v.pop_back();
  };
  const Rect& b = rects_[slot];
  const uint32_t c0 = Column(b.x0), c1 = Column(b.x1), r0 = Row(b.y0), r1 = Row(b.y1);
  if (size_t{c1 - c0 + 1} * (r1 - r0 + 1) > kMaxBucketsPerBlocker) {
    drop(large_);
    return;
  }
  for (uint32_t row = r0; row <= r1; ++row) {
    for (uint32_t col = c0; col <= c1; ++col) drop(buckets_[size_t{row} * cols_ + col]);
  }
}

uint32_t RectBlockerIndex::Insert(const Rect& r) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    rects_[slot] = r;
    used_[slot] = 1;
  } else {
    slot = static_cast<uint32_t>(rects_.size());
    rects_.push_back(r);
    used_.push_back(1);
  }
  ++live_;
  if (live_ > 4 * std::max<size_t>(sized_for_, 16)) {
    Regrid(live_);
  } else {
    Place(slot);
  }
  return slot;
}

void RectBlockerIndex::Erase(uint32_t slot) {
  if (slot >= rects_.size() || !used_[slot]) return;
  Unplace(slot);
  used_[slot] = 0;
  free_slots_.push_back(slot);
  --live_;
  if (sized_for_ > 64 && live_ * 4 < sized_for_) Regrid(live_);
}

bool RectBlockerIndex::AnyTouching(const Rect& r) const {
  bool any = false;
  // Stops scanning at the first bucket after a hit (ForEachTouching has no
  // early exit; the buckets are about one blocker each).
  for (uint32_t s : large_) {
    if (Meets(rects_[s], r)) return true;
  }
  const uint32_t c0 = Column(r.x0), c1 = Column(r.x1);
  const uint32_t r0 = Row(r.y0), r1 = Row(r.y1);
  for (uint32_t row = r0; row <= r1 && !any; ++row) {
    for (uint32_t col = c0; col <= c1 && !any; ++col) {
      for (uint32_t s : buckets_[size_t{row} * cols_ + col]) {
        if (Meets(rects_[s], r)) {
          any = true;
          break;
        }
      }
    }
  }
  return any;
}

bool RectBlockerIndex::AnyCovering(const Rect& r) const {
  auto covers = [&r](const Rect& b) {
    return b.x0 <= r.x0 && b.x1 >= r.x1 && b.y0 <= r.y0 && b.y1 >= r.y1;
  };
  for (uint32_t s : large_) {
    if (covers(rects_[s])) return true;
  }
  // A blocker covering r contains its corner (x0, y0), so it sits in that
  // point's bucket.
  for (uint32_t s : buckets_[size_t{Row(r.y0)} * cols_ + Column(r.x0)]) {
    if (covers(rects_[s])) return true;
  }
  return false;
}

size_t RectBlockerIndex::BucketsOver(const Rect& r) const {
  return size_t{Column(r.x1) - Column(r.x0) + 1} * (Row(r.y1) - Row(r.y0) + 1);
}

std::vector<Rect> RectBlockerIndex::Blockers() const {
  std::vector<Rect> out;
  for (size_t s = 0; s < rects_.size(); ++s) {
    if (used_[s]) out.push_back(rects_[s]);
  }
  return out;
}

size_t RectBlockerIndex::MemoryBytes() const {
  size_t bytes = sizeof(*this) + rects_.capacity() * sizeof(Rect) + used_.capacity() +
                 (free_slots_.capacity() + large_.capacity()) * sizeof(uint32_t) +
                 buckets_.capacity() * sizeof(std::vector<uint32_t>);
  for (const auto& b : buckets_) bytes += b.capacity() * sizeof(uint32_t);
  return bytes;
}

}  // namespace wayfinder

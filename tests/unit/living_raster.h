#ifndef WAYFINDER_TESTS_UNIT_LIVING_RASTER_H_
#define WAYFINDER_TESTS_UNIT_LIVING_RASTER_H_

// A living grid or hex map for the update property tests, kept the way
// the server keeps one: a base raster (cell patches applied
// in order) plus live obstacles; the effective raster (base, with every
// cell an obstacle covers blocked) is the GridMap the graphs read. Each
// random edit changes the base or the obstacles, writes the effective
// bytes of the region it touched with GridMap::Assign and returns that
// region for the graphs' Update.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cell_rect.h"
#include "core/grid_map.h"
#include "core/obstacle_raster.h"
#include "tests/unit/obstacle_shapes.h"

namespace wayfinder {
namespace testing_living {

class LivingRaster {
 public:
  // hex: obstacles cover hexagons, and cells are only open or wall.
  LivingRaster(uint32_t width, uint32_t height, bool hex, std::mt19937& rng)
      : w_(width), h_(height), hex_(hex), base_(size_t{width} * height) {
    std::bernoulli_distribution wall(0.25);
    for (uint8_t& c : base_) c = wall(rng) ? GridMap::kBlocked : 0;
    covered_.assign(base_.size(), 0);
    map_ = std::make_shared<GridMap>(*GridMap::Create(w_, h_, base_));
  }

  const std::shared_ptr<GridMap>& map() const { return map_; }
  // The effective raster, for fresh builds.
  std::shared_ptr<const GridMap> Snapshot() const {
    return std::make_shared<const GridMap>(*GridMap::Create(w_, h_, map_->cells()));
  }
  const std::string& last() const { return last_; }

  // One random edit; returns the region it changed (maybe empty).
  CellRect RandomEdit(std::mt19937& rng, bool allow_costs) {
    const uint32_t pick = rng() % 100;
    if (pick < 40) return Patch(rng, allow_costs);
    if (pick < 44 && allow_costs) return Uniformize();
    if (pick < 65) return AddObstacle(rng, /*polygon=*/false);
    if (pick < 80) return AddObstacle(rng, /*polygon=*/true);
    if (!obstacles_.empty()) return RemoveObstacle(rng);
    return Patch(rng, allow_costs);
  }

 private:
  CellRect RandomRect(std::mt19937& rng) {
    const uint32_t pick = rng() % 100;
    if (pick < 6) return {0, 0, w_, h_};  // the whole map
    auto span = [&](uint32_t n, uint32_t* lo, uint32_t* hi) {
      const uint32_t len = 1 + rng() % std::min<uint32_t>(n, 9);
      *lo = rng() % (n - len + 1);
      *hi = *lo + len;
    };
    CellRect r;
    span(w_, &r.x0, &r.x1);
    span(h_, &r.y0, &r.y1);
    if (pick < 30) {  // on a map edge
      switch (rng() % 4) {
        case 0: r.x1 -= r.x0, r.x0 = 0; break;
        case 1: r.x0 += w_ - r.x1, r.x1 = w_; break;
        case 2: r.y1 -= r.y0, r.y0 = 0; break;
        default: r.y0 += h_ - r.y1, r.y1 = h_; break;
      }
    }
    return r;
  }

  CellRect Patch(std::mt19937& rng, bool allow_costs) {
    const CellRect r = RandomRect(rng);
    const uint32_t kind = rng() % (allow_costs ? 10 : 9);
    std::bernoulli_distribution density(0.2 + 0.5 * (rng() % 2));
    for (uint32_t y = r.y0; y < r.y1; ++y) {
      for (uint32_t x = r.x0; x < r.x1; ++x) {
        uint8_t& c = base_[size_t{y} * w_ + x];
        if (kind < 3) {
          c = GridMap::kBlocked;
        } else if (kind < 6) {
          c = static_cast<uint8_t>(rng() % 2);
        } else if (kind < 9) {
          c = density(rng) ? GridMap::kBlocked : static_cast<uint8_t>(rng() % 2);
        } else {
          c = density(rng) ? GridMap::kBlocked : static_cast<uint8_t>(1 + rng() % 9);
        }
      }
    }
    last_ = absl::StrCat("patch kind ", kind, " [", r.x0, ",", r.x1, ")x[", r.y0, ",", r.y1, ")");
    return Write(r);
  }

  CellRect Uniformize() {
    for (uint8_t& c : base_) {
      if (c != GridMap::kBlocked && c > 1) c = 1;
    }
    last_ = "uniformize";
    return Write({0, 0, w_, h_});
  }

  CellRect AddObstacle(std::mt19937& rng, bool polygon) {
    const double side = std::max(2.0, std::min<double>(std::max(w_, h_), 7.0));
    CellMask mask;
    if (polygon) {
      const auto ring = testing_shapes::RandomStar(rng, w_, h_, side / 2 + 0.5);
      mask = hex_ ? HexCellsCoveredBy(ring, w_, h_) : GridCellsCoveredBy(ring, w_, h_);
    } else {
      const Rect rect = testing_shapes::RandomRect(rng, w_, h_, side);
      mask = hex_ ? HexCellsCoveredBy(rect, w_, h_) : GridCellsCoveredBy(rect, w_, h_);
    }
    for (uint32_t y = mask.box.y0; y < mask.box.y1; ++y) {
      for (uint32_t x = mask.box.x0; x < mask.box.x1; ++x) {
        if (mask.Covers(x, y)) ++covered_[size_t{y} * w_ + x];
      }
    }
    last_ = absl::StrCat(polygon ? "polygon" : "rect", " obstacle over [", mask.box.x0, ",",
                         mask.box.x1, ")x[", mask.box.y0, ",", mask.box.y1, ")");
    const CellRect box = mask.box;
    obstacles_.push_back(std::move(mask));
    return Write(box);
  }

  CellRect RemoveObstacle(std::mt19937& rng) {
    const size_t k = rng() % obstacles_.size();
    CellMask mask = std::move(obstacles_[k]);
    obstacles_.erase(obstacles_.begin() + static_cast<ptrdiff_t>(k));
    for (uint32_t y = mask.box.y0; y < mask.box.y1; ++y) {
      for (uint32_t x = mask.box.x0; x < mask.box.x1; ++x) {
        if (mask.Covers(x, y)) --covered_[size_t{y} * w_ + x];
      }
    }
    last_ = absl::StrCat("remove obstacle over [", mask.box.x0, ",", mask.box.x1, ")x[",
                         mask.box.y0, ",", mask.box.y1, ")");
    return Write(mask.box);
  }

  // The effective bytes of r into the map.
  CellRect Write(const CellRect& r) {
    if (r.empty()) return r;
    std::vector<uint8_t> bytes;
    bytes.reserve(r.area());
    for (uint32_t y = r.y0; y < r.y1; ++y) {
      for (uint32_t x = r.x0; x < r.x1; ++x) {
        const size_t i = size_t{y} * w_ + x;
        bytes.push_back(covered_[i] != 0 ? GridMap::kBlocked : base_[i]);
      }
    }
    const absl::Status s = map_->Assign(r, bytes.data());
    if (!s.ok()) std::abort();
    return r;
  }

  uint32_t w_, h_;
  bool hex_;
  std::vector<uint8_t> base_;
  std::vector<uint32_t> covered_;  // live obstacles covering each cell
  std::vector<CellMask> obstacles_;
  std::shared_ptr<GridMap> map_;
  std::string last_;
};

}  // namespace testing_living
}  // namespace wayfinder

#endif  // WAYFINDER_TESTS_UNIT_LIVING_RASTER_H_

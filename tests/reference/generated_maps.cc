#include "tests/reference/generated_maps.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/reference/grid_dijkstra.h"

namespace wayfinder::reference {
namespace {

constexpr uint8_t kWall = GridMap::kBlocked;

class Raster {
 public:
  Raster(uint32_t w, uint32_t h, uint8_t fill) : w_(w), h_(h), cells_(size_t{w} * h, fill) {}
  uint8_t& at(uint32_t x, uint32_t y) { return cells_[size_t{y} * w_ + x]; }
  void Fill(int64_t x0, int64_t y0, int64_t x1, int64_t y1, uint8_t v) {
    x0 = std::max<int64_t>(x0, 0), y0 = std::max<int64_t>(y0, 0);
    x1 = std::min<int64_t>(x1, w_), y1 = std::min<int64_t>(y1, h_);
    for (int64_t y = y0; y < y1; ++y) {
      for (int64_t x = x0; x < x1; ++x) at(static_cast<uint32_t>(x), static_cast<uint32_t>(y)) = v;
    }
  }
  GridMap Take() { return *GridMap::Create(w_, h_, std::move(cells_)); }
  uint32_t w() const { return w_; }
  uint32_t h() const { return h_; }

 private:
  uint32_t w_, h_;
  std::vector<uint8_t> cells_;
};

// A building in [x0, x1) x [y0, y1): an outer wall, split recursively into
// rooms by walls with one-cell doors, and 1-2 doors to the street.
void Building(Raster& r, std::mt19937& rng, int64_t x0, int64_t y0, int64_t x1, int64_t y1) {
  r.Fill(x0, y0, x1, y0 + 1, kWall);
  r.Fill(x0, y1 - 1, x1, y1, kWall);
  r.Fill(x0, y0, x0 + 1, y1, kWall);
  r.Fill(x1 - 1, y0, x1, y1, kWall);
  // Rooms: split the interior while it is large.
  struct Box {
    int64_t x0, y0, x1, y1;
  };
  std::vector<Box> todo = {{x0 + 1, y0 + 1, x1 - 1, y1 - 1}};
  while (!todo.empty()) {
    const Box b = todo.back();
    todo.pop_back();
    const int64_t bw = b.x1 - b.x0, bh = b.y1 - b.y0;
    if (std::max(bw, bh) < 10) continue;
    if (bw >= bh) {
      const int64_t x = b.x0 + 4 + static_cast<int64_t>(rng() % (bw - 8));
      r.Fill(x, b.y0, x + 1, b.y1, kWall);
      const int64_t door = b.y0 + static_cast<int64_t>(rng() % bh);
      r.Fill(x, door, x + 1, door + 1, 0);
      todo.push_back({b.x0, b.y0, x, b.y1});
      todo.push_back({x + 1, b.y0, b.x1, b.y1});
    } else {
      const int64_t y = b.y0 + 4 + static_cast<int64_t>(rng() % (bh - 8));
      r.Fill(b.x0, y, b.x1, y + 1, kWall);
      const int64_t door = b.x0 + static_cast<int64_t>(rng() % bw);
      r.Fill(door, y, door + 1, y + 1, 0);
      todo.push_back({b.x0, b.y0, b.x1, y});
      todo.push_back({b.x0, y + 1, b.x1, b.y1});
    }
  }
  // Street doors, on random sides (corners excluded).
  const int doors = 1 + static_cast<int>(rng() % 2);
  for (int d = 0; d < doors; ++d) {
    switch (rng() % 4) {
      case 0: {
        const int64_t x = x0 + 1 + static_cast<int64_t>(rng() % (x1 - x0 - 2));
        r.Fill(x, y0, x + 1, y0 + 1, 0);
        break;
      }
      case 1: {
        const int64_t x = x0 + 1 + static_cast<int64_t>(rng() % (x1 - x0 - 2));
        r.Fill(x, y1 - 1, x + 1, y1, 0);
        break;
      }
      case 2: {
        const int64_t y = y0 + 1 + static_cast<int64_t>(rng() % (y1 - y0 - 2));
        r.Fill(x0, y, x0 + 1, y + 1, 0);
        break;
      }
      default: {
        const int64_t y = y0 + 1 + static_cast<int64_t>(rng() % (y1 - y0 - 2));
        r.Fill(x1 - 1, y, x1, y + 1, 0);
        break;
      }
    }
  }
}

}  // namespace

GridMap GenerateCaves(uint32_t width, uint32_t height, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution wall(0.45);
  std::vector<uint8_t> a(size_t{width} * height), b(a.size());
  for (uint8_t& c : a) c = wall(rng);
  for (int round = 0; round < 5; ++round) {
    for (uint32_t y = 0; y < height; ++y) {
      for (uint32_t x = 0; x < width; ++x) {
        int walls = 0;  // of the 3 x 3 block; outside the map counts as wall
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            const int64_t nx = int64_t{x} + dx, ny = int64_t{y} + dy;
            walls += nx < 0 || ny < 0 || nx >= width || ny >= height ||
                     a[static_cast<size_t>(ny) * width + static_cast<size_t>(nx)];
          }
        }
        b[size_t{y} * width + x] = walls >= 5;
      }
    }
    a.swap(b);
  }
  for (uint8_t& c : a) c = c ? kWall : 0;
  return *GridMap::Create(width, height, std::move(a));
}

GridMap GenerateCity(uint32_t width, uint32_t height, uint32_t seed) {
  std::mt19937 rng(seed);
  Raster r(width, height, 0);
  // Blocks between streets 3-6 cells wide; each block holds 1-4 buildings
  // with alleys between them.
  int64_t y = 2 + rng() % 4;
  while (y + 14 < height) {
    const int64_t bh = 12 + rng() % 40;
    const int64_t y1 = std::min<int64_t>(y + bh, height - 1);
    int64_t x = 2 + rng() % 4;
    while (x + 14 < width) {
      const int64_t bw = 12 + rng() % 50;
      const int64_t x1 = std::min<int64_t>(x + bw, width - 1);
      // Buildings side by side along x, alleys of 1-2 cells.
      int64_t bx = x;
      while (x1 - bx >= 8) {
        const int64_t w = std::min<int64_t>(x1 - bx, 8 + rng() % 24);
        Building(r, rng, bx, y, bx + w, y1);
        bx += w + 1 + rng() % 2;
      }
      x = x1 + 3 + rng() % 4;
    }
    y = y1 + 3 + rng() % 4;
  }
  return r.Take();
}

GridMap GenerateRocks(uint32_t width, uint32_t height, uint32_t seed) {
  std::mt19937 rng(seed);
  Raster r(width, height, 0);
  std::uniform_real_distribution<double> unit(0, 1);
  // About 18% of the area in boulders: ellipses of semi-axes 1-12 cells at
  // random angles.
  const double target = 0.18 * width * height;
  double covered = 0;
  while (covered < target) {
    const double cx = unit(rng) * width, cy = unit(rng) * height;
    const double ra = 1 + unit(rng) * 11, rb = ra * (0.35 + 0.65 * unit(rng));
    const double t = unit(rng) * 3.141592653589793;
    const double ct = std::cos(t), st = std::sin(t);
    const int64_t x0 = static_cast<int64_t>(cx - ra) - 1, x1 = static_cast<int64_t>(cx + ra) + 2;
    const int64_t y0 = static_cast<int64_t>(cy - ra) - 1, y1 = static_cast<int64_t>(cy + ra) + 2;
    for (int64_t y = std::max<int64_t>(y0, 0); y < std::min<int64_t>(y1, height); ++y) {
      for (int64_t x = std::max<int64_t>(x0, 0); x < std::min<int64_t>(x1, width); ++x) {
        const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
        const double u = (dx * ct + dy * st) / ra, v = (-dx * st + dy * ct) / rb;
        if (u * u + v * v <= 1) r.at(static_cast<uint32_t>(x), static_cast<uint32_t>(y)) = kWall;
      }
    }
    covered += 3.141592653589793 * ra * rb;
  }
  return r.Take();
}

std::vector<MovingAiMap> GeneratedBenchmarkMaps(uint32_t side, uint32_t starts,
                                                uint32_t goals_per_start, uint32_t seed) {
  std::vector<MovingAiMap> out;
  const std::pair<std::string, GridMap (*)(uint32_t, uint32_t, uint32_t)> families[] = {
      {"caves", GenerateCaves}, {"city", GenerateCity}, {"rocks", GenerateRocks}};
  for (const auto& [name, make] : families) {
    MovingAiMap m;
    m.name = absl::StrCat(name, "-", side);
    m.grid = std::make_shared<const GridMap>(make(side, side, seed));
    const GridMap& g = *m.grid;
    std::vector<uint32_t> free_cells;
    for (uint32_t c = 0; c < g.size(); ++c) {
      if (g.IsFree(c)) free_cells.push_back(c);
    }
    std::mt19937 rng(seed * 7919 + static_cast<uint32_t>(out.size()));
    uint32_t attempts = 0;
    for (uint32_t s = 0; s < starts && !free_cells.empty() && attempts < 20 * starts; ++s) {
      ++attempts;
      const uint32_t start = free_cells[rng() % free_cells.size()];
      const std::vector<double> dist = GridDistances(g, start);
      std::vector<uint32_t> reachable;
      for (uint32_t c : free_cells) {
        if (c != start && std::isfinite(dist[c])) reachable.push_back(c);
      }
      // A small pocket of the map would give only short problems: pick
      // another start.
      if (reachable.size() < free_cells.size() / 4) {
        --s;
        continue;
      }
      for (uint32_t k = 0; k < goals_per_start; ++k) {
        const uint32_t goal = reachable[rng() % reachable.size()];
        ScenarioProblem p;
        p.map = m.name;
        p.width = side;
        p.height = side;
        p.start_x = start % side;
        p.start_y = start / side;
        p.goal_x = goal % side;
        p.goal_y = goal / side;
        p.optimal_length = dist[goal];
        p.tolerance = 1e-6;
        m.problems.push_back(p);
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}


GridMap SmallSeededGrid(std::mt19937& rng, SeededKind kind) {
  std::uniform_int_distribution<uint32_t> side(4, 48);
  const uint32_t w = side(rng), h = side(rng);
  std::vector<uint8_t> cells(size_t{w} * h, 1);
  if (kind == SeededKind::kRandom) {
    const double density = std::uniform_real_distribution<double>(0.0, 0.45)(rng);
    std::bernoulli_distribution blocked(density);
    for (uint8_t& c : cells) c = blocked(rng) ? GridMap::kBlocked : 1;
  } else if (kind == SeededKind::kCorridors) {
    // Solid rock with rooms and corridors of width 1..3 carved out.
    std::fill(cells.begin(), cells.end(), GridMap::kBlocked);
    std::uniform_int_distribution<int> n(2, 8), width(1, 3);
    auto carve = [&](uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
      for (uint32_t y = y0; y <= y1 && y < h; ++y) {
        for (uint32_t x = x0; x <= x1 && x < w; ++x) cells[size_t{y} * w + x] = 1;
      }
    };
    uint32_t px = std::uniform_int_distribution<uint32_t>(0, w - 1)(rng);
    uint32_t py = std::uniform_int_distribution<uint32_t>(0, h - 1)(rng);
    for (int k = n(rng); k > 0; --k) {
      const uint32_t qx = std::uniform_int_distribution<uint32_t>(0, w - 1)(rng);
      const uint32_t qy = std::uniform_int_distribution<uint32_t>(0, h - 1)(rng);
      const uint32_t cw = static_cast<uint32_t>(width(rng)) - 1;
      carve(std::min(px, qx), py, std::max(px, qx), py + cw);
      carve(qx, std::min(py, qy), qx + cw, std::max(py, qy));
      if (k % 3 == 0) carve(qx, qy, qx + 4, qy + 3);  // a room
      px = qx;
      py = qy;
    }
  } else {
    // A maze of corridors `cw` wide between walls one cell thick, by
    // depth-first carving, with a few walls knocked out (loops).
    const uint32_t cw = std::uniform_int_distribution<uint32_t>(1, 2)(rng);
    const uint32_t pitch = cw + 1;
    const uint32_t mw = std::max<uint32_t>(1, (w - 1) / pitch);
    const uint32_t mh = std::max<uint32_t>(1, (h - 1) / pitch);
    std::fill(cells.begin(), cells.end(), GridMap::kBlocked);
    auto open = [&](uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
      for (uint32_t y = y0; y < y1 && y < h; ++y) {
        for (uint32_t x = x0; x < x1 && x < w; ++x) cells[size_t{y} * w + x] = 1;
      }
    };
    std::vector<bool> seen(size_t{mw} * mh, false);
    std::vector<uint32_t> stack = {0};
    seen[0] = true;
    open(1, 1, 1 + cw, 1 + cw);
    while (!stack.empty()) {
      const uint32_t c = stack.back();
      const uint32_t cx = c % mw, cy = c / mw;
      std::vector<uint32_t> next;
      if (cx > 0 && !seen[c - 1]) next.push_back(c - 1);
      if (cx + 1 < mw && !seen[c + 1]) next.push_back(c + 1);
      if (cy > 0 && !seen[c - mw]) next.push_back(c - mw);
      if (cy + 1 < mh && !seen[c + mw]) next.push_back(c + mw);
      if (next.empty()) {
        stack.pop_back();
        continue;
      }
      const uint32_t d = next[std::uniform_int_distribution<size_t>(0, next.size() - 1)(rng)];
      seen[d] = true;
      const uint32_t dx = d % mw, dy = d / mw;
      open(1 + std::min(cx, dx) * pitch, 1 + std::min(cy, dy) * pitch,
           1 + std::max(cx, dx) * pitch + cw, 1 + std::max(cy, dy) * pitch + cw);
      stack.push_back(d);
    }
    std::bernoulli_distribution knock(0.03);
    for (uint8_t& c : cells) {
      if (c == GridMap::kBlocked && knock(rng)) c = 1;
    }
  }
  return *GridMap::Create(w, h, std::move(cells));
}

}  // namespace wayfinder::reference

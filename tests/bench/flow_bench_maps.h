#ifndef WAYFINDER_TESTS_BENCH_FLOW_BENCH_MAPS_H_
#define WAYFINDER_TESTS_BENCH_FLOW_BENCH_MAPS_H_

// The maps and goals the flow-field benchmarks share, so that the
// in-process bench (wayfinder-flowbench) and the one through the server
// (wayfinder-flowgrpcbench) time the same work: the 512 x 512 Moving AI
// maps, AR0011SR tiled 4 x 4, and seeded generated maps (random blockers
// with and without costs, open, maze; GRID and HEX).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/grid_map.h"
#include "wayfinder/v1/wayfinder.pb.h"
#include "tests/reference/benchmark_data.h"

namespace wayfinder::bench {

// `n` distinct free cells, seeded.
inline std::vector<uint32_t> FreeCells(const GridMap& map, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> pick(0, static_cast<uint32_t>(map.size() - 1));
  std::vector<uint32_t> cells;
  while (static_cast<int>(cells.size()) < n) {
    const uint32_t c = pick(rng);
    if (map.IsFree(c) && std::find(cells.begin(), cells.end(), c) == cells.end()) {
      cells.push_back(c);
    }
  }
  return cells;
}

inline std::shared_ptr<const GridMap> MakeGrid(uint32_t w, uint32_t h, std::vector<uint8_t> cells) {
  return std::make_shared<const GridMap>(*GridMap::Create(w, h, std::move(cells)));
}

// A `blocked` fraction of the cells blocked at random; the others free
// (cost 1) or, `weighted`, of cost 1-9.
inline std::shared_ptr<const GridMap> RandomGrid(uint32_t side, double blocked, bool weighted,
                                                 uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> cost(1, 9);
  std::vector<uint8_t> cells(size_t{side} * side);
  for (auto& c : cells) {
    c = u(rng) < blocked ? GridMap::kBlocked : weighted ? static_cast<uint8_t>(cost(rng)) : 0;
  }
  return MakeGrid(side, side, std::move(cells));
}

// No blocked cell at all.
inline std::shared_ptr<const GridMap> OpenGrid(uint32_t side) {
  return MakeGrid(side, side, std::vector<uint8_t>(size_t{side} * side, 0));
}

// A perfect maze as the Moving AI maze512-4 maps are drawn: corridors
// `corridor` cells wide between walls one cell thick, carved by a seeded
// depth-first search (one route between any two places).
inline std::shared_ptr<const GridMap> MazeGrid(uint32_t side, uint32_t corridor, uint32_t seed) {
  const uint32_t pitch = corridor + 1;
  const uint32_t rooms = (side - 1) / pitch;
  std::vector<uint8_t> cells(size_t{side} * side, GridMap::kBlocked);
  auto open = [&](uint32_t x0, uint32_t y0, uint32_t w, uint32_t h) {
    for (uint32_t y = y0; y < y0 + h; ++y) {
      std::fill_n(cells.begin() + static_cast<std::ptrdiff_t>(size_t{y} * side + x0), w, 0);
    }
  };
  std::mt19937 rng(seed);
  std::vector<bool> seen(size_t{rooms} * rooms, false);
  std::vector<uint32_t> stack = {0};
  seen[0] = true;
  open(1, 1, corridor, corridor);
  while (!stack.empty()) {
    const uint32_t r = stack.back();
    const uint32_t rx = r % rooms, ry = r / rooms;
    uint32_t next[4];
    int count = 0;
    if (rx > 0 && !seen[r - 1]) next[count++] = r - 1;
    if (rx + 1 < rooms && !seen[r + 1]) next[count++] = r + 1;
    if (ry > 0 && !seen[r - rooms]) next[count++] = r - rooms;
    if (ry + 1 < rooms && !seen[r + rooms]) next[count++] = r + rooms;
    if (count == 0) {
      stack.pop_back();
      continue;
    }
    const uint32_t n = next[std::uniform_int_distribution<int>(0, count - 1)(rng)];
    const uint32_t nx = n % rooms, ny = n / rooms;
    seen[n] = true;
    open(1 + nx * pitch, 1 + ny * pitch, corridor, corridor);
    // The wall between the two rooms.
    open(1 + std::min(rx, nx) * pitch, 1 + std::min(ry, ny) * pitch,
         nx != rx ? 2 * corridor + 1 : corridor, ny != ry ? 2 * corridor + 1 : corridor);
    stack.push_back(n);
  }
  return MakeGrid(side, side, std::move(cells));
}

// `m` repeated `times` x `times`.
inline std::shared_ptr<const GridMap> Tiled(const GridMap& m, uint32_t times) {
  const uint32_t w = m.width() * times, h = m.height() * times;
  std::vector<uint8_t> cells(size_t{w} * h);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      cells[size_t{y} * w + x] = m.cells()[m.Index(x % m.width(), y % m.height())];
    }
  }
  return MakeGrid(w, h, std::move(cells));
}

struct FlowBenchMap {
  std::string name;
  bool hex = false;  // else GRID
  std::shared_ptr<const GridMap> grid;
};

// Every map of the flow-field benchmarks, in their order, whose name
// contains `filter`. `quick`: AR0011SR of the Moving AI maps only, and no
// weighted 2048 x 2048 map.
inline std::vector<FlowBenchMap> FlowBenchMaps(const std::vector<reference::MovingAiMap>& data,
                                               bool quick, const std::string& filter) {
  std::vector<FlowBenchMap> out;
  auto add = [&](const std::string& name, bool hex, auto make) {
    if (name.find(filter) == std::string::npos) return;
    out.push_back({name, hex, make()});
  };
  std::shared_ptr<const GridMap> tile_source;
  for (const auto& m : data) {
    if (m.grid->width() != 512 || m.grid->height() != 512) continue;
    if (m.name == "AR0011SR") tile_source = m.grid;
    if (quick && m.name != "AR0011SR") continue;
    add(m.name, false, [&] { return m.grid; });
  }
  if (tile_source != nullptr) {
    add("AR0011SR tiled 4x4", false, [&] { return Tiled(*tile_source, 4); });
  }
  add("random 512, 20% blocked", false, [] { return RandomGrid(512, 0.2, false, 7); });
  add("random 512, 20% blocked, costs 1-9", false, [] { return RandomGrid(512, 0.2, true, 8); });
  add("open 512", false, [] { return OpenGrid(512); });
  add("random 2048, 20% blocked", false, [] { return RandomGrid(2048, 0.2, false, 9); });
  if (!quick) {
    add("random 2048, 20% blocked, costs 1-9", false,
        [] { return RandomGrid(2048, 0.2, true, 10); });
    add("open 2048", false, [] { return OpenGrid(2048); });
    add("maze 2048, corridors 4", false, [] { return MazeGrid(2048, 4, 13); });
  }
  add("hex 512, 20% walls", true, [] { return RandomGrid(512, 0.2, false, 11); });
  add("hex 2048, 20% walls", true, [] { return RandomGrid(2048, 0.2, false, 12); });
  return out;
}

// `m` as a GRID map source named `name`, building the GRID graph only.
inline v1::Map GridProto(const std::string& name, const GridMap& m) {
  v1::Map map;
  map.set_name(name);
  map.mutable_grid()->set_width(m.width());
  map.mutable_grid()->set_height(m.height());
  map.mutable_grid()->set_cells(std::string(m.cells().begin(), m.cells().end()));
  map.mutable_build()->add_graphs(v1::GRID);
  return map;
}

}  // namespace wayfinder::bench

#endif  // WAYFINDER_TESTS_BENCH_FLOW_BENCH_MAPS_H_

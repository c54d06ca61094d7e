// wayfinder-flowgrpcbench: a fresh goal's flow field through the server
// beside the same field computed in this process.
//
// For every map of the flow-field benchmarks (flow_bench_maps.h: the maps
// and goals of wayfinder-flowbench), uploads it to a running
// wayfinder-server (--server), then, for each of --repeats seeded goal sets
// of 1 and 16 goals, alternately computes the field here (the engine's
// call, as wayfinder-flowbench makes it, with --threads threads: give the
// server's --flow_threads) and asks the server for it (GetFlowField for a
// goal set it has not seen, so a computation; a 1 x 1 window, so the
// answer's size does not count). Both sides report the same clock:
// FlowField::compute_ms here, FlowFieldStats.compute_ms from the server.
// Prints the medians and their ratio (server / here), the RPC's round
// trip and, with --server_pid, the server's page faults per field (the
// larger median of the two goal counts): memory touched for the first
// time, so allocations the size of the map show as about one fault per
// 4 KiB. Deletes each map after its row.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/client.h"
#include "core/flow_field.h"
#include "core/grid_graph.h"
#include "core/hex_grid.h"
#include "tests/bench/flow_bench_maps.h"
#include "tests/reference/benchmark_data.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "server address, host:port");
ABSL_FLAG(std::string, data_dir, WAYFINDER_DATA_DIR, "directory holding movingai/<set>/<map>.map");
ABSL_FLAG(int, repeats, 5, "goal sets per row and goal count (the median is reported)");
ABSL_FLAG(bool, quick, false, "fewer maps and runs (a smoke run)");
ABSL_FLAG(int, threads, 2, "threads of an in-process field: the server's --flow_threads");
ABSL_FLAG(std::string, filter, "", "only the maps whose name contains this");
ABSL_FLAG(int, server_pid, 0,
          "the server's process id, when it runs on this machine: then the table also shows "
          "the server's minor page faults per field (memory it touched for the first time)");

namespace {

namespace v1 = wayfinder::v1;
using wayfinder::FlowField;
using wayfinder::GridMap;
using wayfinder::bench::FlowBenchMap;

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "wayfinder-flowgrpcbench: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  std::exit(1);
}

v1::Map MapProto(const std::string& name, const FlowBenchMap& m) {
  v1::Map map;
  map.set_name(name);
  const GridMap& g = *m.grid;
  const std::string bytes(g.cells().begin(), g.cells().end());
  if (m.hex) {
    map.mutable_hex()->set_width(g.width());
    map.mutable_hex()->set_height(g.height());
    map.mutable_hex()->set_walls(bytes);
    map.mutable_build()->add_graphs(v1::HEX);
  } else {
    map.mutable_grid()->set_width(g.width());
    map.mutable_grid()->set_height(g.height());
    map.mutable_grid()->set_cells(bytes);
    map.mutable_build()->add_graphs(v1::GRID);
  }
  return map;
}

struct Row {
  std::string name;
  std::string size;
  double here[2], server[2], rpc[2];  // 1 goal, 16 goals
  double faults[2];                    // the server's, per field (median)
};

// The minor page faults of process `pid` so far (/proc/PID/stat, field 10).
uint64_t MinorFaults(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold spaces.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  uint64_t value = 0;
  for (int i = 3; i <= 10 && rest >> field; ++i) {
    if (i == 10) value = std::stoull(field);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "A fresh goal's flow field through wayfinder-server (--server) beside the same field in "
      "process.");
  absl::ParseCommandLine(argc, argv);
  const bool quick = absl::GetFlag(FLAGS_quick);
  const int repeats = quick ? 2 : absl::GetFlag(FLAGS_repeats);
  const int threads = absl::GetFlag(FLAGS_threads);
  const int pid = absl::GetFlag(FLAGS_server_pid);
  auto data = wayfinder::reference::LoadMovingAi(
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) / "movingai");
  if (!data.ok()) Fail("benchmark data", data.status());
  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::Seconds(120);
  auto client = wayfinder::client::Client::CreateOrError(options);
  if (!client.ok()) Fail("client", client.status());

  wayfinder::FlowFieldScratch scratch;
  const wayfinder::SearchBudget budget;
  std::vector<Row> rows;
  for (const FlowBenchMap& m : wayfinder::bench::FlowBenchMaps(*data, quick,
                                                               absl::GetFlag(FLAGS_filter))) {
    const std::string name = "flowgrpcbench";
    if (auto put = (*client)->PutMap(MapProto(name, m)); !put.ok()) Fail(m.name, put.status());
    std::unique_ptr<wayfinder::GridGraph> grid;
    std::unique_ptr<wayfinder::HexGraph> hex;
    if (m.hex) {
      hex = std::make_unique<wayfinder::HexGraph>(m.grid);
    } else {
      grid = std::make_unique<wayfinder::GridGraph>(m.grid);
    }
    Row row{m.name, std::to_string(m.grid->width()) + "x" + std::to_string(m.grid->height()),
            {}, {}, {}, {}};
    for (int k = 0; k < 2; ++k) {
      const int goal_count = k == 0 ? 1 : 16;
      std::vector<double> here, server, rpc, faults;
      for (int r = 0; r < repeats; ++r) {
        const std::vector<uint32_t> goals = wayfinder::bench::FreeCells(*m.grid, goal_count, 1000 + r);
        absl::StatusOr<FlowField> f =
            m.hex ? wayfinder::ComputeHexFlowField(*hex, goals, budget, scratch, threads)
                  : wayfinder::ComputeGridFlowField(*grid, goals, budget, scratch, threads);
        if (!f.ok()) Fail(m.name, f.status());
        here.push_back(f->compute_ms);
        const uint64_t reachable = f->reachable_cells;
        scratch.recycled = *std::move(f);  // its arrays for the next field, as the server does

        v1::GetFlowFieldRequest request;
        request.set_map(name);
        request.set_graph(m.hex ? v1::HEX : v1::GRID);
        for (uint32_t g : goals) {
          const uint32_t x = g % m.grid->width(), y = g / m.grid->width();
          const wayfinder::Point c =
              m.hex ? wayfinder::hex::Centre(x, y) : GridMap::Centre(x, y);
          v1::Point* p = request.add_goals();
          p->set_x(c.x);
          p->set_y(c.y);
        }
        request.mutable_window()->set_width(1);
        request.mutable_window()->set_height(1);
        const uint64_t faults_before = pid > 0 ? MinorFaults(pid) : 0;
        const auto t0 = Clock::now();
        auto answer = (*client)->GetFlowField(request);
        rpc.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (pid > 0) faults.push_back(static_cast<double>(MinorFaults(pid) - faults_before));
        if (!answer.ok()) Fail(m.name, answer.status());
        if (answer->stats().cache_hit()) {
          Fail(m.name, absl::InternalError("the server answered from its cache"));
        }
        if (answer->stats().reachable_cells() != reachable) {
          Fail(m.name, absl::InternalError("the server's field differs from this one"));
        }
        server.push_back(answer->stats().compute_ms());
      }
      row.here[k] = Median(here);
      row.server[k] = Median(server);
      row.rpc[k] = Median(rpc);
      row.faults[k] = pid > 0 ? Median(faults) : 0;
    }
    rows.push_back(row);
    if (absl::Status st = (*client)->DeleteMap(name); !st.ok()) Fail(m.name, st);
  }

  std::printf(
      "\n## Flow fields through the server: a fresh goal's compute_ms beside in process "
      "(median of %d, %d thread%s)\n\n",
      repeats, threads, threads == 1 ? "" : "s");
  std::printf(
      "| map | size | ms here, 1 goal | ms server, 1 goal | server / here | RPC ms | ms here, "
      "16 goals | ms server, 16 goals | server / here | RPC ms |%s\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|%s\n",
      pid > 0 ? " server page faults a field |" : "", pid > 0 ? "---:|" : "");
  for (const Row& r : rows) {
    std::printf("| %s | %s", r.name.c_str(), r.size.c_str());
    for (int k = 0; k < 2; ++k) {
      std::printf(" | %.1f | %.1f | %.2f | %.1f", r.here[k], r.server[k],
                  r.server[k] / std::max(r.here[k], 1e-6), r.rpc[k]);
    }
    if (pid > 0) std::printf(" | %.0f", std::max(r.faults[0], r.faults[1]));
    std::printf(" |\n");
  }
  return 0;
}

// A sample of every Moving AI scenario file in the benchmark data, uploaded
// as `movingai` maps and answered through FindPath over gRPC: every length
// must be the published optimum.

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/movingai.h"
#include "tests/reference/benchmark_data.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

using reference::ReadFile;

constexpr int kProblemsPerFile = 20;

TEST(ScenarioServiceTest, SampleOfEveryScenarioFileIsOptimal) {
  const std::filesystem::path root = std::filesystem::path(WAYFINDER_DATA_DIR) / "movingai";
  if (std::string(WAYFINDER_DATA_DIR).empty() || !std::filesystem::exists(root)) {
    GTEST_SKIP() << "benchmark data not found in '" WAYFINDER_DATA_DIR
                    "': get it as docs/development.md says (Benchmark data), "
                    "then configure with -DWAYFINDER_DATA_DIR=DIR";
  }
  std::vector<std::filesystem::path> scens;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().string().ends_with(".map.scen")) scens.push_back(entry.path());
  }
  std::sort(scens.begin(), scens.end());
  ASSERT_EQ(scens.size(), 17u);

  ServerHarness h;
  int checked = 0;
  for (const auto& scen_path : scens) {
    const std::filesystem::path map_path =
        scen_path.parent_path() / scen_path.stem();  // strip ".scen"
    const std::string name = map_path.stem().string();
    SCOPED_TRACE(name);
    v1::PutMapRequest put;
    put.mutable_map()->set_name(name);
    put.mutable_map()->set_movingai(ReadFile(map_path));
    v1::MapInfo info;
    auto ctx = Ctx(120);
    grpc::Status s = h.stub().PutMap(ctx.get(), put, &info);
    ASSERT_TRUE(s.ok()) << s.error_message();

    auto problems = ParseMovingAiScenario(ReadFile(scen_path));
    ASSERT_TRUE(problems.ok()) << problems.status();
    const size_t n = problems->size();
    for (int i = 0; i < kProblemsPerFile; ++i) {
      const ScenarioProblem& p = (*problems)[(n - 1) * i / (kProblemsPerFile - 1)];
      v1::FindPathResponse resp;
      auto c = Ctx(60);
      s = h.stub().FindPath(c.get(),
                            PathRequest(name, p.start_x + 0.5, p.start_y + 0.5,
                                        p.goal_x + 0.5, p.goal_y + 0.5),
                            &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      ASSERT_EQ(resp.status(), v1::FOUND);
      EXPECT_NEAR(resp.length(), p.optimal_length, p.tolerance)
          << "start (" << p.start_x << "," << p.start_y << ") goal (" << p.goal_x << ","
          << p.goal_y << ")";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 17 * kProblemsPerFile);
}

}  // namespace
}  // namespace wayfinder::testing

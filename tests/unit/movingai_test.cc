// The Moving AI map and scenario parsers, including the quirks of the real
// files (CRLF, no final line end, bg512's spaces and 2 decimals).

#include "core/movingai.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wayfinder {
namespace {

TEST(MovingAiMapTest, ParsesCharactersAsFreeOrBlocked) {
  auto map = ParseMovingAiMap("type octile\nheight 2\nwidth 4\nmap\n.G@T\nSWO.\n");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->width(), 4u);
  EXPECT_EQ(map->height(), 2u);
  EXPECT_TRUE(map->IsFree(0, 0));
  EXPECT_TRUE(map->IsFree(1, 0));   // G
  EXPECT_FALSE(map->IsFree(2, 0));  // @
  EXPECT_FALSE(map->IsFree(3, 0));  // T
  EXPECT_FALSE(map->IsFree(0, 1));  // S: swamp, blocked (documented)
  EXPECT_FALSE(map->IsFree(1, 1));  // W: water, blocked
  EXPECT_FALSE(map->IsFree(2, 1));  // O
  EXPECT_TRUE(map->IsFree(3, 1));
  EXPECT_EQ(map->free_cells(), 3u);
  EXPECT_TRUE(map->uniform_cost());
}

TEST(MovingAiMapTest, AcceptsCrlfAndNoFinalLineEnd) {
  auto map = ParseMovingAiMap("type octile\r\nheight 2\r\nwidth 2\r\nmap\r\n..\r\n.@");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->free_cells(), 3u);
  auto padded = ParseMovingAiMap("type octile\nheight 1\nwidth 2\nmap\n..\n\n\n");
  EXPECT_TRUE(padded.ok()) << padded.status();
}

TEST(MovingAiMapTest, RejectsMalformedText) {
  struct Case {
    std::string text;
    std::string part;
  };
  const std::vector<Case> cases = {
      {"", "header of 4 lines"},
      {"type octile\nheight 1\nwidth 1\n", "header of 4 lines"},
      {"type hex\nheight 1\nwidth 1\nmap\n.\n", "line 1"},
      {"type octile\nheight one\nwidth 1\nmap\n.\n", "line 2"},
      {"type octile\nheight 1\nwide 1\nmap\n.\n", "line 3"},
      {"type octile\nheight 1\nwidth 1\nmaps\n.\n", "line 4"},
      {"type octile\nheight 0\nwidth 1\nmap\n", "not in 1..65535"},
      {"type octile\nheight 2\nwidth 3\nmap\n...\n..\n", "line 6: row has 2 characters, expected width 3"},
      {"type octile\nheight 2\nwidth 3\nmap\n...\n", "has 1 map rows, expected height 2"},
      {"type octile\nheight 1\nwidth 2\nmap\n..\n..\n", "has 2 map rows, expected height 1"},
      {"type octile\nheight -1\nwidth 2\nmap\n..\n", "line 2"},
  };
  for (const Case& c : cases) {
    auto map = ParseMovingAiMap(c.text);
    EXPECT_EQ(map.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(map.status().message().find(c.part), absl::string_view::npos)
        << map.status() << " for " << c.text;
    EXPECT_TRUE(absl::StartsWith(map.status().message(), "movingai: ")) << map.status();
  }
}

TEST(MovingAiMapTest, RespectsLimits) {
  GridLimits limits;
  limits.max_cells = 5;
  auto map = ParseMovingAiMap("type octile\nheight 2\nwidth 3\nmap\n...\n...\n", limits);
  EXPECT_EQ(map.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(map.status().message().find("limit of 5"), absl::string_view::npos);
}

TEST(MovingAiScenarioTest, ParsesTabsAndSpacesWithPrintedTolerance) {
  auto problems = ParseMovingAiScenario(
      "version 1\n"
      "0\tmaps/dao/arena.map\t49\t49\t1\t13\t4\t12\t3.41421\n"
      "5\tmaps/x.map\t49\t49\t1\t2\t3\t4\t4786\n"
      "3 maps/bgmaps/AR0011SR.map 512 512 10 20 30 40 244.95\n"
      "9\tBoston_0_1024.map\t1024\t1024\t1\t2\t3\t4\t371.62950897\n");
  ASSERT_TRUE(problems.ok()) << problems.status();
  ASSERT_EQ(problems->size(), 4u);
  const ScenarioProblem& a = (*problems)[0];
  EXPECT_EQ(a.map, "maps/dao/arena.map");
  EXPECT_EQ(a.start_x, 1u);
  EXPECT_EQ(a.start_y, 13u);
  EXPECT_EQ(a.goal_x, 4u);
  EXPECT_EQ(a.goal_y, 12u);
  EXPECT_DOUBLE_EQ(a.optimal_length, 3.41421);
  EXPECT_NEAR(a.tolerance, 0.000005 + 1e-4, 1e-12);
  EXPECT_NEAR((*problems)[1].tolerance, 0.005 + 1e-4, 1e-12);  // 6 significant digits
  EXPECT_NEAR((*problems)[2].tolerance, 0.005 + 1e-4, 1e-12);  // 2 decimals
  EXPECT_EQ((*problems)[2].bucket, 3);
  EXPECT_NEAR((*problems)[3].tolerance, 5e-9 + 1e-4, 1e-12);
}

TEST(MovingAiScenarioTest, RejectsMalformedLines) {
  EXPECT_FALSE(ParseMovingAiScenario("").ok());
  EXPECT_FALSE(ParseMovingAiScenario("0\ta\t1\t1\t0\t0\t0\t0\t1\n").ok());
  auto bad = ParseMovingAiScenario("version 1\n0\ta\t1\t1\t0\t0\t0\t1\n");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("line 2"), absl::string_view::npos);
  EXPECT_FALSE(ParseMovingAiScenario("version 1\n0\ta\t1\t1\tx\t0\t0\t1\t1\n").ok());
}

// Found by tests/fuzz: an infinite or NaN optimal length (converting it to
// an int for the tolerance was undefined behaviour).
TEST(MovingAiScenTest, NonFiniteOptimalLengthsAreRefused) {
  for (const char* value : {"inf", "nan", "-1"}) {
    auto r = ParseMovingAiScenario(absl::StrCat("version 1\n0 a.map 8 8 1 1 2 2 ", value, "\n"));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_NE(r.status().message().find("line 2: optimal_length"), std::string::npos)
        << r.status();
  }
}

}  // namespace
}  // namespace wayfinder

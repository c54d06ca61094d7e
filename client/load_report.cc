// wayfinder-load's report (client/load_report.h): text and JSON.

#include "client/load_report.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/load_runner.h"
#include "client/load_stats.h"
#include "client/load_workload.h"

namespace wayfinder::load {
namespace {

std::string CodesJson(const std::map<int, uint64_t>& codes, std::string (*name)(int)) {
  std::vector<std::string> parts;
  for (const auto& [code, n] : codes)
    parts.push_back(absl::StrCat(JsonString(name(code)), ": ", n));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string PathStatusName(int s) { return v1::PathStatus_Name(static_cast<v1::PathStatus>(s)); }

std::string LatencyJson(const LatencyHistogram& h) {
  auto us = [](uint64_t ns) { return absl::StrFormat("%.1f", static_cast<double>(ns) / 1e3); };
  return absl::StrCat("{\"p50\": ", us(h.Percentile(50)), ", \"p90\": ", us(h.Percentile(90)),
                      ", \"p99\": ", us(h.Percentile(99)), ", \"p999\": ", us(h.Percentile(99.9)),
                      ", \"max\": ", us(h.max()),
                      ", \"mean\": ", absl::StrFormat("%.1f", h.mean() / 1e3),
                      ", \"min\": ", us(h.min()), "}");
}

std::string CodesText(const std::map<int, uint64_t>& codes, std::string (*name)(int)) {
  std::vector<std::string> parts;
  for (const auto& [code, n] : codes) parts.push_back(absl::StrCat(name(code), " ", n));
  return absl::StrJoin(parts, ", ");
}

std::string LatencyText(const LatencyHistogram& h) {
  auto f = [](uint64_t ns) { return Runner::FormatMicros(static_cast<double>(ns) / 1e3); };
  return absl::StrCat("p50 ", f(h.Percentile(50)), "  p90 ", f(h.Percentile(90)), "  p99 ",
                      f(h.Percentile(99)), "  p99.9 ", f(h.Percentile(99.9)), "  max ", f(h.max()),
                      "  mean ", Runner::FormatMicros(h.mean() / 1e3));
}

}  // namespace

std::string JsonReport(const ReportInput& in) {
  const RunConfig& c = in.config;
  const Runner& r = *in.runner;
  EntryStats all;
  for (const EntryStats& s : r.measured()) all.Merge(s);
  const double seconds = r.measured_seconds();
  auto qps = [&](uint64_t n) {
    return absl::StrFormat("%.1f", seconds > 0 ? static_cast<double>(n) / seconds : 0.0);
  };
  std::vector<std::string> maps;
  for (const Target& t : *in.targets) {
    maps.push_back(absl::StrCat(
        "{\"name\": ", JsonString(t.name), ", \"uploaded\": ", t.file.empty() ? "false" : "true",
        ", \"file\": ", JsonString(t.file), ", \"points\": ", t.points.size(),
        ", \"pairs\": ", t.pairs.size(), ", \"points_from\": ", JsonString(t.points_from), "}"));
  }
  std::vector<std::string> mix, entries;
  for (size_t i = 0; i < in.mix->size(); ++i) {
    const MixEntry& e = (*in.mix)[i];
    const EntryStats& s = r.measured()[i];
    mix.push_back(absl::StrCat("{\"entry\": ", JsonString(e.Label()),
                               ", \"weight\": ", absl::StrFormat("%g", e.weight), "}"));
    entries.push_back(absl::StrCat(
        "{\"entry\": ", JsonString(e.Label()), ", \"weight\": ", absl::StrFormat("%g", e.weight),
        ", \"requests\": ", s.requests(), ", \"ok\": ", s.ok, ", \"errors\": ", s.error_count(),
        ", \"errors_by_code\": ", CodesJson(s.errors, &CodeName), ", \"qps\": ", qps(s.requests()),
        ", \"latency_us\": ", LatencyJson(s.latency),
        ", \"path_status\": ", CodesJson(s.path_status, &PathStatusName), "}"));
  }
  std::string out = "{\n";
  absl::StrAppend(
      &out, "  \"config\": {\"server\": ", JsonString(in.server), ", \"mode\": \"",
      c.rate > 0 ? "open" : "closed", "\", \"concurrency\": ", c.rate > 0 ? 0 : c.concurrency,
      ", \"max_outstanding\": ", c.rate > 0 ? c.max_outstanding : 0,
      ", \"rate\": ", absl::StrFormat("%g", c.rate), ", \"arrivals\": \"",
      c.poisson ? "poisson" : "constant",
      "\", \"duration_s\": ", absl::StrFormat("%g", c.duration_s), ", \"requests\": ", c.requests,
      ", \"warmup_s\": ", absl::StrFormat("%g", c.warmup_s),
      ", \"timeout_s\": ", absl::StrFormat("%g", c.timeout_s), ", \"seed\": ", c.seed,
      ", \"channels\": ", in.channels, ", \"tls\": ", in.tls ? "true" : "false",
      ", \"sched_batch\": ", in.sched_batch ? "true" : "false",
      ",\n             \"maps\": [", absl::StrJoin(maps, ", "), "],\n             \"mix\": [",
      absl::StrJoin(mix, ", "), "]},\n");
  absl::StrAppend(&out, "  \"requests\": ", all.requests(), ",\n  \"ok\": ", all.ok,
                  ",\n  \"errors\": ", all.error_count(),
                  ",\n  \"errors_by_code\": ", CodesJson(all.errors, &CodeName),
                  ",\n  \"duration_s\": ", absl::StrFormat("%.3f", seconds),
                  ",\n  \"qps\": ", qps(all.requests()),
                  ",\n  \"latency_us\": ", LatencyJson(all.latency),
                  ",\n  \"path_status\": ", CodesJson(all.path_status, &PathStatusName),
                  ",\n  \"batch_query_errors_by_code\": ", CodesJson(all.query_errors, &CodeName),
                  ",\n  \"entries\": [\n    ", absl::StrJoin(entries, ",\n    "), "\n  ]",
                  ",\n  \"warmup_requests\": ", r.warmup_requests(),
                  ",\n  \"send_lag_max_us\": ", absl::StrFormat("%.1f", r.send_lag_max_us()),
                  ",\n  \"interrupted\": ", r.interrupted() ? "true" : "false", "\n}\n");
  return out;
}

std::string TextReport(const ReportInput& in) {
  const RunConfig& c = in.config;
  const Runner& r = *in.runner;
  EntryStats all;
  for (const EntryStats& s : r.measured()) all.Merge(s);
  const double seconds = r.measured_seconds();
  std::string out;
  absl::StrAppendFormat(
      &out, "server    %s, %s, warm-up %g s (%d requests)%s\n", in.server,
      c.rate > 0 ? absl::StrFormat("open loop at %g/s%s", c.rate, c.poisson ? " (poisson)" : "")
                 : absl::StrFormat("closed loop, %d outstanding", c.concurrency),
      c.warmup_s, r.warmup_requests(), r.interrupted() ? ", interrupted" : "");
  std::vector<std::string> maps;
  for (const Target& t : *in.targets) {
    maps.push_back(
        absl::StrFormat("%s (%s%s)", t.name, t.file.empty() ? "" : "uploaded, ",
                        !t.pairs.empty() ? absl::StrFormat("%d scenario pairs", t.pairs.size())
                        : t.points_from == "none"
                            ? std::string("getmap only")
                            : absl::StrFormat("%d points: %s", t.points.size(),
                                              absl::StrReplaceAll(t.points_from, {{"_", " "}}))));
  }
  absl::StrAppendFormat(&out, "maps      %s\n", absl::StrJoin(maps, ", "));
  double total_weight = 0;
  for (const MixEntry& e : *in.mix) total_weight += e.weight;
  std::vector<std::string> mix;
  for (const MixEntry& e : *in.mix) {
    mix.push_back(absl::StrFormat("%s %.0f%%", e.Label(), 100 * e.weight / total_weight));
  }
  absl::StrAppendFormat(&out, "mix       %s\n", absl::StrJoin(mix, ", "));
  absl::StrAppendFormat(&out, "requests  %d in %.2f s = %.1f/s; ok %d, errors %d\n", all.requests(),
                        seconds, seconds > 0 ? static_cast<double>(all.requests()) / seconds : 0.0,
                        all.ok, all.error_count());
  absl::StrAppendFormat(&out, "latency   %s\n", LatencyText(all.latency));
  if (!all.errors.empty()) {
    absl::StrAppendFormat(&out, "errors    %s\n", CodesText(all.errors, &CodeName));
  }
  if (!all.path_status.empty()) {
    absl::StrAppendFormat(&out, "paths     %s\n", CodesText(all.path_status, &PathStatusName));
  }
  if (!all.query_errors.empty()) {
    absl::StrAppendFormat(&out, "batch query errors  %s\n", CodesText(all.query_errors, &CodeName));
  }
  if (c.rate > 0) {
    absl::StrAppendFormat(&out, "send lag  max %s behind schedule\n",
                          Runner::FormatMicros(r.send_lag_max_us()));
  }
  if (in.mix->size() > 1) {
    int width = 0;
    for (const MixEntry& e : *in.mix) width = std::max(width, static_cast<int>(e.Label().size()));
    for (size_t i = 0; i < in.mix->size(); ++i) {
      const EntryStats& s = r.measured()[i];
      absl::StrAppendFormat(&out, "  %-*s %9d req %9.1f/s %6d err  %s\n", width,
                            (*in.mix)[i].Label(), s.requests(),
                            seconds > 0 ? static_cast<double>(s.requests()) / seconds : 0.0,
                            s.error_count(), LatencyText(s.latency));
    }
  }
  return out;
}

}  // namespace wayfinder::load

#ifndef WAYFINDER_CLIENT_LOAD_REPORT_H_
#define WAYFINDER_CLIENT_LOAD_REPORT_H_

// wayfinder-load's report of a run: the text tables, or one JSON object
// (--json; its fields are described in the usage text and only ever
// added).

#include <string>
#include <vector>

#include "client/load_runner.h"
#include "client/load_stats.h"
#include "client/load_workload.h"

namespace wayfinder::load {

// What a report reads: the run's settings, its workload and its runner
// (after Run).
struct ReportInput {
  std::string server;
  RunConfig config;
  int channels = 1;
  bool tls = false;
  const std::vector<Target>* targets;
  const std::vector<MixEntry>* mix;
  const Runner* runner;
  bool sched_batch = false;
};

std::string JsonReport(const ReportInput& in);
std::string TextReport(const ReportInput& in);

}  // namespace wayfinder::load

#endif  // WAYFINDER_CLIENT_LOAD_REPORT_H_

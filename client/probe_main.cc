// wayfinder-probe: exits 0 only when the server's health service reports
// SERVING. For Docker HEALTHCHECK, scripts and humans.

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "server address, host:port");
ABSL_FLAG(double, timeout, 2, "how long to wait for the answer, seconds");
ABSL_FLAG(std::string, service, "", "health service name (\"\" = the whole server)");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Exit 0 only when the Wayfinder server reports SERVING.\n"
      "Usage: wayfinder-probe [--server=HOST:PORT] [--timeout=SECONDS]");
  absl::ParseCommandLine(argc, argv);
  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::Seconds(absl::GetFlag(FLAGS_timeout));
  auto client = wayfinder::client::Client::Create(options);
  auto health = client->CheckHealth(absl::GetFlag(FLAGS_service));
  const std::string& server = options.target;
  if (!health.ok()) {
    std::printf("%s: unreachable: %s\n", server.c_str(), health.status().ToString().c_str());
    return 1;
  }
  switch (*health) {
    case wayfinder::client::Health::kServing:
      std::printf("%s: SERVING\n", server.c_str());
      return 0;
    case wayfinder::client::Health::kNotServing:
      std::printf("%s: NOT_SERVING\n", server.c_str());
      return 1;
    case wayfinder::client::Health::kServiceUnknown:
      std::printf("%s: SERVICE_UNKNOWN\n", server.c_str());
      return 1;
    default:
      std::printf("%s: UNKNOWN\n", server.c_str());
      return 1;
  }
}

// wayfinder-probe: exits 0 only when the server's health service reports
// SERVING. For Docker HEALTHCHECK, scripts and humans.

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "client/client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "server address, host:port");
ABSL_FLAG(double, timeout, 2, "how long to wait for the answer, seconds");
ABSL_FLAG(std::string, service, "", "health service name (\"\" = the whole server)");
ABSL_FLAG(std::string, token_file, "",
          "file whose first line is the bearer token (default: $WAYFINDER_TOKEN, if set)");
ABSL_FLAG(bool, tls, false, "connect with TLS, verifying the server with the system's roots");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA bundle to verify the server with (implies --tls)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for mutual TLS (implies --tls)");
ABSL_FLAG(std::string, tls_key, "", "PEM key of --tls_cert");

int main(int argc, char** argv) {
  // --help lists this program's own flags (Abseil matches them by file name).
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_helpshort_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "client/probe_main.cc");
  };
  usage_config.contains_help_flags = usage_config.contains_helpshort_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "Exit 0 only when the Wayfinder server reports SERVING.\n"
      "Usage: wayfinder-probe [--server=HOST:PORT] [--timeout=SECONDS]");
  absl::ParseCommandLine(argc, argv);
  wayfinder::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.default_deadline = absl::Seconds(absl::GetFlag(FLAGS_timeout));
  if (absl::Status st = wayfinder::client::ApplySecurityOptions(
          options, absl::GetFlag(FLAGS_token_file), absl::GetFlag(FLAGS_tls),
          absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
          absl::GetFlag(FLAGS_tls_key));
      !st.ok()) {
    std::fprintf(stderr, "wayfinder-probe: %s\n", std::string(st.message()).c_str());
    return 2;
  }
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

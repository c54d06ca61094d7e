#include "tests/support/throwaway_postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace wayfinder::testing {
namespace {

const char kScript[] = WAYFINDER_SOURCE_DIR "/scripts/throwaway-postgres.sh";

}  // namespace

absl::StatusOr<std::unique_ptr<ThrowawayPostgres>> ThrowawayPostgres::Start() {
  std::unique_ptr<ThrowawayPostgres> pg(new ThrowawayPostgres());
  char pattern[] = "/tmp/wayfinder-pg-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    return absl::FailedPreconditionError("cannot create a temporary directory");
  }
  pg->dir_ = pattern;
  // The cluster's owner (postgres, when the test runs as root) must reach it.
  ::chmod(pattern, 0755);
  // The watchdog: blocks until the write end closes (this object's
  // destructor, or the process's death), then destroys the cluster. The
  // write end is close-on-exec, so the server's processes never hold it.
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls (read, execl, _exit).
  const std::string cluster = std::string(pattern) + "/pg";
  const char* const command =
      "\"$0\" destroy \"$1\" >/dev/null 2>&1; rmdir \"$2\" 2>/dev/null";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return absl::FailedPreconditionError("pipe2 failed");
  const pid_t child = ::fork();
  if (child < 0) return absl::FailedPreconditionError("fork failed");
  if (child == 0) {
    ::close(fds[1]);
    char byte;
    while (::read(fds[0], &byte, 1) > 0) {
    }
    ::execl("/bin/bash", "bash", "-c", command, kScript, cluster.c_str(), pattern,
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[0]);
  pg->watchdog_ = child;
  pg->watchdog_fd_ = fds[1];

  absl::StatusOr<std::string> dsn = pg->Script(absl::StrCat("start '", pg->dir_, "/pg'"));
  if (!dsn.ok()) return dsn.status();
  // postgresql://postgres@127.0.0.1:PORT/postgres
  const size_t colon = dsn->rfind(':');
  const size_t slash = dsn->rfind('/');
  if (colon == std::string::npos || slash < colon ||
      !absl::SimpleAtoi(dsn->substr(colon + 1, slash - colon - 1), &pg->port_)) {
    return absl::FailedPreconditionError(absl::StrCat("unexpected DSN: ", *dsn));
  }
  return pg;
}

ThrowawayPostgres::~ThrowawayPostgres() {
  if (port_ != 0) (void)Script(absl::StrCat("destroy '", dir_, "/pg'"));
  if (watchdog_fd_ >= 0) ::close(watchdog_fd_);
  if (watchdog_ > 0) ::waitpid(watchdog_, nullptr, 0);
  ::rmdir(dir_.c_str());
}

absl::StatusOr<std::string> ThrowawayPostgres::Script(const std::string& args) const {
  const std::string command = absl::StrCat("'", kScript, "' ", args);
  FILE* out = ::popen(command.c_str(), "r");
  if (out == nullptr) return absl::FailedPreconditionError("popen failed: " + command);
  std::string text;
  char buffer[256];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), out)) > 0) text.append(buffer, n);
  const int rc = ::pclose(out);
  if (rc != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        command, " failed (exit ", WEXITSTATUS(rc),
        "); its message is on standard error above (are the PostgreSQL server binaries "
        "installed? scripts/install-deps.sh)"));
  }
  absl::StripAsciiWhitespace(&text);
  return text;
}

std::string ThrowawayPostgres::dsn(const std::string& database) const {
  return absl::StrCat("postgresql://postgres@127.0.0.1:", port_, "/", database);
}

absl::StatusOr<std::string> ThrowawayPostgres::NewSchema() {
  const std::string name = absl::StrCat("test_", ++schemas_);
  PGconn* conn = PQconnectdb(dsn().c_str());
  absl::Status status;
  if (PQstatus(conn) != CONNECTION_OK) {
    status = absl::FailedPreconditionError(PQerrorMessage(conn));
  } else {
    PGresult* result = PQexec(conn, absl::StrCat("CREATE SCHEMA ", name).c_str());
    if (PQresultStatus(result) != PGRES_COMMAND_OK) {
      status = absl::FailedPreconditionError(PQresultErrorMessage(result));
    }
    PQclear(result);
  }
  PQfinish(conn);
  if (!status.ok()) return status;
  return absl::StrCat(dsn(), "?options=-c%20search_path%3D", name);
}

absl::Status ThrowawayPostgres::Stop(bool immediate) {
  return Script(absl::StrCat("stop '", dir_, "/pg'", immediate ? " immediate" : "")).status();
}

absl::Status ThrowawayPostgres::Restart() {
  return Script(absl::StrCat("start '", dir_, "/pg' ", port_)).status();
}

namespace {

// Owns the shared cluster; gtest tears it down after the last test.
class SharedClusterEnvironment : public ::testing::Environment {
 public:
  ThrowawayPostgres* Get() {
    if (cluster_ == nullptr && !failed_) {
      absl::StatusOr<std::unique_ptr<ThrowawayPostgres>> started = ThrowawayPostgres::Start();
      if (started.ok()) {
        cluster_ = *std::move(started);
      } else {
        failed_ = true;
        error_ = started.status().ToString();
      }
    }
    if (cluster_ == nullptr) ADD_FAILURE() << "no throwaway PostgreSQL: " << error_;
    return cluster_.get();
  }
  void TearDown() override { cluster_.reset(); }

 private:
  std::unique_ptr<ThrowawayPostgres> cluster_;
  bool failed_ = false;
  std::string error_;
};

}  // namespace

ThrowawayPostgres* SharedThrowawayPostgres() {
  static SharedClusterEnvironment* const environment = [] {
    auto* env = new SharedClusterEnvironment();
    ::testing::AddGlobalTestEnvironment(env);  // gtest owns it
    return env;
  }();
  return environment->Get();
}

}  // namespace wayfinder::testing

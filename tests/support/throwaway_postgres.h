#ifndef WAYFINDER_TESTS_SUPPORT_THROWAWAY_POSTGRES_H_
#define WAYFINDER_TESTS_SUPPORT_THROWAWAY_POSTGRES_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace wayfinder::testing {

// A PostgreSQL cluster of the test's own: initdb + pg_ctl in a new
// temporary directory, on a free loopback port, through
// scripts/throwaway-postgres.sh (which runs it as the user postgres when
// the test runs as root). Tests take a fresh schema each (NewSchema: cheap)
// on one cluster per test binary.
//
// Always cleaned up: the destructor stops the server and removes the
// directory, and a watchdog process does the same when the test process
// dies any other way (a crash, kill -9, a ctest timeout).
//
// Not thread-safe.
class ThrowawayPostgres {
 public:
  // FAILED_PRECONDITION naming the cause (e.g. the PostgreSQL binaries are
  // missing: they are a dependency, scripts/install-deps.sh) if the
  // cluster cannot be started.
  static absl::StatusOr<std::unique_ptr<ThrowawayPostgres>> Start();
  ~ThrowawayPostgres();

  // postgresql://postgres@127.0.0.1:PORT/<database>
  std::string dsn(const std::string& database = "postgres") const;
  int port() const { return port_; }
  // A DSN whose tables live in a new, empty schema of the cluster's
  // database (its search_path): for a store, as good as a new database, and
  // far cheaper than CREATE DATABASE (which copies the template through
  // the WAL, fsynced: a second or more on a busy machine).
  absl::StatusOr<std::string> NewSchema();

  // Stops the server: a fast shutdown, or with `immediate` a crash
  // (pg_ctl -m immediate; recovered at the next start).
  absl::Status Stop(bool immediate = false);
  // Starts it again, on the same port.
  absl::Status Restart();

 private:
  ThrowawayPostgres() = default;
  // Runs the script with `args`; its standard output.
  absl::StatusOr<std::string> Script(const std::string& args) const;

  std::string dir_;  // the temporary directory; the cluster is in dir_/pg
  int port_ = 0;
  int schemas_ = 0;
  pid_t watchdog_ = -1;
  int watchdog_fd_ = -1;  // closing it (or dying) wakes the watchdog
};

// The test binary's one cluster, started at first use and destroyed after
// the last test (a gtest Environment); null, with the test failed, if it
// cannot start.
ThrowawayPostgres* SharedThrowawayPostgres();

}  // namespace wayfinder::testing

#endif  // WAYFINDER_TESTS_SUPPORT_THROWAWAY_POSTGRES_H_

#ifndef WAYFINDER_SERVER_STORAGE_PG_CONNECTION_H_
#define WAYFINDER_SERVER_STORAGE_PG_CONNECTION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace wayfinder::server::pg {

// A thin layer over libpq for PostgresStore: results and parameters in
// binary format (map snapshots are megabytes of bytea: no escaping), errors
// as absl::Status naming the database (never its password), and a small
// pool of connections that reconnects with capped exponential backoff.

// "postgresql://user@host:port/dbname" for a DSN (URI or key=value), without
// its password or other options; INVALID_ARGUMENT if libpq cannot parse it.
absl::StatusOr<std::string> DescribeDsn(const std::string& dsn);

// One result; rows and columns in binary format.
class Result {
 public:
  Result() = default;
  explicit Result(PGresult* result) : result_(result) {}
  Result(Result&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  Result& operator=(Result&& other) noexcept;
  ~Result();

  PGresult* get() const { return result_; }
  int rows() const;
  bool is_null(int row, int col) const;
  // The raw bytes of a text or bytea column.
  absl::string_view bytes(int row, int col) const;
  int64_t int8(int row, int col) const;  // a bigint column
  bool boolean(int row, int col) const;

 private:
  PGresult* result_ = nullptr;
};

// Statement parameters, all sent in binary format with their types.
class Params {
 public:
  Params& Int(int64_t value);
  Params& Text(absl::string_view value);
  Params& Bytes(std::string value);

  int size() const { return static_cast<int>(values_.size()); }
  const unsigned int* types() const { return types_.data(); }
  std::vector<const char*> values() const;
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  std::vector<unsigned int> types_;
  std::vector<std::string> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

// One open connection. Not thread-safe: one thread at a time (libpq's rule).
class Connection {
 public:
  Connection(PGconn* conn, std::string describe) : conn_(conn), describe_(std::move(describe)) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one statement. Errors: UNAVAILABLE when the connection is lost or
  // the server cannot serve (shutting down, starting, out of resources),
  // ABORTED for serialization failures and deadlocks, INTERNAL otherwise;
  // each names the database and the failing statement's first words.
  absl::StatusOr<Result> Exec(const char* sql, const Params& params = Params());
  // Runs one or more statements without parameters (migrations).
  absl::Status ExecScript(const char* sql);
  // Whether the connection is still usable.
  bool ok() const;
  PGconn* raw() const { return conn_; }
  const std::string& describe() const { return describe_; }

 private:
  absl::Status ErrorOf(PGresult* result, absl::string_view sql) const;

  PGconn* conn_;
  const std::string describe_;
};

// Connections to one database, handed to one thread at a time.
//
// A failed connection attempt starts a backoff (100 ms, doubling up to
// max_backoff): until it passes, Acquire fails at once with the last error
// instead of hammering a database that is down; the first attempt after it
// tries again. reachable() is the outcome of the last attempt or statement.
//
// Thread-safe.
class ConnectionPool {
 public:
  struct Options {
    int max_connections = 4;
    absl::Duration connect_timeout = absl::Seconds(5);
    absl::Duration max_backoff = absl::Seconds(5);
  };
  ConnectionPool(std::string dsn, std::string describe, const Options& options);
  ~ConnectionPool();

  // A connection for the caller alone; give it back with Release.
  // `fresh`: a new connection, never an idle one (after a reused one broke).
  absl::StatusOr<std::unique_ptr<Connection>> Acquire(bool fresh = false);
  // Keeps `conn` for reuse if it is still usable, else closes it. Records
  // reachability.
  void Release(std::unique_ptr<Connection> conn);
  // A new connection outside the pool (the LISTEN connection), under the
  // same backoff.
  absl::StatusOr<std::unique_ptr<Connection>> Connect();

  bool reachable() const { return reachable_.load(); }
  void set_reachable(bool reachable) { reachable_.store(reachable); }
  const std::string& describe() const { return describe_; }

 private:
  const std::string dsn_;
  const std::string describe_;
  const Options options_;
  std::atomic<bool> reachable_{true};
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle and leased, not Connect's
  absl::Time retry_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
};

// Holds a pooled connection for a scope; gives it back at its end.
class Lease {
 public:
  Lease(ConnectionPool& pool, std::unique_ptr<Connection> conn)
      : pool_(pool), conn_(std::move(conn)) {}
  ~Lease() {
    if (conn_ != nullptr) pool_.Release(std::move(conn_));
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  Connection* operator->() const { return conn_.get(); }
  Connection& operator*() const { return *conn_; }

 private:
  ConnectionPool& pool_;
  std::unique_ptr<Connection> conn_;
};

}  // namespace wayfinder::server::pg

#endif  // WAYFINDER_SERVER_STORAGE_PG_CONNECTION_H_

#include "server/storage/pg_connection.h"

#include <endian.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <libpq-fe.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace wayfinder::server::pg {
namespace {

// Type OIDs of the parameters sent (pg_type.h, stable across releases).
constexpr unsigned int kInt8Oid = 20;
constexpr unsigned int kTextOid = 25;
constexpr unsigned int kByteaOid = 17;

constexpr absl::Duration kFirstBackoff = absl::Milliseconds(100);

// libpq's messages end in a newline and may span lines.
std::string CleanMessage(const char* message) {
  std::string out = message != nullptr ? message : "";
  absl::StripAsciiWhitespace(&out);
  // One line: newlines and the tab libpq indents its hints with.
  std::string line;
  for (char c : out) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c != ' ' || line.empty() || line.back() != ' ') line.push_back(c);
  }
  return line;
}

// The server's notices ("relation already exists, skipping") go to the
// debug log, not to stderr.
void LogNotice(void* /*arg*/, const char* message) {
  spdlog::debug("PostgreSQL: {}", CleanMessage(message));
}

// The statement's first words, for error messages.
std::string Head(absl::string_view sql) {
  sql = absl::StripLeadingAsciiWhitespace(sql);
  const size_t end = std::min<size_t>(sql.size(), 40);
  std::string head(sql.substr(0, end));
  for (char& c : head) {
    if (c == '\n') c = ' ';
  }
  return end < sql.size() ? absl::StrCat(head, "...") : head;
}

}  // namespace

absl::StatusOr<std::string> DescribeDsn(const std::string& dsn) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(dsn.c_str(), &error);
  if (options == nullptr) {
    std::string message = CleanMessage(error);
    PQfreemem(error);
    return absl::InvalidArgumentError(
        absl::StrCat("--postgres_dsn: not a PostgreSQL connection string: ", message));
  }
  std::string host, hostaddr, port, dbname, user;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const absl::string_view keyword = o->keyword;
    if (keyword == "host") host = o->val;
    if (keyword == "hostaddr") hostaddr = o->val;
    if (keyword == "port") port = o->val;
    if (keyword == "dbname") dbname = o->val;
    if (keyword == "user") user = o->val;
  }
  PQconninfoFree(options);
  if (host.empty()) host = !hostaddr.empty() ? hostaddr : "localhost";
  return absl::StrCat("postgresql://", user.empty() ? "" : absl::StrCat(user, "@"), host,
                      port.empty() ? "" : absl::StrCat(":", port), "/",
                      dbname.empty() ? user : dbname);
}

Result& Result::operator=(Result&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = other.result_;
    other.result_ = nullptr;
  }
  return *this;
}

Result::~Result() {
  if (result_ != nullptr) PQclear(result_);
}

int Result::rows() const { return result_ != nullptr ? PQntuples(result_) : 0; }

bool Result::is_null(int row, int col) const { return PQgetisnull(result_, row, col) != 0; }

absl::string_view Result::bytes(int row, int col) const {
  return absl::string_view(PQgetvalue(result_, row, col),
                           static_cast<size_t>(PQgetlength(result_, row, col)));
}

int64_t Result::int8(int row, int col) const {
  if (is_null(row, col) || PQgetlength(result_, row, col) != 8) return 0;
  uint64_t be = 0;
  std::memcpy(&be, PQgetvalue(result_, row, col), 8);
  return static_cast<int64_t>(be64toh(be));
}

bool Result::boolean(int row, int col) const {
  return !is_null(row, col) && PQgetvalue(result_, row, col)[0] != 0;
}

Params& Params::Int(int64_t value) {
  const uint64_t be = htobe64(static_cast<uint64_t>(value));
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &be, 8);
  types_.push_back(kInt8Oid);
  values_.push_back(std::move(bytes));
  lengths_.push_back(8);
  formats_.push_back(1);
  return *this;
}

Params& Params::Text(absl::string_view value) {
  types_.push_back(kTextOid);
  values_.emplace_back(value);
  lengths_.push_back(static_cast<int>(value.size()));
  formats_.push_back(1);
  return *this;
}

Params& Params::Bytes(std::string value) {
  types_.push_back(kByteaOid);
  lengths_.push_back(static_cast<int>(value.size()));
  values_.push_back(std::move(value));
  formats_.push_back(1);
  return *this;
}

std::vector<const char*> Params::values() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const std::string& v : values_) out.push_back(v.data());
  return out;
}

Connection::~Connection() { PQfinish(conn_); }

bool Connection::ok() const { return PQstatus(conn_) == CONNECTION_OK; }

absl::Status Connection::ErrorOf(PGresult* result, absl::string_view sql) const {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state != nullptr ? state : "";
  const std::string message =
      CleanMessage(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  const std::string text = absl::StrCat("PostgreSQL store ", describe_, ": ", Head(sql), ": ",
                                        message.empty() ? CleanMessage(PQerrorMessage(conn_))
                                                        : message);
  // Class 08: connection exceptions; 57P0x: the server is shutting down or
  // starting; 53: out of resources (connections, memory, disk).
  if (!ok() || absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57P") ||
      absl::StartsWith(sqlstate, "53")) {
    return absl::UnavailableError(text);
  }
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::AbortedError(text);
  return absl::InternalError(text);
}

absl::StatusOr<Result> Connection::Exec(const char* sql, const Params& params) {
  const std::vector<const char*> values = params.values();
  Result result(PQexecParams(conn_, sql, params.size(), params.types(), values.data(),
                             params.lengths(), params.formats(), /*resultFormat=*/1));
  PGresult* raw = result.get();
  const ExecStatusType status = raw != nullptr ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return ErrorOf(raw, sql);
  return result;
}

absl::Status Connection::ExecScript(const char* sql) {
  Result result(PQexec(conn_, sql));
  PGresult* raw = result.get();
  const ExecStatusType status = raw != nullptr ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return ErrorOf(raw, sql);
  return absl::OkStatus();
}

ConnectionPool::ConnectionPool(std::string dsn, std::string describe, const Options& options)
    : dsn_(std::move(dsn)), describe_(std::move(describe)), options_(options) {}

ConnectionPool::~ConnectionPool() = default;

absl::StatusOr<std::unique_ptr<Connection>> ConnectionPool::Connect() {
  {
    absl::MutexLock lock(&mu_);
    if (absl::Now() < retry_at_) return last_error_;
  }
  // The DSN's own settings win (expand_dbname: later keywords override).
  const std::string timeout =
      absl::StrCat(std::max<int64_t>(1, absl::ToInt64Seconds(options_.connect_timeout)));
  // Keepalives: a database host that vanishes (no RST) is noticed within
  // seconds, not at the kernel's two hours.
  const char* keywords[] = {"connect_timeout", "application_name", "keepalives_idle",
                            "keepalives_interval", "keepalives_count", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), "wayfinder", "5", "2", "3", dsn_.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn != nullptr && PQstatus(conn) == CONNECTION_OK) {
    PQsetNoticeProcessor(conn, LogNotice, nullptr);
    absl::MutexLock lock(&mu_);
    backoff_ = absl::ZeroDuration();
    retry_at_ = absl::InfinitePast();
    reachable_ = true;
    return std::make_unique<Connection>(conn, describe_);
  }
  const std::string message =
      conn != nullptr ? CleanMessage(PQerrorMessage(conn)) : "out of memory";
  PQfinish(conn);
  absl::MutexLock lock(&mu_);
  backoff_ = std::min(options_.max_backoff,
                      backoff_ == absl::ZeroDuration() ? kFirstBackoff : backoff_ * 2);
  retry_at_ = absl::Now() + backoff_;
  last_error_ = absl::UnavailableError(absl::StrCat(
      "PostgreSQL store ", describe_, " is unreachable: ", message, " (retrying in ",
      absl::FormatDuration(backoff_), ")"));
  if (reachable_.exchange(false)) spdlog::error("{}", std::string(last_error_.message()));
  return last_error_;
}

absl::StatusOr<std::unique_ptr<Connection>> ConnectionPool::Acquire(bool fresh) {
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](ConnectionPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
          return !p->idle_.empty() || p->open_ < p->options_.max_connections;
        },
        this));
    if (!idle_.empty()) {
      std::unique_ptr<Connection> conn = std::move(idle_.back());
      idle_.pop_back();
      if (!fresh) return conn;
      --open_;  // closed below, replaced by a new one
      conn.reset();
    }
    ++open_;
  }
  absl::StatusOr<std::unique_ptr<Connection>> conn = Connect();
  if (!conn.ok()) {
    absl::MutexLock lock(&mu_);
    --open_;
  }
  return conn;
}

void ConnectionPool::Release(std::unique_ptr<Connection> conn) {
  const bool usable = conn->ok();
  reachable_ = usable;
  if (!usable) conn.reset();  // closed outside the lock
  absl::MutexLock lock(&mu_);
  if (usable) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
}

}  // namespace wayfinder::server::pg

#ifndef WAYFINDER_SERVER_REPLICATION_DEFERRED_STORE_H_
#define WAYFINDER_SERVER_REPLICATION_DEFERRED_STORE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/config.h"
#include "server/storage/map_store.h"

namespace wayfinder::server {

// A store that could not be opened at start yet (a shared database not
// reachable): the server starts anyway, listening and NOT_SERVING, and this
// opens the real store on first use that comes after its backoff, then
// forwards every call to it. Until then every call is UNAVAILABLE (the
// follower retries its load; writes are refused), and the backoff between
// attempts doubles from 100 ms to 5 s so that a flood of calls does not
// become a flood of connection attempts.
//
// Thread-safe.
class DeferredStore final : public MapStore {
 public:
  using Opener = std::function<absl::StatusOr<std::unique_ptr<MapStore>>()>;
  // `describe`: what Describe says until the store is open; `shared`: what
  // the real store will say (the follower needs it from the start).
  DeferredStore(Opener open, std::string describe, bool shared, absl::Status first_error);

  std::string Describe() const override;
  bool shared() const override { return shared_; }
  bool reachable() const override;

  absl::StatusOr<Contents> LoadAll() override;
  absl::Status Save(const storage::v1::StoredMap& stored, uint64_t previous,
                    bool over_map) override;
  absl::Status Delete(const storage::v1::Tombstone& tombstone, uint64_t previous) override;
  absl::Status AppendEdit(absl::string_view name, const storage::v1::StoredEdit& edit) override;
  absl::Status FoldTombstones(const std::vector<std::string>& names, uint64_t floor) override;
  void MoveAside(absl::string_view name, absl::string_view why) override;
  absl::StatusOr<Changes> ChangesSince(uint64_t position) override;
  absl::StatusOr<std::optional<LoadedMap>> LoadMap(absl::string_view name) override;
  absl::StatusOr<std::vector<storage::v1::StoredEdit>> EditsAfter(absl::string_view name,
                                                                  uint64_t version) override;
  absl::StatusOr<bool> AwaitChange(absl::Duration timeout) override;

 private:
  // The real store, opening it if the backoff allows; UNAVAILABLE if not
  // open.
  absl::StatusOr<MapStore*> Store();

  const Opener open_;
  const std::string describe_;
  const bool shared_;
  mutable absl::Mutex mu_;
  std::unique_ptr<MapStore> store_ ABSL_GUARDED_BY(mu_);  // set once, never reset
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  absl::Time next_try_ ABSL_GUARDED_BY(mu_);
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::Milliseconds(100);
};

// The store `config` chooses (OpenMapStore), except that a PostgreSQL
// database that cannot be reached is tried once and then left to a
// DeferredStore, so the server starts, listening and NOT_SERVING, instead
// of waiting for it before it listens.
absl::StatusOr<std::unique_ptr<MapStore>> OpenStoreOrDefer(const ServerConfig& config);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_REPLICATION_DEFERRED_STORE_H_

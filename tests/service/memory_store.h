#ifndef WAYFINDER_TESTS_SERVICE_MEMORY_STORE_H_
#define WAYFINDER_TESTS_SERVICE_MEMORY_STORE_H_

// A MapStore in memory that several in-process servers share, as replicas
// share PostgreSQL: versions checked per write (ABORTED with the stored
// version), a change feed with positions, notifications, an edit log with
// a compaction point, and a switch that makes it unreachable (an outage).
// For the replication tests; the real stores have their own contract tests.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/storage/map_store.h"

namespace wayfinder::testing {

class MemoryStore final : public server::MapStore {
 public:
  std::string Describe() const override { return "memory store"; }
  bool shared() const override { return true; }
  bool reachable() const override {
    absl::MutexLock lock(&mu_);
    return reachable_;
  }

  // Outage switch: while false every call returns UNAVAILABLE.
  void set_reachable(bool reachable) {
    absl::MutexLock lock(&mu_);
    reachable_ = reachable;
    cv_.SignalAll();
  }
  // While held, LoadMap and EditsAfter block (until released, or until the
  // store becomes unreachable): a replica's sync stuck on a slow database.
  void set_reads_held(bool held) {
    absl::MutexLock lock(&mu_);
    held_ = held;
    cv_.SignalAll();
  }
  // How many LoadMap / EditsAfter calls are blocked by set_reads_held now.
  int held_reads() const {
    absl::MutexLock lock(&mu_);
    return held_reads_;
  }
  // Whether writes send a notification (false: the feed is found by polling).
  void set_notify(bool notify) {
    absl::MutexLock lock(&mu_);
    notify_ = notify;
  }
  // Folds every logged batch of `name` into its snapshot (EditsAfter below
  // the new snapshot is then OUT_OF_RANGE).
  void Compact(const std::string& name) {
    absl::MutexLock lock(&mu_);
    Entry& e = entries_[name];
    if (e.map.has_value()) e.compacted_to = e.version;  // LoadMap still returns the batches
  }
  uint64_t version_of(const std::string& name) const {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(name);
    return it == entries_.end() ? 0 : it->second.version;
  }

  absl::StatusOr<Contents> LoadAll() override {
    absl::MutexLock lock(&mu_);
    if (!reachable_) return Down();
    Contents c;
    for (const auto& [name, e] : entries_) {
      if (e.deleted) {
        storage::v1::Tombstone& t = c.tombstones.emplace_back();
        t.set_name(name);
        t.set_version(e.version);
      } else if (e.map.has_value()) {
        c.maps.push_back(Loaded(e));
      }
    }
    c.position = position_;
    return c;
  }

  absl::Status Save(const storage::v1::StoredMap& stored, uint64_t previous,
                    bool over_map) override {
    absl::MutexLock lock(&mu_);
    if (!reachable_) return Down();
    Entry& e = entries_[stored.map().name()];
    if (e.version != previous || e.map.has_value() != over_map) {
      return Conflict(stored.map().name(), e.version);
    }
    e.version = stored.version();
    e.upload_version = stored.version();
    e.compacted_to = stored.version();
    e.deleted = false;
    e.map = stored;
    e.edits.clear();
    Changed(e);
    return absl::OkStatus();
  }
  absl::Status Delete(const storage::v1::Tombstone& tombstone, uint64_t previous) override {
    absl::MutexLock lock(&mu_);
    if (!reachable_) return Down();
    Entry& e = entries_[tombstone.name()];
    if (e.deleted || !e.map.has_value() || e.version != previous) {
      return Conflict(tombstone.name(), e.version);
    }
    e.version = tombstone.version();
    e.deleted = true;
    e.map.reset();
    e.edits.clear();
    Changed(e);
    return absl::OkStatus();
  }
  absl::Status AppendEdit(absl::string_view name, const storage::v1::StoredEdit& edit) override {
    absl::MutexLock lock(&mu_);
    if (!reachable_) return Down();
    Entry& e = entries_[std::string(name)];
    if (e.deleted || !e.map.has_value() || e.version + 1 != edit.version()) {
      return Conflict(name, e.version);
    }
    e.edits.push_back(edit);
    e.version = edit.version();
    Changed(e);
    return absl::OkStatus();
  }
  absl::Status FoldTombstones(const std::vector<std::string>&, uint64_t) override {
    return absl::OkStatus();
  }
  void MoveAside(absl::string_view, absl::string_view) override {}

  absl::StatusOr<Changes> ChangesSince(uint64_t position) override {
    absl::MutexLock lock(&mu_);
    if (!reachable_) return Down();
    Changes changes;
    for (const auto& [name, e] : entries_) {
      if (e.position <= position) continue;
      changes.names.push_back({.name = name,
                               .version = e.version,
                               .deleted = e.deleted,
                               .upload_version = e.upload_version});
    }
    changes.position = position_;
    return changes;
  }
  absl::StatusOr<std::optional<LoadedMap>> LoadMap(absl::string_view name) override {
    absl::MutexLock lock(&mu_);
    WaitWhileHeld();
    if (!reachable_) return Down();
    ++load_maps_;
    auto it = entries_.find(std::string(name));
    if (it == entries_.end() || it->second.deleted || !it->second.map.has_value()) {
      return std::optional<LoadedMap>();
    }
    return std::optional<LoadedMap>(Loaded(it->second));
  }
  absl::StatusOr<std::vector<storage::v1::StoredEdit>> EditsAfter(absl::string_view name,
                                                                  uint64_t version) override {
    absl::MutexLock lock(&mu_);
    WaitWhileHeld();
    if (!reachable_) return Down();
    auto it = entries_.find(std::string(name));
    if (it == entries_.end() || it->second.deleted) {
      return absl::NotFoundError(absl::StrCat("no map \"", name, "\""));
    }
    const Entry& e = it->second;
    if (version < e.compacted_to || version > e.version) {
      return absl::OutOfRangeError(absl::StrCat("batches above ", version, " not logged"));
    }
    std::vector<storage::v1::StoredEdit> out;
    for (const auto& edit : e.edits) {
      if (edit.version() > version) out.push_back(edit);
    }
    return out;
  }
  absl::StatusOr<bool> AwaitChange(absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    if (!reachable_) return Down();
    const uint64_t seen = notified_;
    const absl::Time until = absl::Now() + timeout;
    while (notified_ == seen && reachable_) {
      if (cv_.WaitWithDeadline(&mu_, until)) break;
    }
    if (!reachable_) return Down();
    return notified_ != seen;
  }

  // How many whole maps replicas loaded (LoadMap), for the incremental test.
  uint64_t load_maps() const {
    absl::MutexLock lock(&mu_);
    return load_maps_;
  }

 private:
  struct Entry {
    uint64_t version = 0;
    uint64_t upload_version = 0;
    uint64_t compacted_to = 0;  // EditsAfter below this: OUT_OF_RANGE
    bool deleted = false;
    std::optional<storage::v1::StoredMap> map;  // the upload
    std::vector<storage::v1::StoredEdit> edits;  // batches above the upload
    uint64_t position = 0;
  };

  static absl::Status Down() { return absl::UnavailableError("memory store: unreachable"); }
  static absl::Status Conflict(absl::string_view name, uint64_t stored) {
    return server::StoreConflictError(
        absl::StrCat("map \"", name, "\" is at version ", stored, " in the store"), stored);
  }
  static LoadedMap Loaded(const Entry& e) {
    LoadedMap m;
    m.stored = *e.map;
    m.edits = e.edits;
    return m;
  }
  void WaitWhileHeld() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++held_reads_;
    while (held_ && reachable_) cv_.Wait(&mu_);
    --held_reads_;
  }
  void Changed(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e.position = ++position_;
    if (notify_) {
      ++notified_;
      cv_.SignalAll();
    }
  }

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool reachable_ ABSL_GUARDED_BY(mu_) = true;
  bool notify_ ABSL_GUARDED_BY(mu_) = true;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  int held_reads_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t position_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t notified_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t load_maps_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace wayfinder::testing

#endif  // WAYFINDER_TESTS_SERVICE_MEMORY_STORE_H_

#include "server/flow_field_cache.h"

#include <utility>

#include "absl/status/status.h"
#include "core/cell_rect.h"
#include "server/map_edits.h"
#include "server/map_registry.h"

namespace wayfinder::server {

absl::StatusOr<FlowFieldCache::Field> FlowFieldCache::GetOrCompute(const FlowFieldKey& key,
                                                                   absl::Time deadline,
                                                                   const Compute& compute,
                                                                   bool* hit,
                                                                   size_t expected_bytes) {
  *hit = true;
  std::shared_ptr<Slot> slot;
  {
    absl::MutexLock lock(&mu_);
    for (;;) {
      auto it = slots_.find(key);
      if (it == slots_.end()) break;
      std::shared_ptr<Slot> found = it->second;
      if (found->stale) {
        // Carried over for a repair this caller cannot make: drop it.
        lru_.erase(found->lru);
        bytes_ -= found->bytes;
        slots_.erase(it);
        break;
      }
      if (!found->computing) {  // stored (failed slots are erased at once)
        ++stats_.hits;
        lru_.splice(lru_.begin(), lru_, found->lru);
        return found->field;
      }
      // Someone is computing it: wait for that instead of computing it too.
      ++stats_.coalesced;
      const bool finished = mu_.AwaitWithDeadline(
          absl::Condition(+[](Slot* s) { return !s->computing; }, found.get()), deadline);
      if (!finished) {
        return absl::DeadlineExceededError(
            "the call's deadline passed while another request computed the same flow field");
      }
      if (found->field != nullptr) return found->field;
      // That computation failed; look again (and maybe compute it here).
    }
    slot = std::make_shared<Slot>();
    slot->computing = true;
    slots_.emplace(key, slot);
    ++stats_.misses;
    // Room first (a field that would not be kept at all makes none): the
    // fields evicted now give the computation their arrays.
    if (expected_bytes <= capacity_bytes_) EvictLocked(expected_bytes);
  }

  *hit = false;
  absl::StatusOr<FlowField> result = compute();

  absl::MutexLock lock(&mu_);
  slot->computing = false;
  // The slot is still ours: nobody inserts over a key that is present and
  // nobody erases a slot that is computing.
  auto it = slots_.find(key);
  if (!result.ok()) {
    slots_.erase(it);
    return result.status();
  }
  slot->field = memory_->Share(*std::move(result));
  return StoreLocked(key, slot);
}

FlowFieldCache::Field FlowFieldCache::StoreLocked(const FlowFieldKey& key,
                                                  const std::shared_ptr<Slot>& slot) {
  auto it = slots_.find(key);
  slot->bytes = (slot->repairable != nullptr ? slot->repairable->MemoryBytes()
                                             : slot->field->MemoryBytes()) +
                sizeof(FlowFieldKey) + key.map.size() + key.goals.size() * sizeof(uint32_t) +
                key.area_costs.size();
  if (slot->bytes > capacity_bytes_ || (keep_ && !keep_(key))) {
    // Larger than the whole cache, or its map version was replaced or
    // deleted meanwhile: served, not kept.
    slots_.erase(it);
    return slot->field;
  }
  lru_.push_front(&it->first);
  slot->lru = lru_.begin();
  bytes_ += slot->bytes;
  EvictLocked();
  return slot->field;
}

absl::StatusOr<FlowFieldCache::Field> FlowFieldCache::GetOrComputeRepairable(
    const FlowFieldKey& key, absl::Time deadline, const ComputeRepairable& compute,
    const RepairFn& repair, bool* hit) {
  *hit = true;
  std::shared_ptr<Slot> slot;
  bool repairing = false;
  {
    absl::MutexLock lock(&mu_);
    for (;;) {
      auto it = slots_.find(key);
      if (it == slots_.end()) break;
      std::shared_ptr<Slot> found = it->second;
      if (found->stale) {
        // Carried over from the previous version: this call repairs it,
        // out of the LRU meanwhile (others wait as for a computation).
        found->stale = false;
        found->computing = true;
        lru_.erase(found->lru);
        bytes_ -= found->bytes;
        slot = found;
        repairing = true;
        break;
      }
      if (!found->computing) {
        ++stats_.hits;
        lru_.splice(lru_.begin(), lru_, found->lru);
        return found->field;
      }
      ++stats_.coalesced;
      const bool finished = mu_.AwaitWithDeadline(
          absl::Condition(+[](Slot* s) { return !s->computing; }, found.get()), deadline);
      if (!finished) {
        return absl::DeadlineExceededError(
            "the call's deadline passed while another request computed the same flow field");
      }
      if (found->field != nullptr && !found->stale) return found->field;
    }
    if (!repairing) {
      slot = std::make_shared<Slot>();
      slot->computing = true;
      slots_.emplace(key, slot);
      ++stats_.misses;
    }
  }

  if (repairing) {
    // Readers of the old version may still hold the field (through
    // `field`, which shares `repairable`'s count): then repair a copy.
    slot->field = nullptr;
    std::shared_ptr<RepairableFlowField> r = std::move(slot->repairable);
    if (r.use_count() > 1) r = std::make_shared<RepairableFlowField>(*r);
    const absl::Status st = repair(*r, slot->changed);
    absl::MutexLock lock(&mu_);
    slot->computing = false;
    slot->changed = {};
    if (st.ok()) {
      ++stats_.repairs;
      *hit = false;
      slot->repairable = std::move(r);
      slot->field = Field(slot->repairable, &slot->repairable->field);
      return StoreLocked(key, slot);
    }
    // A goal blocked now, or the deadline: compute afresh below, so the
    // caller gets the fresh computation's answer.
    ++stats_.repair_failures;
    slot = std::make_shared<Slot>();
    slot->computing = true;
    slots_.insert_or_assign(key, slot);
    ++stats_.misses;
  }

  *hit = false;
  absl::StatusOr<RepairableFlowField> result = compute();

  absl::MutexLock lock(&mu_);
  slot->computing = false;
  if (!result.ok()) {
    slots_.erase(key);
    return result.status();
  }
  slot->repairable = std::make_shared<RepairableFlowField>(*std::move(result));
  slot->field = Field(slot->repairable, &slot->repairable->field);
  return StoreLocked(key, slot);
}

void FlowFieldCache::NoteUpdate(absl::string_view map, uint64_t old_version,
                                uint64_t new_version, const CellRect& changed) {
  absl::MutexLock lock(&mu_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    const FlowFieldKey& key = **it;
    if (key.map != map || key.version > old_version) {
      ++it;
      continue;
    }
    auto found = slots_.find(key);
    std::shared_ptr<Slot> slot = found->second;
    FlowFieldKey next = key;
    next.version = new_version;
    const bool carry = key.version == old_version && new_version == old_version + 1 &&
                       slot->repairable != nullptr && !slots_.contains(next);
    slots_.erase(found);
    if (!carry) {
      bytes_ -= slot->bytes;
      it = lru_.erase(it);
      continue;
    }
    slot->stale = true;
    slot->changed = CellRect::Union(slot->changed, changed);
    auto moved = slots_.emplace(std::move(next), slot).first;
    *it = &moved->first;
    ++it;
  }
}

void FlowFieldCache::EvictLocked(size_t room) {
  while (bytes_ + room > capacity_bytes_ && !lru_.empty()) {
    const FlowFieldKey* oldest = lru_.back();
    auto it = slots_.find(*oldest);
    bytes_ -= it->second->bytes;
    lru_.pop_back();
    slots_.erase(it);
    ++stats_.evictions;
  }
}

void FlowFieldCache::Forget(absl::string_view map, uint64_t through_version) {
  absl::MutexLock lock(&mu_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    const FlowFieldKey& key = **it;
    if (key.map != map || key.version > through_version) {
      ++it;
      continue;
    }
    auto slot = slots_.find(key);
    bytes_ -= slot->second->bytes;
    it = lru_.erase(it);
    slots_.erase(slot);
  }
}

void FlowFieldCache::Follow(MapRegistry& registry) {
  registry.AddChangeListener([this](const MapRegistry::Change& change) {
    // An edit batch carries the previous version's repairable fields over
    // (repaired on their next request); then a commit retires the versions
    // below it, a delete the last one too.
    if (change.kind == MapRegistry::Change::Kind::kUpdate && change.snapshot != nullptr &&
        change.snapshot->change != nullptr) {
      NoteUpdate(change.name, change.version - 1, change.version, change.snapshot->change->cells);
    }
    Forget(change.name, change.snapshot != nullptr ? change.version - 1 : change.version);
  });
  keep_ = [&registry](const FlowFieldKey& key) {
    const std::shared_ptr<const MapSnapshot> current = registry.Get(key.map);
    return current != nullptr && current->version == key.version;
  };
}

FlowFieldCache::Stats FlowFieldCache::stats() const {
  absl::MutexLock lock(&mu_);
  Stats s = stats_;
  s.entries = lru_.size();
  s.bytes = bytes_;
  s.memory = memory_->stats();
  return s;
}

}  // namespace wayfinder::server

#include "server/flow_field_cache.h"

#include <utility>

#include "absl/status/status.h"
#include "server/map_registry.h"

namespace wayfinder::server {

absl::StatusOr<FlowFieldCache::Field> FlowFieldCache::GetOrCompute(const FlowFieldKey& key,
                                                                   absl::Time deadline,
                                                                   const Compute& compute,
                                                                   bool* hit) {
  *hit = true;
  std::shared_ptr<Slot> slot;
  {
    absl::MutexLock lock(&mu_);
    for (;;) {
      auto it = slots_.find(key);
      if (it == slots_.end()) break;
      std::shared_ptr<Slot> found = it->second;
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
  slot->field = std::make_shared<const FlowField>(*std::move(result));
  slot->bytes = slot->field->MemoryBytes() + sizeof(FlowFieldKey) + key.map.size() +
                key.goals.size() * sizeof(uint32_t);
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

void FlowFieldCache::EvictLocked() {
  while (bytes_ > capacity_bytes_ && !lru_.empty()) {
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
    // A commit retires the versions below it, a delete the last one too.
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
  return s;
}

}  // namespace wayfinder::server

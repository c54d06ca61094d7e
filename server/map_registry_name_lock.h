#ifndef WAYFINDER_SERVER_MAP_REGISTRY_NAME_LOCK_H_
#define WAYFINDER_SERVER_MAP_REGISTRY_NAME_LOCK_H_

// Internal to MapRegistry (map_registry.cc, map_registry_remote.cc).

#include <memory>
#include <string>

#include "server/map_registry.h"

namespace wayfinder::server {

// Holds the writer lock of one name (see NameWriter).
class MapRegistry::NameLock {
 public:
  NameLock(MapRegistry& registry, absl::string_view name) : registry_(registry), name_(name) {
    {
      absl::MutexLock lock(&registry_.writers_mu_);
      std::unique_ptr<NameWriter>& slot = registry_.writers_[name_];
      if (slot == nullptr) slot = std::make_unique<NameWriter>();
      ++slot->users;
      writer_ = slot.get();  // stable: the entry stays while users > 0
    }
    writer_->mu.Lock();
  }
  ~NameLock() {
    writer_->mu.Unlock();
    absl::MutexLock lock(&registry_.writers_mu_);
    if (--writer_->users == 0) registry_.writers_.erase(name_);
  }
  NameLock(const NameLock&) = delete;
  NameLock& operator=(const NameLock&) = delete;

 private:
  MapRegistry& registry_;
  const std::string name_;
  NameWriter* writer_ = nullptr;
};

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_MAP_REGISTRY_NAME_LOCK_H_

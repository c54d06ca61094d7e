#include "server/flow_memory.h"

#include <algorithm>
#include <utility>

namespace wayfinder::server {
namespace {

bool HasArrays(const FlowField& f) {
  return f.directions.capacity() > 0 || f.distances.capacity() > 0;
}

size_t ArrayBytes(const FlowField& f) {
  return f.directions.capacity() + f.distances.capacity() * sizeof(float);
}

// Only the arrays of `f`, emptied (their capacity kept).
FlowField ArraysOf(FlowField& f) {
  FlowField arrays;
  arrays.directions = std::move(f.directions);
  arrays.distances = std::move(f.distances);
  arrays.directions.clear();
  arrays.distances.clear();
  return arrays;
}

}  // namespace

FlowMemory::Lease::~Lease() {
  if (owner_ != nullptr && scratch_ != nullptr) owner_->Return(std::move(scratch_));
}

std::shared_ptr<FlowMemory> FlowMemory::Create(size_t idle_bytes) {
  return std::shared_ptr<FlowMemory>(new FlowMemory(idle_bytes));
}

FlowMemory::Lease FlowMemory::Acquire(size_t cells) {
  std::unique_ptr<FlowFieldScratch> scratch;
  FlowField arrays;
  {
    absl::MutexLock lock(&mu_);
    ++stats_.leased_scratch;
    if (!idle_.empty()) {
      scratch = std::move(idle_.back());
      idle_.pop_back();
      bytes_ -= idle_sizes_.back();
      idle_sizes_.pop_back();
      ++stats_.scratch_reused;
    }
    // The smallest spare with room for `cells`, if it is not more than
    // twice too large (the field keeps the arrays' whole capacity).
    size_t best = spares_.size();
    for (size_t i = 0; i < spares_.size(); ++i) {
      const FlowField& f = spares_[i];
      const size_t room = std::min(f.directions.capacity(), f.distances.capacity());
      if (room < cells || room > 2 * cells) continue;
      if (best == spares_.size() || ArrayBytes(f) < ArrayBytes(spares_[best])) best = i;
    }
    if (best != spares_.size()) {
      bytes_ -= ArrayBytes(spares_[best]);
      arrays = std::move(spares_[best]);
      spares_.erase(spares_.begin() + static_cast<std::ptrdiff_t>(best));
      ++stats_.arrays_reused;
    }
  }
  if (scratch == nullptr) scratch = std::make_unique<FlowFieldScratch>();
  if (HasArrays(arrays)) scratch->recycled = std::move(arrays);
  return Lease(shared_from_this(), std::move(scratch));
}

void FlowMemory::Return(std::unique_ptr<FlowFieldScratch> scratch) {
  // Arrays the computation did not take wait with the other spares, so
  // that an idle scratch holds only its own state.
  FlowField left = ArraysOf(scratch->recycled);
  scratch->recycled = FlowField();
  const size_t size = scratch->MemoryBytes();
  Garbage garbage;  // declared first: destroyed after the lock is let go
  absl::MutexLock lock(&mu_);
  --stats_.leased_scratch;
  if (HasArrays(left)) {
    bytes_ += ArrayBytes(left);
    spares_.push_back(std::move(left));
  }
  idle_.push_back(std::move(scratch));
  idle_sizes_.push_back(size);
  bytes_ += size;
  while (idle_.size() > kMaxIdleScratch) {
    bytes_ -= idle_sizes_.front();
    garbage.scratch.push_back(std::move(idle_.front()));
    idle_.erase(idle_.begin());
    idle_sizes_.erase(idle_sizes_.begin());
    ++stats_.freed_over_bound;
  }
  FitLocked(garbage);
}  // `garbage` is freed after the lock is let go

std::shared_ptr<const FlowField> FlowMemory::Share(FlowField field) {
  return std::shared_ptr<const FlowField>(
      new FlowField(std::move(field)),
      [self = shared_from_this()](const FlowField* f) { self->ReturnArrays(f); });
}

void FlowMemory::ReturnArrays(const FlowField* field) {
  // The field was created non-const by Share; only its arrays are kept.
  FlowField arrays = ArraysOf(*const_cast<FlowField*>(field));
  delete field;
  if (!HasArrays(arrays)) return;
  Garbage garbage;
  {
    absl::MutexLock lock(&mu_);
    bytes_ += ArrayBytes(arrays);
    spares_.push_back(std::move(arrays));
    FitLocked(garbage);
  }
}

void FlowMemory::FitLocked(Garbage& garbage) {
  while (spares_.size() > kMaxSpareFields) {
    bytes_ -= ArrayBytes(spares_.front());
    garbage.arrays.push_back(std::move(spares_.front()));
    spares_.erase(spares_.begin());
    ++stats_.freed_over_bound;
  }
  // The newest idle scratch is kept whatever its size (so one stream of
  // computations always reuses its scratch); the bound is for the rest.
  auto over = [&] { return bytes_ - (idle_.empty() ? 0 : idle_sizes_.back()) > idle_bound_; };
  while (over() && (!spares_.empty() || idle_.size() > 1)) {
    if (!spares_.empty()) {
      auto largest = std::max_element(
          spares_.begin(), spares_.end(),
          [](const FlowField& a, const FlowField& b) { return ArrayBytes(a) < ArrayBytes(b); });
      bytes_ -= ArrayBytes(*largest);
      garbage.arrays.push_back(std::move(*largest));
      spares_.erase(largest);
    } else {
      bytes_ -= idle_sizes_.front();
      garbage.scratch.push_back(std::move(idle_.front()));
      idle_.erase(idle_.begin());
      idle_sizes_.erase(idle_sizes_.begin());
    }
    ++stats_.freed_over_bound;
  }
}

void FlowMemory::Trim() {
  Garbage garbage;
  absl::MutexLock lock(&mu_);
  garbage.scratch = std::move(idle_);
  garbage.arrays = std::move(spares_);
  idle_.clear();
  idle_sizes_.clear();
  spares_.clear();
  bytes_ = 0;
}

FlowMemory::Stats FlowMemory::stats() const {
  absl::MutexLock lock(&mu_);
  Stats s = stats_;
  s.idle_scratch = idle_.size();
  s.spare_fields = spares_.size();
  s.idle_bytes = bytes_;
  return s;
}

}  // namespace wayfinder::server

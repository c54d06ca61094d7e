#ifndef WAYFINDER_CORE_SPARSE_NODES_H_
#define WAYFINDER_CORE_SPARSE_NODES_H_

// The nodes of one short search on a raster, kept in a hash table rather
// than an array over every cell of the map.
//
// Why: the server answers short searches (a few hundred expansions) on
// gRPC's callback threads, each with its own thread-local scratch. An array
// of g-values and parents over every cell costs each such thread 16-24
// bytes a cell of the largest map it ever searched (64-96 MiB at 2048 x
// 2048), for searches that touch a few thousand cells. The table costs
// what the search touches.
//
// Hand-written rather than absl::flat_hash_map, whose clear() frees a large
// table: a short search would pay an allocation and the table's
// initialisation each time. Open addressing with linear probing, a power
// of two long, at most half full; a slot is in use iff its node's
// `generation` equals the table's, so a new search empties it by bumping
// the generation.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace wayfinder {

// The table's memory, kept in a search's scratch between searches.
// `Node` has a uint32_t `generation` member.
template <typename Node>
struct SparseNodeSlots {
  struct Slot {
    uint32_t cell;
    Node node;
  };
  std::vector<Slot> slots;
  uint32_t generation = 0;

  size_t MemoryBytes() const { return slots.capacity() * sizeof(Slot); }
};

// One search's view of the table: emptied on construction. Touch(cell)
// finds or inserts a node (inserted as `fresh`, with the table's
// generation); At(cell) finds a node touched before in this search.
// References stay valid until the next Touch (which may grow the table).
template <typename Node>
class SparseNodes {
 public:
  using Slot = typename SparseNodeSlots<Node>::Slot;

  // `max_nodes`: how many nodes the search can touch at most (the table is
  // sized for them and never grows), or 0 when unknown (it doubles when
  // half full).
  SparseNodes(SparseNodeSlots<Node>& table, uint64_t max_nodes) : t_(table) {
    size_t slots = std::max<size_t>(t_.slots.size(), 1024);
    while (slots < 2 * max_nodes) slots *= 2;
    if (t_.slots.size() < slots) Reset(slots);
    if (++t_.generation == 0) Reset(t_.slots.size());
    Size();
  }

  Node& Touch(uint32_t cell, const Node& fresh) {
    for (size_t i = Home(cell);; i = (i + 1) & mask_) {
      Slot& slot = t_.slots[i];
      if (slot.node.generation != t_.generation) {
        if (2 * (used_ + 1) > t_.slots.size()) {
          Grow();
          return Touch(cell, fresh);
        }
        ++used_;
        slot.cell = cell;
        slot.node = fresh;
        slot.node.generation = t_.generation;
        return slot.node;
      }
      if (slot.cell == cell) return slot.node;
    }
  }

  // Every slot on the probe path before `cell`'s is in use (nothing is
  // erased within a search) and holds another cell, so the first slot
  // holding `cell` is this search's.
  Node& At(uint32_t cell) const {
    for (size_t i = Home(cell);; i = (i + 1) & mask_) {
      Slot& slot = t_.slots[i];
      if (slot.cell == cell) return slot.node;
    }
  }

 private:
  // An empty table of `slots` (a power of two), generation 1.
  void Reset(size_t slots) {
    t_.slots.assign(slots, Slot{});
    for (Slot& slot : t_.slots) slot.node.generation = 0;
    t_.generation = 1;
  }
  void Size() {
    mask_ = t_.slots.size() - 1;
    shift_ = 64 - std::countr_zero(t_.slots.size());
  }
  // Twice the slots, this search's nodes moved over.
  void Grow() {
    std::vector<Slot> old;
    old.swap(t_.slots);
    const uint32_t generation = t_.generation;
    Reset(2 * old.size());
    t_.generation = generation;
    Size();
    for (const Slot& slot : old) {
      if (slot.node.generation != generation) continue;
      size_t i = Home(slot.cell);
      while (t_.slots[i].node.generation == generation) i = (i + 1) & mask_;
      t_.slots[i] = slot;
    }
  }
  // Fibonacci hashing: the top bits of the cell times 2^64 / phi.
  size_t Home(uint32_t cell) const {
    return static_cast<size_t>((uint64_t{cell} * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  SparseNodeSlots<Node>& t_;
  size_t used_ = 0;
  size_t mask_ = 0;
  int shift_ = 0;
};

}  // namespace wayfinder

#endif  // WAYFINDER_CORE_SPARSE_NODES_H_

#ifndef WAYFINDER_PROTO_INLINE_ARENA_H_
#define WAYFINDER_PROTO_INLINE_ARENA_H_

// A protobuf Arena whose first block lives inside this object: messages
// created on it (a call's request and response, with all their
// submessages) cost no heap allocation until they outgrow the block.
// Shared by the server's message allocator (server/arena_allocator.h) and
// wayfinder-load's calls, each of which creates its two messages once.

#include <cstddef>

#include <google/protobuf/arena.h>

namespace wayfinder {

template <size_t kFirstBlock>
class InlineArena {
 public:
  InlineArena() : arena_(Options(first_block_)) {}
  InlineArena(const InlineArena&) = delete;
  InlineArena& operator=(const InlineArena&) = delete;

  template <typename Message>
  Message* Create() {
    return google::protobuf::Arena::CreateMessage<Message>(&arena_);
  }

 private:
  static google::protobuf::ArenaOptions Options(char* block) {
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = kFirstBlock;
    return options;
  }

  // Before arena_: it is handed to the arena's constructor.
  alignas(16) char first_block_[kFirstBlock];
  google::protobuf::Arena arena_;
};

}  // namespace wayfinder

#endif  // WAYFINDER_PROTO_INLINE_ARENA_H_

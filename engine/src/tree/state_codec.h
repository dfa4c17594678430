// The pieces a node kind's state fields are read and written with
// (node_kinds.h; the layout is in tree_state.cc and docs/TREES.md).
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_STATE_CODEC_H_
#define UTILITYD_ENGINE_SRC_TREE_STATE_CODEC_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace utilityd::engine::internal {

// Writers into a buffer sized beforehand (kMaxEntry bytes per entry,
// node_kinds.h).
inline char* PutVarint(char* at, uint64_t v) {
  while (v >= 0x80) {
    *at++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *at++ = static_cast<char>(v);
  return at;
}

inline char* PutTime(char* at, int64_t ms) {
  return PutVarint(
      at, (static_cast<uint64_t>(ms) << 1) ^ static_cast<uint64_t>(ms >> 63));
}

class Reader {
 public:
  explicit Reader(absl::string_view b)
      : at_(b.data()), end_(b.data() + b.size()) {}
  bool done() const { return at_ == end_; }
  bool Varint(uint64_t* v) {
    if (at_ != end_ && (static_cast<uint8_t>(*at_) & 0x80) == 0) {
      *v = static_cast<uint8_t>(*at_++);  // one byte: the usual case
      return true;
    }
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == end_) return false;
      const uint8_t byte = static_cast<uint8_t>(*at_++);
      if (shift == 63 && byte > 1) return false;
      *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  // The next `n` bytes, as they are.
  bool Bytes(size_t n, const char** p) {
    if (static_cast<size_t>(end_ - at_) < n) return false;
    *p = at_;
    at_ += n;
    return true;
  }
  bool Time(int64_t* ms) {
    uint64_t z;
    if (!Varint(&z)) return false;
    *ms = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
    return true;
  }

 private:
  const char* at_;
  const char* end_;
};

// Whether a node's fields decoded and fit the node.
enum class Fit { kOk, kMalformed, kOutOfRange };

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_STATE_CODEC_H_

// The tree state that travels in the agent's snapshot (docs/TREES.md):
//
//   byte 0      version (1)
//   bytes 1-2   set tag: FNV-1a 64 of the set's name, low 16 bits
//   bytes 3-4   revision tag: FNV-1a 64 of the revision, low 16 bits
//   bytes 5-6   check: SplitMix64's finaliser over bytes 0-4 and the
//               entries, 8 bytes at a time (little-endian), low 16 bits
//   entries     for each node that holds something, in id order:
//               varint gap to the previous id, then the node's fields
//
// Varints are LEB128; times are zigzag varints of milliseconds of game time.
// A tree with nothing running and no cooldown pending encodes as empty.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/random.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kHeader = 7;

uint64_t Fnv1a(absl::string_view bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Up to 8 bytes at `p` as a little-endian number (the same on every
// machine): whole words, then 4, 2 and 1 bytes.
template <typename Word>
uint64_t Load(const char* p) {
  Word w;
  std::memcpy(&w, p, sizeof w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  if constexpr (sizeof w == 8) w = __builtin_bswap64(w);
  if constexpr (sizeof w == 4) w = __builtin_bswap32(w);
  if constexpr (sizeof w == 2) w = __builtin_bswap16(w);
#endif
  return w;
}

uint64_t LoadLittle(const char* p, size_t n) {
  if (n == 8) return Load<uint64_t>(p);
  uint64_t v = 0;
  int shift = 0;
  if (n & 4) {
    v = Load<uint32_t>(p);
    p += 4;
    shift = 32;
  }
  if (n & 2) {
    v |= Load<uint16_t>(p) << shift;
    p += 2;
    shift += 16;
  }
  if (n & 1) v |= static_cast<uint64_t>(static_cast<uint8_t>(*p)) << shift;
  return v;
}

// The checksum of the header's first five bytes and the entries: their
// bytes 8 at a time (the last chunk zero-padded), each chunk mixed in by
// SplitMix64's finaliser.
uint16_t Check(absl::string_view state) {
  uint64_t h = state.size();
  auto mix = [&h](const char* p, size_t n) {
    h = SplitMix64::Mix(h ^ LoadLittle(p, n)) + 0x9E3779B97F4A7C15ull;
  };
  mix(state.data(), 5);
  const char* p = state.data() + kHeader;
  size_t left = state.size() - kHeader;
  for (; left >= 8; left -= 8, p += 8) mix(p, 8);
  if (left > 0) mix(p, left);
  return static_cast<uint16_t>(h);
}

uint16_t GetTag(absl::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                               (static_cast<uint8_t>(b[at + 1]) << 8));
}

// Writers into a buffer sized beforehand (kMaxEntry bytes per entry).
char* PutVarint(char* at, uint64_t v) {
  while (v >= 0x80) {
    *at++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *at++ = static_cast<char>(v);
  return at;
}

char* PutTime(char* at, int64_t ms) {
  return PutVarint(
      at, (static_cast<uint64_t>(ms) << 1) ^ static_cast<uint64_t>(ms >> 63));
}

// The most an entry takes: a gap (node ids are below 2^32: 5 bytes) and the
// longest fields (a cooldown's flags and a time: 1 + 10 bytes; a utility
// node's three 32-bit fields: 15 bytes).
constexpr size_t kMaxEntry = 5 + 15;

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

// Composites that remember which child runs (their state's `index`).
bool KeepsRunningChild(NodeKind kind) {
  return kind == NodeKind::kSequence || kind == NodeKind::kFallback ||
         kind == NodeKind::kReactiveSequence ||
         kind == NodeKind::kReactiveFallback || kind == NodeKind::kUtility;
}

bool HoldsSomething(const CompiledNode& n, const NodeState& s) {
  // (The node is read only for a time held by a node not running.)
  return s.running || (s.has_time && n.kind == NodeKind::kCooldown);
}

// Reads one node's fields; false when they do not decode or do not fit.
enum class Fit { kOk, kMalformed, kOutOfRange };

Fit ReadFields(const CompiledNode& n, Reader& r, NodeState* s) {
  uint64_t a = 0, b = 0, c = 0;
  // The bits of the node's children (parallel and utility masks).
  auto all = [&n] {
    return n.child_count >= 64 ? ~0ull : (1ull << n.child_count) - 1;
  };
  s->running = true;
  switch (n.kind) {
    case NodeKind::kSequence:
    case NodeKind::kFallback:
    case NodeKind::kReactiveSequence:
    case NodeKind::kReactiveFallback:
      if (!r.Varint(&a)) return Fit::kMalformed;
      if (a >= n.child_count) return Fit::kOutOfRange;
      s->index = static_cast<uint32_t>(a);
      return Fit::kOk;
    case NodeKind::kParallel:
      if (!r.Varint(&a) || !r.Varint(&b)) return Fit::kMalformed;
      if ((a & ~all()) || (b & ~all()) || (a & b)) return Fit::kOutOfRange;
      s->mask_a = static_cast<uint32_t>(a);
      s->mask_b = static_cast<uint32_t>(b);
      return Fit::kOk;
    case NodeKind::kRepeat:
    case NodeKind::kRetry:
      if (!r.Varint(&a)) return Fit::kMalformed;
      if (a >= static_cast<uint64_t>(n.count)) return Fit::kOutOfRange;
      s->index = static_cast<uint32_t>(a);
      return Fit::kOk;
    case NodeKind::kCooldown:
      if (!r.Varint(&a)) return Fit::kMalformed;
      if (a == 0 || a > 3) return Fit::kOutOfRange;
      s->running = (a & 1) != 0;
      s->has_time = (a & 2) != 0;
      if (s->has_time && !r.Time(&s->millis)) return Fit::kMalformed;
      return Fit::kOk;
    case NodeKind::kTimeout:
      s->has_time = true;
      return r.Time(&s->millis) ? Fit::kOk : Fit::kMalformed;
    case NodeKind::kUtility:
      if (!r.Varint(&a) || !r.Varint(&b) || !r.Varint(&c)) {
        return Fit::kMalformed;
      }
      if (a >= n.child_count || b > 0xffff || (c & ~all())) {
        return Fit::kOutOfRange;
      }
      s->index = static_cast<uint32_t>(a);
      s->target = static_cast<uint32_t>(b);
      s->mask_a = static_cast<uint32_t>(c);
      return Fit::kOk;
    case NodeKind::kInverter:
    case NodeKind::kForceSuccess:
    case NodeKind::kForceFailure:
    case NodeKind::kAction:
      return Fit::kOk;
    case NodeKind::kCondition:
      return Fit::kOutOfRange;  // a condition never runs
  }
  return Fit::kOutOfRange;
}

char* WriteFields(const CompiledNode& n, const NodeState& s, char* at) {
  switch (n.kind) {
    case NodeKind::kSequence:
    case NodeKind::kFallback:
    case NodeKind::kReactiveSequence:
    case NodeKind::kReactiveFallback:
    case NodeKind::kRepeat:
    case NodeKind::kRetry:
      return PutVarint(at, s.index);
    case NodeKind::kParallel:
      return PutVarint(PutVarint(at, s.mask_a), s.mask_b);
    case NodeKind::kCooldown:
      at = PutVarint(at, (s.running ? 1u : 0u) | (s.has_time ? 2u : 0u));
      return s.has_time ? PutTime(at, s.millis) : at;
    case NodeKind::kTimeout:
      return PutTime(at, s.millis);
    case NodeKind::kUtility:
      return PutVarint(PutVarint(PutVarint(at, s.index), s.target), s.mask_a);
    default:
      return at;
  }
}

// Fills the header of `out` (kHeader bytes reserved, then the entries).
void WriteHeader(const CompiledTree& tree, std::string* out) {
  (*out)[0] = static_cast<char>(kVersion);
  (*out)[1] = static_cast<char>(tree.name_tag & 0xff);
  (*out)[2] = static_cast<char>(tree.name_tag >> 8);
  (*out)[3] = static_cast<char>(tree.revision_tag & 0xff);
  (*out)[4] = static_cast<char>(tree.revision_tag >> 8);
  const uint16_t check = Check(*out);
  (*out)[5] = static_cast<char>(check & 0xff);
  (*out)[6] = static_cast<char>(check >> 8);
}

}  // namespace

std::string EncodeTreeState(const CompiledBehaviourSet& set,
                            absl::Span<const NodeState> states) {
  std::string out;
  EncodeTreeState(set, states, &out);
  return out;
}

void EncodeTreeState(const CompiledBehaviourSet& set,
                     absl::Span<const NodeState> states, std::string* out) {
  const CompiledTree& tree = *set.tree();
  // Room for a few entries to start with, grown as needed; cut to what was
  // written.
  out->resize(kHeader + std::min<size_t>(states.size(), 8) * kMaxEntry);
  size_t at = kHeader;
  int previous = -1;
  for (size_t id = 0; id < states.size(); ++id) {
    const NodeState& s = states[id];
    if (!s.running && !s.has_time) continue;  // most nodes: idle
    const CompiledNode& n = tree.nodes[id];
    if (!HoldsSomething(n, s)) continue;
    if (out->size() - at < kMaxEntry) out->resize(2 * out->size());
    char* p = out->data() + at;
    p = PutVarint(p,
                  static_cast<uint64_t>(static_cast<int>(id) - previous - 1));
    p = WriteFields(n, s, p);
    at = static_cast<size_t>(p - out->data());
    previous = static_cast<int>(id);
  }
  if (previous < 0) {
    out->clear();
    return;
  }
  out->resize(at);
  WriteHeader(tree, out);
}

std::string SealTreeState(const CompiledBehaviourSet& set,
                          absl::string_view entries) {
  std::string out(kHeader, '\0');
  out.append(entries.data(), entries.size());
  WriteHeader(*set.tree(), &out);
  return out;
}

uint16_t TreeStateTag(absl::string_view name_or_revision) {
  return static_cast<uint16_t>(Fnv1a(name_or_revision));
}

TreeReset DecodeTreeState(const CompiledBehaviourSet& set,
                          absl::string_view bytes,
                          std::vector<NodeState>* states) {
  const CompiledTree& tree = *set.tree();
  // All idle: NodeState{} is all zero bytes.
  static_assert(std::is_trivially_copyable_v<NodeState>);
  auto clear = [&] {
    states->resize(tree.nodes.size());
    std::memset(static_cast<void*>(states->data()), 0,
                states->size() * sizeof(NodeState));
  };
  clear();
  if (bytes.empty()) return TreeReset::kNone;
  auto fail = [&](TreeReset reason) {
    clear();
    return reason;
  };
  if (bytes.size() < kHeader + 1) return fail(TreeReset::kMalformed);
  if (static_cast<uint8_t>(bytes[0]) != kVersion) {
    return fail(TreeReset::kVersion);
  }
  if (GetTag(bytes, 1) != tree.name_tag) {
    return fail(TreeReset::kOtherSet);
  }
  if (GetTag(bytes, 3) != tree.revision_tag) {
    return fail(TreeReset::kOtherRevision);
  }
  if (GetTag(bytes, 5) != Check(bytes)) {
    return fail(TreeReset::kCorrupt);
  }
  Reader r(bytes.substr(kHeader));
  uint64_t id = ~0ull;  // so that the first gap lands on id `gap`
  while (!r.done()) {
    uint64_t gap;
    if (!r.Varint(&gap)) return fail(TreeReset::kMalformed);
    if (gap >= tree.nodes.size() || id + 1 + gap >= tree.nodes.size()) {
      return fail(TreeReset::kOutOfRange);
    }
    id = id + 1 + gap;
    NodeState& s = (*states)[id];
    const CompiledNode& n = tree.nodes[id];
    switch (ReadFields(n, r, &s)) {
      case Fit::kOk:
        break;
      case Fit::kMalformed:
        return fail(TreeReset::kMalformed);
      case Fit::kOutOfRange:
        return fail(TreeReset::kOutOfRange);
    }
    // A running node hangs under a running parent (decoded already: a
    // parent's id is lower), on the child its parent runs where the parent
    // keeps one.
    if (!s.running || n.parent < 0) continue;
    const NodeState& p = (*states)[n.parent];
    if (!p.running) return fail(TreeReset::kOutOfRange);
    const CompiledNode& pn = tree.nodes[n.parent];
    if (KeepsRunningChild(pn.kind) &&
        tree.child(pn, static_cast<int>(p.index)) != static_cast<int>(id)) {
      return fail(TreeReset::kOutOfRange);
    }
  }
  return TreeReset::kNone;
}

const char* TreeResetName(TreeReset reason) {
  switch (reason) {
    case TreeReset::kNone:
      return "";
    case TreeReset::kMalformed:
      return "malformed";
    case TreeReset::kVersion:
      return "version";
    case TreeReset::kOtherSet:
      return "other_set";
    case TreeReset::kOtherRevision:
      return "other_revision";
    case TreeReset::kCorrupt:
      return "corrupt";
    case TreeReset::kOutOfRange:
      return "out_of_range";
  }
  return "?";
}

}  // namespace utilityd::engine

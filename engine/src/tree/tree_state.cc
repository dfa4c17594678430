// The tree state that travels in the agent's snapshot (docs/TREES.md):
//
//   byte 0      version (1)
//   bytes 1-2   set tag: FNV-1a 64 of the set's name, low 16 bits
//   bytes 3-4   revision tag: FNV-1a 64 of the revision, low 16 bits
//   bytes 5-6   check: SplitMix64's finaliser over bytes 0-4 and the
//               entries, 8 bytes at a time (little-endian), low 16 bits
//   entries     for each node that holds something, in id order:
//               varint gap to the previous id, then the node's fields
//               (its kind's Write and Read, node_kinds.h)
//
// Varints are LEB128; times are zigzag varints of milliseconds of game time.
// A tree with nothing running, no cooldown pending and no place or outcome
// kept (sequence_with_memory, run_once) encodes as empty.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "tree/node_kinds.h"
#include "tree/state_codec.h"
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

using internal::Fit;
using internal::kMaxEntry;
using internal::NodeKinds;
using internal::PutVarint;
using internal::Reader;

size_t KindIndex(const CompiledNode& n) { return static_cast<size_t>(n.kind); }

bool HoldsSomething(const CompiledNode& n, const NodeState& s) {
  // (The node is read only for a time held by a node not running.)
  return s.running ||
         (s.has_time && internal::kTraits[KindIndex(n)].keeps_time_idle) ||
         (s.kept && internal::kTraits[KindIndex(n)].keeps_place_idle);
}

// Fills the header of `out` (kHeader bytes reserved, then the entries).
void WriteHeader(const CompiledTree& tree, std::string* out) {
  (*out)[0] = static_cast<char>(kVersion);
  (*out)[1] = static_cast<char>(tree.name_tag & 0xff);
  (*out)[2] = static_cast<char>(tree.name_tag >> 8);
  (*out)[3] = static_cast<char>(tree.shape_tag & 0xff);
  (*out)[4] = static_cast<char>(tree.shape_tag >> 8);
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
    if (!s.running && !s.has_time && !s.kept) continue;  // most: idle
    const CompiledNode& n = tree.nodes[id];
    if (!HoldsSomething(n, s)) continue;
    if (out->size() - at < kMaxEntry) out->resize(2 * out->size());
    char* p = out->data() + at;
    p = PutVarint(p,
                  static_cast<uint64_t>(static_cast<int>(id) - previous - 1));
    p = internal::VisitNodeKind(
        n.kind, [&](auto k) { return decltype(k)::Write(n, s, p); });
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
  if (GetTag(bytes, 3) != tree.shape_tag) {
    return fail(TreeReset::kOtherShape);
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
    s.running = true;  // a node's fields may say otherwise
    const Fit fit = internal::VisitNodeKind(
        n.kind, [&](auto k) { return decltype(k)::Read(n, r, &s); });
    switch (fit) {
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
    if (internal::kTraits[KindIndex(pn)].keeps_running_child &&
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
    case TreeReset::kOtherShape:
      return "other_shape";
    case TreeReset::kCorrupt:
      return "corrupt";
    case TreeReset::kOutOfRange:
      return "out_of_range";
  }
  return "?";
}

}  // namespace utilityd::engine

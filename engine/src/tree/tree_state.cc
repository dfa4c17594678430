// The tree state that travels in the agent's snapshot (docs/TREES.md):
//
//   byte 0      version (1)
//   bytes 1-2   set tag: FNV-1a 64 of the set's name, low 16 bits
//   bytes 3-4   revision tag: FNV-1a 64 of the revision, low 16 bits
//   bytes 5-6   check: SplitMix64's finaliser over bytes 0-4 and the
//               entries, 8 bytes at a time (little-endian), low 16 bits
//   variables   only in a tree whose scripts assign variables: a varint
//               count of the variables that are not 0, then for each, in
//               order, a varint gap to the previous one's index and its
//               value: a varint whose low bit is 0 for a whole number
//               (zigzag in the bits above), 1 for the 8 bytes of an IEEE
//               double (little-endian) that follow
//   entries     for each node that holds something, in id order:
//               varint gap to the previous id, then the node's fields
//               (its kind's Write and Read, node_kinds.h)
//
// Varints are LEB128; times are zigzag varints of milliseconds of game time.
// A tree with nothing running, no cooldown pending, no place or outcome
// kept (sequence_with_memory, run_once) and every variable 0 encodes as
// empty.
#include <algorithm>
#include <cmath>
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

// A variable's value: a whole number as a zigzag varint shifted left by
// one, anything else as 1 and the double's 8 bytes.
constexpr size_t kMaxVariable = 5 + 10;
char* PutValue(char* at, double v) {
  if (v == std::trunc(v) && std::fabs(v) < 0x1p52) {
    const auto i = static_cast<int64_t>(v);
    const uint64_t z =
        (static_cast<uint64_t>(i) << 1) ^ static_cast<uint64_t>(i >> 63);
    return PutVarint(at, z << 1);
  }
  at = PutVarint(at, 1);
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 8; ++i) *at++ = static_cast<char>(bits >> (8 * i));
  return at;
}

bool ReadValue(Reader& r, double* v) {
  uint64_t z;
  if (!r.Varint(&z)) return false;
  if ((z & 1) == 0) {
    z >>= 1;
    *v = static_cast<double>(static_cast<int64_t>(z >> 1) ^
                             -static_cast<int64_t>(z & 1));
    return true;
  }
  const char* p = nullptr;
  if (z != 1 || !r.Bytes(8, &p)) return false;
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) {
    bits |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  }
  std::memcpy(v, &bits, sizeof bits);
  return true;
}

// Reads the variables section into `variables` (may be null).
TreeReset ReadVariables(const CompiledTree& tree, Reader& r,
                        std::vector<double>* variables) {
  uint64_t count;
  if (!r.Varint(&count)) return TreeReset::kMalformed;
  if (count > tree.variables.size()) return TreeReset::kOutOfRange;
  uint64_t index = ~0ull;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t gap;
    double v;
    if (!r.Varint(&gap) || !ReadValue(r, &v)) return TreeReset::kMalformed;
    if (gap >= tree.variables.size() ||
        index + 1 + gap >= tree.variables.size()) {
      return TreeReset::kOutOfRange;
    }
    index = index + 1 + gap;
    if (variables != nullptr) (*variables)[index] = v;
  }
  return TreeReset::kNone;
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
                            absl::Span<const NodeState> states,
                            absl::Span<const double> variables) {
  std::string out;
  EncodeTreeState(set, states, variables, &out);
  return out;
}

void EncodeTreeState(const CompiledBehaviourSet& set,
                     absl::Span<const NodeState> states,
                     absl::Span<const double> variables, std::string* out) {
  const CompiledTree& tree = *set.tree();
  // Room for a few entries to start with, grown as needed; cut to what was
  // written.
  const size_t vars = variables.size();
  out->resize(kHeader + std::min<size_t>(states.size(), 8) * kMaxEntry +
              (tree.variables.empty() ? 0 : 5 + vars * kMaxVariable));
  size_t at = kHeader;
  bool holds = false;
  if (!tree.variables.empty()) {
    size_t set_count = 0;
    for (double v : variables) set_count += v != 0;
    char* p = PutVarint(out->data() + at, set_count);
    int previous = -1;
    for (size_t i = 0; i < vars; ++i) {
      if (variables[i] == 0) continue;  // -0 too
      p = PutVarint(p,
                    static_cast<uint64_t>(static_cast<int>(i) - previous - 1));
      p = PutValue(p, variables[i]);
      previous = static_cast<int>(i);
    }
    at = static_cast<size_t>(p - out->data());
    holds = set_count > 0;
  }
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
  if (previous < 0 && !holds) {
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
                          std::vector<NodeState>* states,
                          std::vector<double>* variables) {
  const CompiledTree& tree = *set.tree();
  // All idle: NodeState{} is all zero bytes.
  static_assert(std::is_trivially_copyable_v<NodeState>);
  auto clear = [&] {
    states->resize(tree.nodes.size());
    std::memset(static_cast<void*>(states->data()), 0,
                states->size() * sizeof(NodeState));
    if (variables != nullptr) variables->assign(tree.variables.size(), 0.0);
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
  if (!tree.variables.empty()) {
    const TreeReset v = ReadVariables(tree, r, variables);
    if (v != TreeReset::kNone) return fail(v);
  }
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

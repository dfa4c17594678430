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

// The checksum of the header's first five bytes and the entries: their
// bytes 8 at a time, each chunk mixed in by SplitMix64's finaliser. The
// same on every machine (chunks are assembled byte by byte).
uint16_t Check(absl::string_view state) {
  uint64_t h = state.size();
  auto mix = [&h](absl::string_view part) {
    const auto* p = reinterpret_cast<const uint8_t*>(part.data());
    size_t at = 0;
    for (; at + 8 <= part.size(); at += 8) {  // whole chunks: one load each
      uint64_t chunk = 0;
      for (size_t k = 0; k < 8; ++k) {
        chunk |= static_cast<uint64_t>(p[at + k]) << (8 * k);
      }
      h = SplitMix64::Mix(h ^ chunk) + 0x9E3779B97F4A7C15ull;
    }
    if (at < part.size()) {
      uint64_t chunk = 0;
      for (size_t k = 0; at + k < part.size(); ++k) {
        chunk |= static_cast<uint64_t>(p[at + k]) << (8 * k);
      }
      h = SplitMix64::Mix(h ^ chunk) + 0x9E3779B97F4A7C15ull;
    }
  };
  mix(state.substr(0, 5));
  mix(state.substr(kHeader));
  return static_cast<uint16_t>(h);
}

uint16_t GetTag(absl::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                               (static_cast<uint8_t>(b[at + 1]) << 8));
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutTime(std::string* out, int64_t ms) {
  PutVarint(out,
            (static_cast<uint64_t>(ms) << 1) ^ static_cast<uint64_t>(ms >> 63));
}

class Reader {
 public:
  explicit Reader(absl::string_view b) : b_(b) {}
  bool done() const { return at_ == b_.size(); }
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == b_.size()) return false;
      const uint8_t byte = static_cast<uint8_t>(b_[at_++]);
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
  absl::string_view b_;
  size_t at_ = 0;
};

bool HoldsSomething(const CompiledNode& n, const NodeState& s) {
  return s.running || (n.kind == NodeKind::kCooldown && s.has_time);
}

// Reads one node's fields; false when they do not decode or do not fit.
enum class Fit { kOk, kMalformed, kOutOfRange };

Fit ReadFields(const CompiledNode& n, Reader& r, NodeState* s) {
  uint64_t a = 0, b = 0, c = 0;
  const uint64_t all =
      n.child_count >= 64 ? ~0ull : (1ull << n.child_count) - 1;
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
      if ((a & ~all) || (b & ~all) || (a & b)) return Fit::kOutOfRange;
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
      if (a >= n.child_count || b > 0xffff || (c & ~all)) {
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

void WriteFields(const CompiledNode& n, const NodeState& s, std::string* out) {
  switch (n.kind) {
    case NodeKind::kSequence:
    case NodeKind::kFallback:
    case NodeKind::kReactiveSequence:
    case NodeKind::kReactiveFallback:
    case NodeKind::kRepeat:
    case NodeKind::kRetry:
      PutVarint(out, s.index);
      break;
    case NodeKind::kParallel:
      PutVarint(out, s.mask_a);
      PutVarint(out, s.mask_b);
      break;
    case NodeKind::kCooldown:
      PutVarint(out, (s.running ? 1u : 0u) | (s.has_time ? 2u : 0u));
      if (s.has_time) PutTime(out, s.millis);
      break;
    case NodeKind::kTimeout:
      PutTime(out, s.millis);
      break;
    case NodeKind::kUtility:
      PutVarint(out, s.index);
      PutVarint(out, s.target);
      PutVarint(out, s.mask_a);
      break;
    default:
      break;
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
  out->clear();
  const CompiledTree& tree = *set.tree();
  int previous = -1;
  for (size_t id = 0; id < states.size(); ++id) {
    const CompiledNode& n = tree.nodes[id];
    if (!HoldsSomething(n, states[id])) continue;
    if (out->empty()) out->resize(kHeader);
    PutVarint(out, static_cast<uint64_t>(static_cast<int>(id) - previous - 1));
    WriteFields(n, states[id], out);
    previous = static_cast<int>(id);
  }
  if (!out->empty()) WriteHeader(tree, out);
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
  states->assign(tree.nodes.size(), NodeState{});
  if (bytes.empty()) return TreeReset::kNone;
  auto fail = [&](TreeReset reason) {
    states->assign(tree.nodes.size(), NodeState{});
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
    switch (ReadFields(tree.nodes[id], r, &(*states)[id])) {
      case Fit::kOk:
        break;
      case Fit::kMalformed:
        return fail(TreeReset::kMalformed);
      case Fit::kOutOfRange:
        return fail(TreeReset::kOutOfRange);
    }
  }
  // A running node hangs under a running parent, on the child its parent
  // runs where the parent keeps one.
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    if (!(*states)[i].running) continue;
    const CompiledNode& n = tree.nodes[i];
    const NodeState& p = (*states)[n.parent];
    if (!p.running) return fail(TreeReset::kOutOfRange);
    const CompiledNode& pn = tree.nodes[n.parent];
    const bool keeps_index =
        pn.kind == NodeKind::kSequence || pn.kind == NodeKind::kFallback ||
        pn.kind == NodeKind::kReactiveSequence ||
        pn.kind == NodeKind::kReactiveFallback || pn.kind == NodeKind::kUtility;
    if (keeps_index &&
        tree.child(pn, static_cast<int>(p.index)) != static_cast<int>(i)) {
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

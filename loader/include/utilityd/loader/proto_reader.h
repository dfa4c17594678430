// Reads YAML or JSON text into any protobuf message, following the protobuf
// JSON mapping (field names in snake_case or lowerCamelCase, enums by name or
// number, "NaN"/"Infinity" for floats, null for unset) with one addition:
// enum values are also accepted in short lowercase form without the enum's
// prefix, so `compensation: per_consideration` means
// COMPENSATION_PER_CONSIDERATION.
//
//   utilityd::v1::BehaviourSet set;
//   std::vector<ReadIssue> issues;
//   if (!ReadMessage(text, "arena_mage.yaml", &set, &issues)) {
//     for (const ReadIssue& i : issues) std::cerr << i.ToString() << "\n";
//   }
//
// Every problem is reported, with the field path and the line in the file.
// Documents are bounded (nodes, depth, size) so alias bombs cannot expand.
#ifndef UTILITYD_LOADER_PROTO_READER_H_
#define UTILITYD_LOADER_PROTO_READER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace utilityd::loader {

// One problem in a document.
struct ReadIssue {
  std::string source;  // file name or other label
  int line = 0;        // 1-based; 0 when unknown
  int column = 0;      // 1-based; 0 when unknown
  std::string path;    // field path, e.g. "actions[2].considerations[0].curve"
  std::string message;

  // Returns "source:line:column: path: message" (parts that are empty or 0
  // left out).
  std::string ToString() const;
};

// Limits on a document, beyond which reading stops with an issue.
struct ReadLimits {
  size_t max_bytes = 4 << 20;    // 4 MiB of text
  size_t max_nodes = 1'000'000;  // after alias expansion
  int max_depth = 64;
};

// Where each field path of a document was written: line and column, 1-based.
struct TextPosition {
  int line = 0;
  int column = 0;
};
using PositionMap = absl::flat_hash_map<std::string, TextPosition>;

// Parses `text` (YAML, of which JSON is a subset) into `message`, which is
// cleared first. Returns true when there were no issues; otherwise appends
// them to `issues` (message may then be partly filled). When `positions` is
// given, records where each field path (e.g. "actions[2].weight") was
// written, so later validation can point at lines.
[[nodiscard]] bool ReadMessage(absl::string_view text, absl::string_view source,
                               google::protobuf::Message* message,
                               std::vector<ReadIssue>* issues,
                               const ReadLimits& limits = {},
                               PositionMap* positions = nullptr);

// Returns the position of `path` or of its nearest written ancestor
// ("actions[2].considerations[0].range" falls back to
// "actions[2].considerations[0]"); {0, 0} when none was recorded.
[[nodiscard]] TextPosition FindPosition(const PositionMap& positions,
                                        absl::string_view path);

// Like ReadMessage, but returns INVALID_ARGUMENT with one issue per line.
[[nodiscard]] absl::Status ReadMessageOrError(
    absl::string_view text, absl::string_view source,
    google::protobuf::Message* message, const ReadLimits& limits = {});

// Joins issues, one ToString() per line.
[[nodiscard]] std::string JoinIssues(const std::vector<ReadIssue>& issues);

// The prefix of an enum's value names: "Compensation" -> "COMPENSATION_".
[[nodiscard]] std::string EnumPrefix(const google::protobuf::EnumDescriptor* e);
// The short lowercase name the format writes for an enum value:
// COMPENSATION_NONE -> "none" (ReadMessage takes both).
[[nodiscard]] std::string ShortEnumName(
    const google::protobuf::EnumValueDescriptor* v);

}  // namespace utilityd::loader

#endif  // UTILITYD_LOADER_PROTO_READER_H_

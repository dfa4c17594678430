// Reads a decision log (utilityd --decision_log) in either of its forms:
// JSON lines, or length-delimited binary entries (a varint size, then a
// serialised v1::DecisionLogEntry). The form is detected from the first
// bytes: a JSON log starts with `{`, a binary one with a size followed by
// the entry's first field.
//
//   absl::StatusOr<std::unique_ptr<LogReader>> r = LogReader::Open(path);
//   v1::DecisionLogEntry e;
//   while (true) {
//     absl::StatusOr<bool> more = (*r)->Next(&e);
//     if (!more.ok()) { report(more.status()); if ((*r)->failed()) break;
//                       continue; }
//     if (!*more) break;
//     use(e);
//   }
#ifndef UTILITYD_REPLAY_LOG_READER_H_
#define UTILITYD_REPLAY_LOG_READER_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::replay {

class LogReader {
 public:
  enum class Form { kJson, kBinary };

  // Opens `path` ("-" reads standard input). NOT_FOUND when it cannot be
  // read.
  static absl::StatusOr<std::unique_ptr<LogReader>> Open(
      const std::string& path);
  // Reads `in` (or `owned` when `in` is null), named `name` in errors.
  LogReader(std::string name, std::unique_ptr<std::istream> owned,
            std::istream* in);

  // Reads the next entry into `entry`: true when one was read, false at the
  // end. An error names the file and the line (JSON) or the byte offset
  // (binary): INVALID_ARGUMENT for an entry that does not parse, DATA_LOSS
  // for a binary entry cut short. A bad JSON line is skipped and reading
  // may go on; a bad binary entry ends the file (failed() is true), since
  // what follows cannot be found.
  absl::StatusOr<bool> Next(v1::DecisionLogEntry* entry);

  bool failed() const { return failed_; }
  Form form() const { return form_; }
  const std::string& name() const { return name_; }

 private:
  void Detect();
  size_t Ensure(size_t want);
  static void Recycle(v1::DecisionLogEntry* entry);
  absl::StatusOr<bool> NextJson(v1::DecisionLogEntry* entry);
  absl::StatusOr<bool> ParseJson(v1::DecisionLogEntry* entry);
  absl::StatusOr<bool> NextBinary(v1::DecisionLogEntry* entry);

  std::string name_;
  std::unique_ptr<std::istream> owned_;
  std::istream* in_;
  Form form_ = Form::kJson;
  bool detected_ = false;
  bool failed_ = false;
  int64_t line_ = 0;     // JSON: lines read
  uint64_t offset_ = 0;  // binary: bytes consumed
  std::string buffer_;   // JSON: the line
  std::string prefix_;   // bytes Detect read
  // Binary: bytes read ahead, [pos_, len_) not yet used.
  std::string chunk_;
  size_t pos_ = 0, len_ = 0;
  bool ended_ = false;
};

// Appends `message` in the binary log form: its size as a varint, then its
// bytes (what protobuf's "delimited" readers and writers use).
void AppendDelimited(const google::protobuf::MessageLite& message,
                     std::string* out);
// The same for a message already serialised.
void AppendDelimited(absl::string_view serialized, std::string* out);

}  // namespace utilityd::replay

#endif  // UTILITYD_REPLAY_LOG_READER_H_

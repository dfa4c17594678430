#include "utilityd/replay/log_reader.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/util/json_util.h"

namespace utilityd::replay {
namespace {

// Entries larger than this are taken for corruption, not allocated.
constexpr uint64_t kMaxEntryBytes = 64 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<LogReader>> LogReader::Open(
    const std::string& path) {
  if (path == "-") return std::make_unique<LogReader>("-", nullptr, &std::cin);
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::istream* in = file.get();
  return std::make_unique<LogReader>(path, std::move(file), in);
}

LogReader::LogReader(std::string name, std::unique_ptr<std::istream> owned,
                     std::istream* in)
    : name_(std::move(name)), owned_(std::move(owned)), in_(in) {}

// A JSON log starts with `{` then a quote, a space or `}`; a binary entry
// starts with its size and then the tag of its first field (0x0a, the
// time), so a size of 123 (`{`) is followed by 0x0a, never by those.
void LogReader::Detect() {
  detected_ = true;
  const int first = in_->peek();
  if (first == std::char_traits<char>::eof()) return;
  if (first != '{') {
    form_ = std::isspace(first) ? Form::kJson : Form::kBinary;
    return;
  }
  in_->get();
  const int second = in_->peek();
  in_->unget();
  form_ = second == '"' || second == '}' || std::isspace(second)
              ? Form::kJson
              : Form::kBinary;
}

absl::StatusOr<bool> LogReader::Next(v1::DecisionLogEntry* entry) {
  if (!detected_) Detect();
  if (failed_) return false;
  return form_ == Form::kJson ? NextJson(entry) : NextBinary(entry);
}

absl::StatusOr<bool> LogReader::NextJson(v1::DecisionLogEntry* entry) {
  while (std::getline(*in_, buffer_)) {
    ++line_;
    const absl::string_view text = buffer_;
    if (text.find_first_not_of(" \t\r") == absl::string_view::npos) continue;
    entry->Clear();
    // Fields a newer server adds are skipped, not refused.
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    const auto s = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(text.data(), text.size()), entry,
        options);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ":", line_, ": not a decision-log entry: ",
                       s.message().ToString()));
    }
    return true;
  }
  return false;
}

absl::StatusOr<bool> LogReader::NextBinary(v1::DecisionLogEntry* entry) {
  const uint64_t start = offset_;
  uint64_t size = 0;
  for (int shift = 0;; shift += 7) {
    const int c = in_->get();
    if (c == std::char_traits<char>::eof()) {
      if (shift == 0) return false;  // the end, between entries
      failed_ = true;
      return absl::DataLossError(absl::StrCat(
          name_, ": byte offset ", start, ": truncated entry size"));
    }
    ++offset_;
    size |= static_cast<uint64_t>(c & 0x7f) << shift;
    if ((c & 0x80) == 0) break;
    if (shift >= 63) {
      failed_ = true;
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": byte offset ", start, ": corrupt entry size"));
    }
  }
  if (size > kMaxEntryBytes) {
    failed_ = true;
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": byte offset ", start, ": entry size ", size,
                     " is over the ", kMaxEntryBytes,
                     "-byte limit (not a binary decision log?)"));
  }
  buffer_.resize(size);
  in_->read(buffer_.data(), static_cast<std::streamsize>(size));
  const uint64_t got = static_cast<uint64_t>(in_->gcount());
  offset_ += got;
  if (got < size) {
    failed_ = true;
    return absl::DataLossError(
        absl::StrCat(name_, ": byte offset ", start, ": entry of ", size,
                     " bytes cut short after ", got, " (truncated log)"));
  }
  entry->Clear();
  if (!entry->ParseFromString(buffer_)) {
    failed_ = true;
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": byte offset ", start, ": entry of ", size,
                     " bytes is not a decision-log entry"));
  }
  return true;
}

}  // namespace utilityd::replay

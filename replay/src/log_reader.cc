#include "utilityd/replay/log_reader.h"

#include <algorithm>
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

// A JSON log's first entry starts with `{"` (after blank lines, if any);
// a binary one with a size and the tag of the entry's first field (0x0a,
// the time). Bytes read to tell them apart are kept in prefix_ and read
// again.
void LogReader::Detect() {
  detected_ = true;
  auto is_space = [](int c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
  };
  int c = in_->get();
  while (c != std::char_traits<char>::eof() && is_space(c)) {
    prefix_.push_back(static_cast<char>(c));
    c = in_->get();
  }
  if (c == std::char_traits<char>::eof()) {  // blank: no entries
    prefix_.clear();
    return;
  }
  prefix_.push_back(static_cast<char>(c));
  const int next = in_->peek();
  form_ = c == '{' && (next == '"' || next == '}' || next == ' ')
              ? Form::kJson
              : Form::kBinary;
}

int LogReader::Get() {
  if (prefix_used_ < prefix_.size()) {
    return static_cast<unsigned char>(prefix_[prefix_used_++]);
  }
  return in_->get();
}

absl::StatusOr<bool> LogReader::Next(v1::DecisionLogEntry* entry) {
  if (!detected_) Detect();
  if (failed_) return false;
  return form_ == Form::kJson ? NextJson(entry) : NextBinary(entry);
}

absl::StatusOr<bool> LogReader::NextJson(v1::DecisionLogEntry* entry) {
  if (!prefix_.empty()) {  // blank lines, and the first line's `{`
    line_ += std::count(prefix_.begin(), prefix_.end(), '\n');
    std::string rest;
    std::getline(*in_, rest);
    buffer_ = prefix_.substr(prefix_.rfind('{')) + rest;
    prefix_.clear();
    ++line_;
    return ParseJson(entry);
  }
  while (std::getline(*in_, buffer_)) {
    ++line_;
    const absl::StatusOr<bool> parsed = ParseJson(entry);
    if (!parsed.ok() || *parsed) return parsed;
  }
  return false;
}

// Parses buffer_ (line line_) into `entry`; false for a blank line.
absl::StatusOr<bool> LogReader::ParseJson(v1::DecisionLogEntry* entry) {
  const absl::string_view text = buffer_;
  if (text.find_first_not_of(" \t\r") == absl::string_view::npos) {
    return false;
  }
  entry->Clear();
  // Fields a newer server adds are skipped, not refused.
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto s = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), entry, options);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line_, ": not a decision-log entry: ",
                     s.message().ToString()));
  }
  return true;
}

absl::StatusOr<bool> LogReader::NextBinary(v1::DecisionLogEntry* entry) {
  const uint64_t start = offset_;
  uint64_t size = 0;
  for (int shift = 0;; shift += 7) {
    const int c = Get();
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
  uint64_t got = 0;
  while (got < size && prefix_used_ < prefix_.size()) {
    buffer_[got++] = prefix_[prefix_used_++];
  }
  in_->read(buffer_.data() + got, static_cast<std::streamsize>(size - got));
  got += static_cast<uint64_t>(in_->gcount());
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

void AppendDelimited(const google::protobuf::MessageLite& message,
                     std::string* out) {
  size_t size = message.ByteSizeLong();
  do {  // the size as a base-128 varint, low groups first
    const uint8_t low = size & 0x7f;
    size >>= 7;
    out->push_back(static_cast<char>(size != 0 ? low | 0x80 : low));
  } while (size != 0);
  message.AppendToString(out);
}

}  // namespace utilityd::replay

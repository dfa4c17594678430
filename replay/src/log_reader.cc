#include "utilityd/replay/log_reader.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/util/json_util.h"

namespace utilityd::replay {
namespace {

// Entries larger than this are taken for corruption, not allocated.
constexpr uint64_t kMaxEntryBytes = 64 << 20;
// Binary logs are read this much at a time.
constexpr size_t kChunkBytes = 1 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<LogReader>> LogReader::Open(
    const std::string& path) {
  if (path == "-") return std::make_unique<LogReader>("-", nullptr, &std::cin);
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file)
    return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::istream* in = file.get();
  return std::make_unique<LogReader>(path, std::move(file), in);
}

LogReader::LogReader(std::string name, std::unique_ptr<std::istream> owned,
                     std::istream* in)
    : name_(std::move(name)),
      owned_(std::move(owned)),
      in_(in != nullptr ? in : owned_.get()) {}

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
        absl::StrCat(name_, ":", line_,
                     ": not a decision-log entry: ", s.message().ToString()));
  }
  return true;
}

// Clears `entry` for the next one, keeping (on the heap) its snapshot and
// time messages, whose strings and repeated fields keep their memory: an
// entry read again and again allocates almost nothing.
void LogReader::Recycle(v1::DecisionLogEntry* entry) {
  if (entry->GetArena() != nullptr) {
    entry->Clear();
    return;
  }
  v1::AgentSnapshot* snapshot =
      entry->has_snapshot() ? entry->release_snapshot() : nullptr;
  google::protobuf::Timestamp* time =
      entry->has_time() ? entry->release_time() : nullptr;
  entry->Clear();
  if (snapshot != nullptr) {
    snapshot->Clear();
    entry->set_allocated_snapshot(snapshot);
  }
  if (time != nullptr) {
    time->Clear();
    entry->set_allocated_time(time);
  }
}

// Makes `want` unread bytes available in chunk_ unless the stream ends
// first; returns how many are.
size_t LogReader::Ensure(size_t want) {
  size_t avail = len_ - pos_;
  if (avail >= want) return avail;
  if (pos_ > 0) {  // the unread tail to the front
    std::memmove(chunk_.data(), chunk_.data() + pos_, avail);
    len_ = avail;
    pos_ = 0;
  }
  if (chunk_.size() < std::max(want, kChunkBytes)) {
    chunk_.resize(std::max(want, kChunkBytes));
  }
  while (len_ < want && !ended_) {
    in_->read(chunk_.data() + len_,
              static_cast<std::streamsize>(chunk_.size() - len_));
    const size_t got = static_cast<size_t>(in_->gcount());
    len_ += got;
    ended_ = got == 0 || !*in_;
  }
  return len_ - pos_;
}

absl::StatusOr<bool> LogReader::NextBinary(v1::DecisionLogEntry* entry) {
  if (!prefix_.empty()) {  // what Detect read starts the first chunk
    chunk_ = std::move(prefix_);
    prefix_.clear();
    len_ = chunk_.size();
  }
  const uint64_t start = offset_;
  size_t avail = Ensure(10);     // a varint's most bytes
  if (avail == 0) return false;  // the end, between entries
  uint64_t size = 0;
  size_t n = 0;  // the size's bytes
  for (int shift = 0;; shift += 7) {
    if (n == avail) {
      failed_ = true;
      return absl::DataLossError(absl::StrCat(name_, ": byte offset ", start,
                                              ": truncated entry size"));
    }
    const uint8_t c = static_cast<uint8_t>(chunk_[pos_ + n++]);
    size |= static_cast<uint64_t>(c & 0x7f) << shift;
    if ((c & 0x80) == 0) break;
    if (shift >= 63) {
      failed_ = true;
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": byte offset ", start, ": corrupt entry size"));
    }
  }
  if (size > kMaxEntryBytes) {
    failed_ = true;
    return absl::InvalidArgumentError(absl::StrCat(
        name_, ": byte offset ", start, ": entry size ", size, " is over the ",
        kMaxEntryBytes, "-byte limit (not a binary decision log?)"));
  }
  avail = Ensure(n + size);
  if (avail < n + size) {
    failed_ = true;
    return absl::DataLossError(
        absl::StrCat(name_, ": byte offset ", start, ": entry of ", size,
                     " bytes cut short after ", avail - n, " (truncated log)"));
  }
  const char* data = chunk_.data() + pos_ + n;
  pos_ += n + size;
  offset_ += n + size;
  Recycle(entry);
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t*>(data), static_cast<int>(size));
  const bool parsed = entry->MergeFromCodedStream(&input);
  // A recycled snapshot or time the entry did not hold goes again.
  if (entry->has_snapshot() && entry->snapshot().ByteSizeLong() == 0) {
    entry->clear_snapshot();
  }
  if (entry->has_time() && entry->time().ByteSizeLong() == 0) {
    entry->clear_time();
  }
  if (!parsed) {
    failed_ = true;
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": byte offset ", start, ": entry of ", size,
                     " bytes is not a decision-log entry"));
  }
  return true;
}

namespace {

// Appends `size` as a base-128 varint, low groups first.
void AppendSize(size_t size, std::string* out) {
  do {
    const uint8_t low = size & 0x7f;
    size >>= 7;
    out->push_back(static_cast<char>(size != 0 ? low | 0x80 : low));
  } while (size != 0);
}

}  // namespace

void AppendDelimited(const google::protobuf::MessageLite& message,
                     std::string* out) {
  AppendSize(message.ByteSizeLong(), out);
  message.AppendToString(out);
}

void AppendDelimited(absl::string_view serialized, std::string* out) {
  AppendSize(serialized.size(), out);
  out->append(serialized.data(), serialized.size());
}

}  // namespace utilityd::replay

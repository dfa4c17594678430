// Structured logging: one line per event on stderr in logfmt, e.g.
//   time=2026-11-30T06:20:01.123Z level=info event=listening port=50051
// Values with spaces, quotes or newlines are quoted and escaped, so a
// multi-line validation error stays one line. Never used per decision.
//
//   Log(LogLevel::kInfo, "config_reloaded", {{"sets", 3}, {"dir", dir}});
#ifndef UTILITYD_SERVER_LOG_H_
#define UTILITYD_SERVER_LOG_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace utilityd::server {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// One key=value pair; the value is formatted on construction.
struct LogField {
  LogField(absl::string_view k, absl::string_view v) : key(k), value(v) {}
  LogField(absl::string_view k, const std::string& v) : key(k), value(v) {}
  LogField(absl::string_view k, const char* v) : key(k), value(v) {}
  template <typename T, typename = decltype(absl::StrCat(std::declval<T>()))>
  LogField(absl::string_view k, T v) : key(k), value(absl::StrCat(v)) {}

  absl::string_view key;
  std::string value;
};

// Writes one event line to stderr (a single write, so lines never
// interleave) when `level` is at or above the minimum. Thread-safe.
void Log(LogLevel level, absl::string_view event,
         std::initializer_list<LogField> fields = {});

// Sets the minimum level written; default kInfo.
void SetMinLogLevel(LogLevel level);

// Parses "debug", "info", "warning" or "error"; false for anything else.
bool ParseLogLevel(absl::string_view text, LogLevel* level);

// Routes protobuf's own log messages (e.g. one per received message with
// invalid UTF-8) into Log as event=protobuf, at most `per_minute` a minute:
// a misbehaving client cannot flood the log. Suppressed messages are counted
// and reported once the next minute starts. Call once, before serving.
void InstallProtobufLogHandler(int per_minute = 10);

struct ProtobufLogStats {
  int64_t forwarded = 0;
  int64_t suppressed = 0;
};
// Returns how many protobuf messages were forwarded and suppressed so far.
ProtobufLogStats GetProtobufLogStats();

// Returns the logfmt form of one value: bare when it is a plain word,
// otherwise quoted and escaped as a JSON string.
std::string LogfmtValue(absl::string_view value);

// Escapes `s` as a JSON string literal, quotes included.
std::string JsonString(absl::string_view s);

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_LOG_H_

#include "server/src/log.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/stubs/logging.h"
#include "utilityd/base/sync.h"

namespace utilityd::server {
namespace {

std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string LogfmtValue(absl::string_view value) {
  bool plain = !value.empty();
  for (char c : value) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) {
      plain = false;
      break;
    }
  }
  return plain ? std::string(value) : JsonString(value);
}

void Log(LogLevel level, absl::string_view event,
         std::initializer_list<LogField> fields) {
  if (static_cast<int>(level) < min_level.load(std::memory_order_relaxed)) {
    return;
  }
  std::string line =
      absl::StrCat("time=",
                   absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                    absl::UTCTimeZone()),
                   " level=", LevelName(level), " event=", LogfmtValue(event));
  for (const LogField& f : fields) {
    absl::StrAppend(&line, " ", f.key, "=", LogfmtValue(f.value));
  }
  line += '\n';
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

namespace {

struct ProtobufLogState {
  utilityd::Mutex mu;
  int per_minute = 10;
  absl::Time window_start ABSL_GUARDED_BY(mu);
  int in_window ABSL_GUARDED_BY(mu) = 0;
  int64_t suppressed_in_window ABSL_GUARDED_BY(mu) = 0;
  ProtobufLogStats stats ABSL_GUARDED_BY(mu);
};

ProtobufLogState& ProtobufState() {
  static auto* state = new ProtobufLogState();
  return *state;
}

void OnProtobufLog(google::protobuf::LogLevel level, const char* filename,
                   int line, const std::string& message) {
  ProtobufLogState& s = ProtobufState();
  int64_t report_suppressed = 0;
  {
    utilityd::MutexLock lock(&s.mu);
    const absl::Time now = absl::Now();
    if (now - s.window_start >= absl::Minutes(1)) {
      report_suppressed = s.suppressed_in_window;
      s.window_start = now;
      s.in_window = 0;
      s.suppressed_in_window = 0;
    }
    if (s.in_window >= s.per_minute) {
      ++s.suppressed_in_window;
      ++s.stats.suppressed;
      return;
    }
    ++s.in_window;
    ++s.stats.forwarded;
  }
  if (report_suppressed > 0) {
    Log(LogLevel::kWarning, "protobuf_suppressed",
        {{"count", report_suppressed}});
  }
  Log(level >= google::protobuf::LOGLEVEL_ERROR ? LogLevel::kError
                                                : LogLevel::kWarning,
      "protobuf", {{"message", message}, {"file", filename}, {"line", line}});
}

}  // namespace

void InstallProtobufLogHandler(int per_minute) {
  ProtobufState().per_minute = per_minute;
  google::protobuf::SetLogHandler(&OnProtobufLog);
}

ProtobufLogStats GetProtobufLogStats() {
  ProtobufLogState& s = ProtobufState();
  utilityd::MutexLock lock(&s.mu);
  return s.stats;
}

void SetMinLogLevel(LogLevel level) {
  min_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

bool ParseLogLevel(absl::string_view text, LogLevel* level) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning,
                     LogLevel::kError}) {
    if (text == LevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

}  // namespace utilityd::server

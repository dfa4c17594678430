// Fuzzes the metrics exposition: label values and help text from the input,
// then checks a property of the output: every sample line's label values
// unescape back to exactly what was registered.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "utilityd/metrics/metrics.h"

namespace {

// Reads the label values of one `name{a="...",b="..."} v` line.
std::vector<std::string> LabelValues(const std::string& line) {
  std::vector<std::string> values;
  size_t i = line.find('{');
  if (i == std::string::npos) return values;
  while (true) {
    i = line.find("=\"", i);
    if (i == std::string::npos) break;
    i += 2;
    std::string v;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;
        v += line[i] == 'n' ? '\n' : line[i];
      } else {
        v += line[i];
      }
    }
    values.push_back(v);
    if (i + 1 >= line.size() || line[i + 1] != ',') break;
  }
  return values;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace utilityd::metrics;
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts = absl::StrSplit(input, '\0');
  Registry r;
  Family<Counter>& c = r.AddCounter("fuzz_total", parts[0], {"a", "b"});
  std::set<std::vector<std::string>> registered;
  for (size_t i = 1; i + 1 < parts.size(); i += 2) {
    c.Add({parts[i], parts[i + 1]}).Increment(static_cast<double>(i));
    registered.insert({parts[i], parts[i + 1]});
  }
  Histogram& h = r.AddHistogram("fuzz_seconds", "h", {}, {0.5, 1, 2}).Add({});
  for (unsigned char ch : input) h.Observe(ch / 64.0);
  const std::string text = r.Serialize();
  std::set<std::vector<std::string>> seen;
  for (absl::string_view piece : absl::StrSplit(text, '\n')) {
    const std::string line(piece);
    if (line.rfind("fuzz_total{", 0) == 0) seen.insert(LabelValues(line));
    if (line.rfind("# HELP fuzz_total ", 0) == 0 &&
        line.find('\n') != std::string::npos) {
      std::abort();  // help must stay on one line
    }
  }
  if (seen != registered) std::abort();
  return 0;
}

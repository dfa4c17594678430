// The shortest text that reads back as the same double ("0.1", "1e+30"),
// for what writes numbers people read and programs parse again: the YAML
// writer, BehaviorTree.CPP XML, Prometheus samples.
#ifndef UTILITYD_BASE_SHORTEST_NUMBER_H_
#define UTILITYD_BASE_SHORTEST_NUMBER_H_

#include <charconv>
#include <string>
#include <system_error>

namespace utilityd {

inline std::string ShortestNumber(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

}  // namespace utilityd

#endif  // UTILITYD_BASE_SHORTEST_NUMBER_H_

// Fuzzes the admin endpoint's routing and handlers as the server registers
// them (probes, metrics, status, the inspector's page and API) over the
// example sets: any method, path, query, headers and body. The input is
//
//   <mode byte><method>\n<path[?query]>\n<name: value>\n...\n\n<body>
//
// where the mode byte picks the open loopback inspector, one with a token,
// or the locked one. Checks that every request is answered with a status
// the API documents, that a path over the limit is 414 without routing,
// and that no answer exceeds the budget's bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "server/src/admin_api.h"
#include "server/src/admin_http.h"
#include "server/src/config_store.h"
#include "server/src/decision_service.h"
#include "server/src/recent_decisions.h"
#include "server/src/service_metrics.h"
#include "utilityd/metrics/metrics.h"

namespace {

using utilityd::server::AdminApiOptions;
using utilityd::server::HttpRequest;
using utilityd::server::HttpResponse;
using utilityd::server::HttpRouter;

// Smaller than the server's, so that one input costs milliseconds.
utilityd::server::AdminBudget FuzzBudget() {
  return {.max_agents = 64,
          .max_scored = 200'000,
          .max_explained = 20'000,
          .max_analysis = 2'000'000,
          .max_tune = 500'000,
          .max_answer_bytes = 4u << 20};
}

struct Harness {
  Harness()
      : store(UTILITYD_EXAMPLES_DIR),
        metrics(&registry),
        service(&store, {}, &metrics),
        recent(64, 1.0) {
    if (!store.Reload().ok()) std::abort();
    const AdminApiOptions modes[3] = {
        {.budget = FuzzBudget()},
        {.token = "fuzz-token", .budget = FuzzBudget()},
        {.locked = "locked for the fuzzer", .budget = FuzzBudget()}};
    for (int m = 0; m < 3; ++m) {
      utilityd::server::RegisterAdminRoutes(
          routers[m],
          {.metrics =
               [this] {
                 return utilityd::metrics::TextExposition({&registry});
               },
           .ready = [] { return true; },
           .status_json = [] { return std::string("{}"); },
           .more_routes =
               [&, m](HttpRouter& http) {
                 utilityd::server::RegisterAdminApi(http, modes[m], &service,
                                                    &recent);
               }});
    }
  }
  utilityd::server::ConfigStore store;
  prometheus::Registry registry;
  utilityd::server::ServiceMetrics metrics;
  utilityd::server::DecisionServiceImpl service;
  utilityd::server::RecentDecisions recent;
  HttpRouter routers[3];
};

bool Documented(int status) {
  switch (status) {
    case 200:
    case 302:
    case 400:
    case 401:
    case 403:
    case 404:
    case 405:
    case 413:
    case 414:
    case 415:
    case 503:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness* harness = new Harness();
  if (size < 1) return 0;
  const HttpRouter& router = harness->routers[data[0] % 3];
  const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  HttpRequest req;
  const size_t head_end = input.find("\n\n");
  const std::string head = input.substr(0, head_end);
  if (head_end != std::string::npos) req.body = input.substr(head_end + 2);
  std::vector<std::string> lines = absl::StrSplit(head, '\n');
  req.method = lines[0];
  if (lines.size() > 1) {
    const std::string& target = lines[1];
    const size_t q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) {
      for (absl::string_view kv :
           absl::StrSplit(target.substr(q + 1), '&', absl::SkipEmpty())) {
        const size_t eq = kv.find('=');
        req.params[std::string(kv.substr(0, eq))] =
            eq == kv.npos ? "" : std::string(kv.substr(eq + 1));
      }
    }
  }
  for (size_t i = 2; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    req.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripLeadingAsciiWhitespace(
            absl::string_view(lines[i]).substr(colon + 1)));
  }
  const bool too_long = req.path.size() > HttpRouter::kMaxPathBytes;
  HttpResponse res;
  router.Answer(req, res);
  if (!Documented(res.status)) std::abort();
  if (too_long && res.status != 414) std::abort();
  if (res.body.size() > FuzzBudget().max_answer_bytes &&
      req.path != "/metrics") {
    std::abort();
  }
  return 0;
}

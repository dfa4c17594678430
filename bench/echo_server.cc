// The echo baseline: utilityd's own server — same gRPC stack, reactor,
// interceptor, limits and health — answering every batch with decisions of
// the same shape and size without scoring anything. `utilityctl bench`
// against it and against utilityd, side by side (bench/compare.sh), shows
// what scoring adds to the cost of carrying the batches.
//
//   build/bench/utilityd-echo --grpc_address=127.0.0.1:50061
//       --http_address=127.0.0.1:8091 --config_dir=examples/behaviour_sets
//   (one command line)
#include <signal.h>

#include <cstdio>
#include <fstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/src/server.h"

ABSL_FLAG(std::string, grpc_address, "127.0.0.1:50061", "gRPC address.");
ABSL_FLAG(std::string, http_address, "127.0.0.1:8091",
          "Admin endpoint (metrics); empty disables it.");
ABSL_FLAG(std::string, config_dir, "examples/behaviour_sets",
          "Behaviour sets (the load generator reads the set's factors).");
ABSL_FLAG(std::string, port_file, "",
          "Write the bound gRPC and admin ports here (for port 0).");

namespace {

// Decisions as utilityd writes them at explain none: in the full form the
// agent's id, an action name and index, the first target, a score, the
// set's revision and a 16-digit decision id; in the compact form an action
// and target index, a score and flags per agent, the revision once and a
// decision-id base; a block as the block form's columns.
void Echo(const utilityd::v1::DecideRequest& request,
          utilityd::v1::DecideResponse* response) {
  response->set_request_id(request.request_id());
  // Blocks: the block form's columns, one row per entity id.
  for (const auto& block : request.blocks()) {
    utilityd::v1::DecisionBlock* b = response->add_blocks();
    const int n = block.agent_ids_size();
    if (block.fixed_width_indices()) {
      b->mutable_action_index_fixed()->Resize(n, 1);
      b->mutable_target_index_fixed()->Resize(n, -1);
    } else {
      b->mutable_action_index()->Resize(n, 1);
      b->mutable_target_index()->Resize(n, -1);
    }
    b->mutable_score()->Resize(n, 0.5f);
    b->mutable_flags()->assign(n, '\0');
    b->set_revision("0123456789abcdef");
    b->set_decision_id_base(1);
  }
  if (request.form() == utilityd::v1::DECISION_FORM_COMPACT) {
    utilityd::v1::CompactDecisions* c = response->mutable_compact();
    for (const auto& agent : request.agents()) {
      c->add_action_index(1);
      c->add_target_index(agent.targets_size() > 0 ? 0 : -1);
      c->add_score(0.5f);
    }
    c->mutable_flags()->assign(request.agents_size(), '\0');
    utilityd::v1::SetRevision* r = c->add_revisions();
    if (request.agents_size() > 0) {
      r->set_behaviour_set(request.agents(0).behaviour_set());
    }
    r->set_revision("0123456789abcdef");
    c->set_decision_id_base(1);
    return;
  }
  uint64_t id = 0;
  for (const auto& agent : request.agents()) {
    utilityd::v1::Decision* d = response->add_decisions();
    d->set_agent_id(agent.agent_id());
    d->set_action(agent.current_action().empty() ? "patrol"
                                                 : agent.current_action());
    d->set_action_index(1);
    if (agent.targets_size() > 0)
      d->set_target_id(agent.targets(0).target_id());
    d->set_score(0.5f);
    d->set_revision("0123456789abcdef");
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx",
                  static_cast<unsigned long long>(++id));
    d->set_decision_id(hex, 16);
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // As utilityd runs by default (its --mutex_deadlock_detection).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  utilityd::server::ServerOptions options;
  options.grpc_address = absl::GetFlag(FLAGS_grpc_address);
  options.http_address = absl::GetFlag(FLAGS_http_address);
  options.config_dir = absl::GetFlag(FLAGS_config_dir);
  options.inspector = false;
  options.service.answer_without_scoring = Echo;
  auto server = utilityd::server::UtilitydServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "utilityd-echo: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "utilityd-echo: serving on port %d\n",
               (*server)->port());
  if (const std::string file = absl::GetFlag(FLAGS_port_file); !file.empty()) {
    std::ofstream(file + ".tmp") << (*server)->port() << "\n"
                                 << (*server)->http_port() << "\n";
    std::rename((file + ".tmp").c_str(), file.c_str());
  }
  int signal = 0;
  sigwait(&signals, &signal);
  (*server)->Drain(absl::ZeroDuration(), absl::Seconds(2));
  (*server)->Wait();
  return 0;
}

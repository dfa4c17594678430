// How a game server uses the utilityd client SDK: connect, learn a set's
// factor order, decide one batch, then stream batches.
//
//   sdk_example 127.0.0.1:50051
#include <iostream>

#include "utilityd/client/client.h"

namespace v1 = utilityd::v1;
using utilityd::client::BatchResult;
using utilityd::client::Client;
using utilityd::client::ClientOptions;

int main(int argc, char** argv) {
  ClientOptions options;
  options.target = argc > 1 ? argv[1] : "localhost:50051";
  auto client = Client::Connect(options);
  if (!client.ok()) {
    std::cerr << client.status() << "\n";
    return 1;
  }

  // The factor order clients pack values in; cached per set revision.
  auto schema = (*client)->Schema("eat_hide_wander");
  if (!schema.ok()) {
    std::cerr << "cannot reach utilityd: " << schema.status() << "\n";
    return 1;
  }
  std::cout << "eat_hide_wander@" << (*schema)->revision() << " packs";
  for (const auto& f : (*schema)->summary().factors()) std::cout << " " << f;
  std::cout << "\n";

  // One blocking batch; factors given by name are packed by the SDK.
  v1::DecideRequest batch;
  batch.set_explain(v1::EXPLAIN_TOP);
  v1::AgentSnapshot* forager = batch.add_agents();
  forager->set_agent_id("forager-1");
  forager->set_behaviour_set("eat_hide_wander");
  auto& f = *forager->mutable_named_factors();
  f["hunger"] = 0.8f;
  f["danger"] = 0.1f;
  f["food_distance"] = 5;
  f["idle_time"] = 2;
  auto decided = (*client)->Decide(batch);
  if (!decided.ok()) {
    std::cerr << decided.status() << "\n";
    return 1;
  }
  const v1::Decision& d = decided->decisions(0);
  std::cout << d.agent_id() << " -> " << d.action() << " " << d.score()
            << " (runner-up " << d.explanation().runner_up_action() << ")\n";

  // The main path: a stream that survives replica restarts; every batch
  // gets exactly one result.
  auto stream = (*client)->OpenStream({.max_in_flight = 4});
  std::vector<std::future<BatchResult>> results;
  for (int tick = 0; tick < 10; ++tick) {
    forager->set_current_action(d.action());
    forager->set_seed(tick);
    results.push_back(stream->Submit(batch));
  }
  int decided_count = 0;
  for (auto& r : results) {
    BatchResult result = r.get();
    if (!result.status.ok()) {
      std::cerr << "batch " << result.request_id << ": " << result.status
                << "\n";
      return 1;
    }
    decided_count += result.response.decisions_size();
  }
  stream->Close();
  std::cout << "streamed 10 batches, " << decided_count << " decisions\n";
  return decided_count == 10 ? 0 : 1;
}

// Reads decisions in the compact form (DecideRequest.form =
// DECISION_FORM_COMPACT, docs/SERVICE.md): numbers per agent in request
// order, the strings once per response.
//
// Example (compiled by tests/client_sdk/header_examples.cmake):
//   v1::DecideRequest batch;  // agents as for any Decide
//   batch.set_form(v1::DECISION_FORM_COMPACT);
//   absl::StatusOr<v1::DecideResponse> r = client.Decide(batch);
//   if (!r.ok()) return;
//   CompactReader decisions(batch, *r);
//   for (int i = 0; i < decisions.size(); ++i) {
//     if (const v1::Decision* full = decisions.full(i)) {
//       Inspect(i, *full);  // an error, an explained agent, a tree tick
//     } else {
//       Run(i, decisions.action_index(i), decisions.target_index(i));
//     }
//   }
//
// Expand turns one entry back into the Decision the full form carries, given
// the set's action names (SetSchema::summary().actions()).
#ifndef UTILITYD_CLIENT_COMPACT_H_
#define UTILITYD_CLIENT_COMPACT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::client {

class CompactReader {
 public:
  // Both must outlive the reader; `request` is the request as sent (its
  // agents give the target ids and set names).
  CompactReader(const v1::DecideRequest& request,
                const v1::DecideResponse& response);

  // OK when the response holds one compact entry per agent of the request
  // and every array agrees; INVALID_ARGUMENT naming the field otherwise.
  absl::Status Check() const;

  int size() const { return compact_.action_index_size(); }
  // Agent i's complete decision when it has the FULL flag, else null.
  const v1::Decision* full(int i) const;
  int action_index(int i) const { return compact_.action_index(i); }
  int target_index(int i) const { return compact_.target_index(i); }
  // The chosen target's id, or empty.
  const std::string& target_id(int i) const;
  float score(int i) const { return compact_.score(i); }
  bool switched(int i) const { return Flags(i) & v1::COMPACT_FLAG_SWITCHED; }
  bool fallback(int i) const { return Flags(i) & v1::COMPACT_FLAG_FALLBACK; }
  // The revision of agent i's set that decided it; empty when not listed.
  const std::string& revision(int i) const;
  // Agent i's decision id (16 hex digits), or empty when the response
  // carries no decision_id_base (an offline decision).
  std::string decision_id(int i) const;

  // Agent i's decision as the full form writes it at explain none.
  // `actions` are the names of its set's actions, in order.
  absl::StatusOr<v1::Decision> Expand(
      int i, absl::Span<const std::string> actions) const;

 private:
  int Flags(int i) const {
    return static_cast<unsigned char>(compact_.flags()[i]);
  }

  const v1::DecideRequest& request_;
  const v1::CompactDecisions& compact_;
};

// Returns the 16 lowercase hex digits of SplitMix64(base + index): the
// decision id of the agent at `index` of a compact response whose
// decision_id_base is `base`.
[[nodiscard]] std::string CompactDecisionId(uint64_t base, int index);

}  // namespace utilityd::client

#endif  // UTILITYD_CLIENT_COMPACT_H_

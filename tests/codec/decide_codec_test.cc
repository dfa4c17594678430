#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/codec/write.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/loader/proto_reader.h"

namespace utilityd::codec {
namespace {

using loader::Catalog;
using loader::LoadCatalog;
using loader::LoadedSet;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::utilityd::testing::IsOk;

class DecideBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Catalog> catalog = LoadCatalog({"examples/behaviour_sets"});
    ASSERT_THAT(catalog, IsOk());
    catalog_ = *std::move(catalog);
    arena_ = catalog_.Find("arena_mage");
    ASSERT_NE(arena_, nullptr);
  }

  // A snapshot of the "Staff empty, in cover" scenario.
  v1::AgentSnapshot StaffEmpty() {
    for (const v1::Scenario& s : arena_->definition.scenarios()) {
      if (s.name() == "Staff empty, in cover")
        return ScenarioSnapshot(arena_->name(), s);
    }
    ADD_FAILURE() << "scenario missing";
    return {};
  }

  v1::DecideResponse Run(const v1::DecideRequest& request) {
    v1::DecideResponse response;
    DecideBatch(catalog_, request, &response);
    EXPECT_EQ(response.decisions_size(), request.agents_size());
    return response;
  }

  Catalog catalog_;
  std::shared_ptr<const LoadedSet> arena_;
};

TEST_F(DecideBatchTest, DecidesAndExplainsInFull) {
  v1::DecideRequest request;
  request.set_request_id(17);
  request.set_explain(v1::EXPLAIN_FULL);
  *request.add_agents() = StaffEmpty();
  const v1::DecideResponse response = Run(request);
  EXPECT_EQ(response.request_id(), 17u);
  const v1::Decision& d = response.decisions(0);
  ASSERT_FALSE(d.has_error()) << d.error().message();
  EXPECT_EQ(d.action(), "recharge");
  EXPECT_EQ(d.action_index(), arena_->compiled.FindAction("recharge"));
  EXPECT_EQ(d.revision(), arena_->revision());
  EXPECT_TRUE(d.switched());
  const v1::Explanation& x = d.explanation();
  EXPECT_EQ(x.strategy(), "highest");
  EXPECT_FALSE(x.runner_up_action().empty());
  EXPECT_NEAR(x.margin(), d.score() - x.runner_up_score(), 1e-6);
  ASSERT_EQ(x.actions(0).action(), "attack");
  EXPECT_EQ(x.actions(0).target_id(), "goblin-1");
  EXPECT_TRUE(x.actions(0).vetoed());
  EXPECT_EQ(x.actions(0).vetoed_by(), "charges_left");
  EXPECT_EQ(x.actions(0).considerations(0).factor(), "charges");
  EXPECT_EQ(x.actions(0).considerations(1).factor(), "distance");  // target's
  EXPECT_FLOAT_EQ(x.actions(0).considerations(1).raw(), 15);
  EXPECT_THAT(x.summary(), HasSubstr("*recharge"));
  EXPECT_THAT(x.summary(),
              HasSubstr("attack@goblin-1 0.00 vetoed by charges_left"));
}

TEST_F(DecideBatchTest, PackedAndNamedFactorsDecideAlike) {
  v1::AgentSnapshot named = StaffEmpty();
  v1::AgentSnapshot packed = named;
  packed.clear_named_factors();
  for (const v1::Factor& f : arena_->definition.factors()) {
    packed.add_factors(named.named_factors().at(f.name()));
  }
  v1::DecideRequest request;
  request.set_explain(v1::EXPLAIN_TOP);
  *request.add_agents() = named;
  *request.add_agents() = packed;
  const v1::DecideResponse r = Run(request);
  EXPECT_EQ(r.decisions(0).action(), r.decisions(1).action());
  EXPECT_EQ(r.decisions(0).score(), r.decisions(1).score());
  EXPECT_EQ(r.decisions(0).explanation().runner_up_score(),
            r.decisions(1).explanation().runner_up_score());
}

TEST_F(DecideBatchTest, OneBadAgentNeverCostsAnotherItsDecision) {
  v1::DecideRequest request;
  auto add = [&](auto mutate) {
    v1::AgentSnapshot a = StaffEmpty();
    mutate(a);
    *request.add_agents() = a;
  };
  add([](v1::AgentSnapshot&) {});
  add([](v1::AgentSnapshot& a) {  // wrong packed count
    a.clear_named_factors();
    a.add_factors(1);
  });
  add([](v1::AgentSnapshot& a) { a.set_behaviour_set("arena_mgae"); });
  add([](v1::AgentSnapshot& a) { a.set_personality("coward"); });
  add([](v1::AgentSnapshot& a) {
    a.set_expected_revision("0000000000000000");
  });
  add([](v1::AgentSnapshot& a) { a.mutable_named_factors()->erase("health"); });
  add([](v1::AgentSnapshot& a) { (*a.mutable_named_factors())["helth"] = 1; });
  add([](v1::AgentSnapshot& a) { a.set_current_action("dance"); });
  add([](v1::AgentSnapshot& a) { a.clear_behaviour_set(); });
  add([](v1::AgentSnapshot& a) {
    (*a.mutable_seconds_since_action())["nap"] = 1;
  });
  add([](v1::AgentSnapshot& a) { a.mutable_targets(0)->add_factors(3); });
  add([](v1::AgentSnapshot&) {});
  const v1::DecideResponse r = Run(request);
  // Programs match on the reason and the field; the message is for people.
  struct Want {
    v1::ErrorCode code;
    v1::ErrorReason reason;
    std::string field;
    std::string message;
  };
  const std::vector<Want> want = {
      {v1::ERROR_CODE_OK, v1::ERROR_REASON_UNSPECIFIED, "", ""},
      {v1::ERROR_CODE_INVALID_ARGUMENT, v1::ERROR_REASON_FACTOR_COUNT,
       "agents[1].factors",
       "agents[1].factors: expected 10 values (arena_mage), got 1"},
      {v1::ERROR_CODE_NOT_FOUND, v1::ERROR_REASON_UNKNOWN_SET,
       "agents[2].behaviour_set",
       "agents[2].behaviour_set: unknown set \"arena_mgae\" (did you mean "
       "\"arena_mage\"?)"},
      {v1::ERROR_CODE_NOT_FOUND, v1::ERROR_REASON_UNKNOWN_PERSONALITY,
       "agents[3].personality",
       "agents[3].personality: unknown personality \"coward\" in arena_mage"},
      {v1::ERROR_CODE_FAILED_PRECONDITION, v1::ERROR_REASON_STALE_REVISION,
       "agents[4].expected_revision",
       "agents[4].expected_revision: arena_mage is at revision"},
      {v1::ERROR_CODE_INVALID_ARGUMENT, v1::ERROR_REASON_MISSING_FACTOR,
       "agents[5].named_factors",
       "agents[5].named_factors: missing health (arena_mage)"},
      {v1::ERROR_CODE_INVALID_ARGUMENT, v1::ERROR_REASON_UNKNOWN_FACTOR,
       "agents[6].named_factors",
       "agents[6].named_factors: unknown factor \"helth\" in arena_mage (did "
       "you mean \"health\"?)"},
      {v1::ERROR_CODE_NOT_FOUND, v1::ERROR_REASON_UNKNOWN_ACTION,
       "agents[7].current_action",
       "agents[7].current_action: unknown action \"dance\""},
      {v1::ERROR_CODE_INVALID_ARGUMENT, v1::ERROR_REASON_MISSING_SET,
       "agents[8].behaviour_set", "agents[8].behaviour_set: is required"},
      {v1::ERROR_CODE_NOT_FOUND, v1::ERROR_REASON_UNKNOWN_ACTION,
       "agents[9].seconds_since_action",
       "agents[9].seconds_since_action: unknown action \"nap\""},
      {v1::ERROR_CODE_INVALID_ARGUMENT, v1::ERROR_REASON_FACTOR_FORMS,
       "agents[10].targets[0].factors",
       "agents[10].targets[0].factors: give either factors or named_factors"},
      {v1::ERROR_CODE_OK, v1::ERROR_REASON_UNSPECIFIED, "", ""},
  };
  ASSERT_EQ(r.decisions_size(), static_cast<int>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const v1::Decision& d = r.decisions(i);
    EXPECT_EQ(d.error().code(), want[i].code)
        << i << ": " << d.error().message();
    EXPECT_EQ(d.error().reason(), want[i].reason) << i;
    EXPECT_EQ(d.error().field(), want[i].field) << i;
    if (want[i].code == v1::ERROR_CODE_OK) {
      EXPECT_FALSE(d.has_error());
      EXPECT_EQ(d.action(), "recharge") << i;
    } else {
      EXPECT_THAT(d.error().message(), HasSubstr(want[i].message)) << i;
      EXPECT_EQ(d.action_index(), -1);
      EXPECT_EQ(d.agent_id(), "Staff empty, in cover");
    }
  }
}

TEST_F(DecideBatchTest, NanFactorVetoesOnlyTheActionsThatReadIt) {
  v1::AgentSnapshot a = StaffEmpty();
  (*a.mutable_named_factors())["enemy_distance"] = NAN;
  v1::DecideRequest request;
  request.set_explain(v1::EXPLAIN_FULL);
  *request.add_agents() = a;
  const v1::Decision d = Run(request).decisions(0);
  ASSERT_FALSE(d.has_error());
  for (const v1::ActionScore& s : d.explanation().actions()) {
    bool reads = false;
    for (const auto& c : s.considerations()) {
      if (c.factor() == "enemy_distance") {
        reads = true;
        EXPECT_TRUE(c.invalid_input());
      }
    }
    if (reads) {
      EXPECT_TRUE(s.vetoed()) << s.action();
      EXPECT_EQ(s.score(), 0) << s.action();
    }
  }
  EXPECT_NE(d.action(), "recharge");  // recharge reads enemy_distance
  EXPECT_FALSE(d.action().empty());
}

TEST_F(DecideBatchTest, CurrentTargetIsResolvedByIdAndMayHaveLeft) {
  v1::AgentSnapshot a = StaffEmpty();
  a.set_current_action("attack");
  AgentScratch scratch;
  engine::AgentInput in;
  a.set_current_target("goblin-1");
  ASSERT_THAT(ResolveAgent(*arena_, a, &scratch, &in), IsOk());
  EXPECT_EQ(in.current_target, 0);
  a.set_current_target("goblin-99");  // killed since the last decision
  ASSERT_THAT(ResolveAgent(*arena_, a, &scratch, &in), IsOk());
  EXPECT_EQ(in.current_target, engine::kTargetGone);
  a.clear_current_target();
  ASSERT_THAT(ResolveAgent(*arena_, a, &scratch, &in), IsOk());
  EXPECT_EQ(in.current_target, engine::kAnyTarget);
  EXPECT_EQ(in.current_action, arena_->compiled.FindAction("attack"));
}

TEST_F(DecideBatchTest, AnEmptyBatchGetsAnEmptyAnswer) {
  v1::DecideRequest request;
  request.set_request_id(5);
  const v1::DecideResponse r = Run(request);
  EXPECT_EQ(r.request_id(), 5u);
  EXPECT_EQ(r.decisions_size(), 0);
}

TEST_F(DecideBatchTest, DuplicateAgentIdsAreDecidedIndependently) {
  v1::DecideRequest request;
  v1::AgentSnapshot a = StaffEmpty();
  a.set_agent_id("twin");
  v1::AgentSnapshot b = a;
  (*b.mutable_named_factors())["charges"] = 6;  // a different situation
  *request.add_agents() = a;
  *request.add_agents() = b;
  const v1::DecideResponse r = Run(request);
  ASSERT_EQ(r.decisions_size(), 2);
  EXPECT_EQ(r.decisions(0).agent_id(), "twin");
  EXPECT_EQ(r.decisions(1).agent_id(), "twin");
  EXPECT_EQ(r.decisions(0).action(), "recharge");
  EXPECT_NE(r.decisions(1).action(), "recharge");
}

TEST_F(DecideBatchTest, HugeAndNegativeFactorsClampToTheBookends) {
  v1::AgentSnapshot a = StaffEmpty();
  (*a.mutable_named_factors())["health"] = 1e30f;
  (*a.mutable_named_factors())["enemy_distance"] = -1e30f;
  v1::DecideRequest request;
  request.set_explain(v1::EXPLAIN_FULL);
  *request.add_agents() = a;
  const v1::Decision d = Run(request).decisions(0);
  ASSERT_FALSE(d.has_error());
  for (const auto& action : d.explanation().actions()) {
    for (const auto& c : action.considerations()) {
      EXPECT_GE(c.normalised(), 0);
      EXPECT_LE(c.normalised(), 1);
      EXPECT_FALSE(c.invalid_input());
    }
  }
}

TEST(ScenarioTest, EveryExampleScenarioHolds) {
  absl::StatusOr<Catalog> catalog = LoadCatalog({"examples/behaviour_sets"});
  ASSERT_THAT(catalog, IsOk());
  for (const auto& [name, set] : catalog->sets()) {
    EXPECT_THAT(CheckScenarios(*set), IsEmpty()) << name;
  }
}

}  // namespace
}  // namespace utilityd::codec

namespace utilityd::codec {
namespace {

// The compact form, packed in process: agents of two sets interleaved, a
// failure and a target chosen, each entry at its request position.
TEST_F(DecideBatchTest, CompactFormHoldsTheFullFormsNumbersInRequestOrder) {
  std::shared_ptr<const LoadedSet> needs = catalog_.Find("villager_needs");
  ASSERT_NE(needs, nullptr);
  v1::DecideRequest request;
  for (int i = 0; i < 12; ++i) {
    const auto& scenarios =
        (i % 3 == 1 ? needs : arena_)->definition.scenarios();
    *request.add_agents() =
        ScenarioSnapshot(i % 3 == 1 ? needs->name() : arena_->name(),
                         scenarios[i % scenarios.size()]);
  }
  request.mutable_agents(5)->set_behaviour_set("");
  const v1::DecideResponse full = Run(request);
  request.set_form(v1::DECISION_FORM_COMPACT);
  v1::DecideResponse compact;
  DecideBatch(catalog_, request, &compact);
  EXPECT_EQ(compact.decisions_size(), 0);
  const v1::CompactDecisions& c = compact.compact();
  ASSERT_EQ(c.action_index_size(), 12);
  ASSERT_EQ(c.target_index_size(), 12);
  ASSERT_EQ(c.score_size(), 12);
  ASSERT_EQ(c.flags().size(), 12u);
  EXPECT_FALSE(c.has_decision_id_base());  // offline: nothing numbers them
  // The sets in order of first appearance, each once.
  ASSERT_EQ(c.revisions_size(), 2);
  EXPECT_EQ(c.revisions(0).behaviour_set(), "arena_mage");
  EXPECT_EQ(c.revisions(0).revision(), arena_->revision());
  EXPECT_EQ(c.revisions(1).behaviour_set(), "villager_needs");
  EXPECT_EQ(c.revisions(1).revision(), needs->revision());
  ASSERT_EQ(c.full_size(), 1);
  EXPECT_EQ(c.full(0).agent(), 5);
  EXPECT_EQ(c.full(0).decision().error().field(), "agents[5].behaviour_set");
  int targets = 0;
  for (int i = 0; i < 12; ++i) {
    const v1::Decision& d = full.decisions(i);
    const int flags = static_cast<unsigned char>(c.flags()[i]);
    if (i == 5) {
      EXPECT_EQ(flags, v1::COMPACT_FLAG_FULL);
      EXPECT_EQ(c.action_index(i), -1);
      continue;
    }
    EXPECT_EQ(c.action_index(i), d.action_index()) << i;
    EXPECT_EQ(c.score(i), d.score()) << i;
    EXPECT_EQ((flags & v1::COMPACT_FLAG_SWITCHED) != 0, d.switched()) << i;
    EXPECT_EQ((flags & v1::COMPACT_FLAG_FALLBACK) != 0, d.fallback()) << i;
    EXPECT_EQ(flags & v1::COMPACT_FLAG_FULL, 0) << i;
    const int t = c.target_index(i);
    EXPECT_EQ(t >= 0 ? request.agents(i).targets(t).target_id() : "",
              d.target_id())
        << i;
    targets += t >= 0;
  }
  EXPECT_GT(targets, 0);
  // A second batch on the same thread starts clean.
  request.mutable_agents()->DeleteSubrange(3, 9);
  v1::DecideResponse again;
  DecideBatch(catalog_, request, &again);
  EXPECT_EQ(again.compact().action_index_size(), 3);
  EXPECT_EQ(again.compact().full_size(), 0);
  EXPECT_EQ(again.compact().action_index(0), c.action_index(0));
}

// Every crossing the answer names, sent back as a request with that one
// value changed (by name, as a client would), really changes the decision
// to the one named; the float before it does not. Trees and failed agents
// get none, and a request without sensitivity gets none.
TEST_F(DecideBatchTest, EverySensitivityCrossingChangesTheDecisionAsNamed) {
  v1::DecideRequest request;
  request.set_sensitivity(true);
  for (const auto& [name, set] : catalog_.sets()) {
    for (const v1::Scenario& s : set->definition.scenarios()) {
      *request.add_agents() = ScenarioSnapshot(name, s);
    }
  }
  v1::AgentSnapshot bad = StaffEmpty();
  bad.mutable_named_factors()->erase("health");
  *request.add_agents() = bad;
  const v1::DecideResponse response = Run(request);
  int crossings = 0, trees = 0;
  for (int i = 0; i < response.decisions_size(); ++i) {
    const v1::Decision& d = response.decisions(i);
    const v1::AgentSnapshot& agent = request.agents(i);
    SCOPED_TRACE(agent.agent_id());
    if (d.has_error() || d.tree_status() != v1::NODE_STATUS_UNSPECIFIED) {
      EXPECT_THAT(d.sensitivity(), IsEmpty());
      trees += !d.has_error();
      continue;
    }
    const LoadedSet& set = *catalog_.Find(agent.behaviour_set());
    EXPECT_EQ(
        d.sensitivity_size(),
        set.compiled.factor_count() +
            (d.target_id().empty() ? 0 : set.compiled.target_factor_count()));
    for (const v1::FactorSensitivity& s : d.sensitivity()) {
      for (const v1::Crossing* c : {&s.below(), &s.above()}) {
        if (c == &s.below() ? !s.has_below() : !s.has_above()) continue;
        ++crossings;
        SCOPED_TRACE(s.factor() + " at " + std::to_string(c->value()));
        EXPECT_FLOAT_EQ(c->change(), c->value() - s.value());
        v1::DecideRequest again;
        for (float v : {c->value(), std::nextafter(c->value(), s.value())}) {
          v1::AgentSnapshot* a = again.add_agents();
          *a = agent;
          if (s.target_id().empty()) {
            (*a->mutable_named_factors())[s.factor()] = v;
          } else {
            for (v1::TargetSnapshot& t : *a->mutable_targets()) {
              if (t.target_id() == s.target_id()) {
                (*t.mutable_named_factors())[s.factor()] = v;
              }
            }
          }
        }
        const v1::DecideResponse r = Run(again);
        EXPECT_EQ(r.decisions(0).action(), c->action());
        EXPECT_EQ(r.decisions(0).action_index(), c->action_index());
        EXPECT_EQ(r.decisions(0).target_id(), c->target_id());
        EXPECT_EQ(r.decisions(1).action(), d.action());
        EXPECT_EQ(r.decisions(1).target_id(), d.target_id());
      }
    }
  }
  EXPECT_GT(crossings, 20);
  EXPECT_GT(trees, 0);
  request.set_sensitivity(false);
  const v1::DecideResponse plain = Run(request);
  for (const v1::Decision& d : plain.decisions()) {
    EXPECT_THAT(d.sensitivity(), IsEmpty());
  }
}

TEST(CheckFormTest, TheCompactFormRefusesSensitivity) {
  v1::DecideRequest request;
  request.set_sensitivity(true);
  EXPECT_THAT(CheckForm(request), IsOk());
  request.set_form(v1::DECISION_FORM_COMPACT);
  EXPECT_THAT(CheckForm(request),
              ::utilityd::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("sensitivity: ")));
}

TEST(CheckFormTest, TheCompactFormRefusesExplanations) {
  v1::DecideRequest request;
  EXPECT_THAT(CheckForm(request), IsOk());
  request.set_form(v1::DECISION_FORM_COMPACT);
  EXPECT_THAT(CheckForm(request), IsOk());
  request.set_explain(v1::EXPLAIN_NONE);
  EXPECT_THAT(CheckForm(request), IsOk());
  request.set_explain(v1::EXPLAIN_TOP);
  EXPECT_THAT(CheckForm(request),
              ::utilityd::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("form: ")));
  request.set_form(v1::DECISION_FORM_FULL);
  EXPECT_THAT(CheckForm(request), IsOk());
}

// One numbering of error reasons: every reason of the wire is the engine's
// of the same number and name, and the other way round, and each travels
// from an engine status to the wire's Error unchanged.
TEST(ErrorReasonNumberingTest, EveryReasonIsTheWiresOfTheSameNumberAndName) {
  const google::protobuf::EnumDescriptor* wire = v1::ErrorReason_descriptor();
  ASSERT_EQ(static_cast<size_t>(wire->value_count()),
            std::size(engine::kErrorReasonNames));
  for (const engine::ErrorReasonName& r : engine::kErrorReasonNames) {
    const int number = static_cast<int>(r.reason);
    const google::protobuf::EnumValueDescriptor* v =
        wire->FindValueByNumber(number);
    ASSERT_NE(v, nullptr) << r.name;
    EXPECT_EQ(v->name(), std::string("ERROR_REASON_") + r.name);
    v1::Error out;
    ToError(engine::WithReason(absl::InvalidArgumentError("x"), r.reason),
            &out);
    EXPECT_EQ(static_cast<int>(out.reason()), number) << r.name;
  }
  for (int i = 0; i < wire->value_count(); ++i) {
    const int number = wire->value(i)->number();
    EXPECT_TRUE(std::any_of(std::begin(engine::kErrorReasonNames),
                            std::end(engine::kErrorReasonNames),
                            [&](const engine::ErrorReasonName& r) {
                              return static_cast<int>(r.reason) == number;
                            }))
        << wire->value(i)->name();
  }
}

}  // namespace
}  // namespace utilityd::codec

#include "utilityd/engine/curve.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace utilityd::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// kBump: rises up to x = 0.5, falls after it.
enum class Shape { kRising, kFalling, kBump };

struct CurveCase {
  std::string name;
  CurveDefinition def;
  float at0;  // expected f(0)
  float at1;  // expected f(1)
  Shape shape;
};

// Prints a case by name, so ctest's listing stays readable.
void PrintTo(const CurveCase& c, std::ostream* os) { *os << c.name; }

CurveDefinition Def(CurveKind kind) { return CurveDefinition{.kind = kind}; }

std::vector<CurveCase> Cases() {
  CurveDefinition poly_half = Def(CurveKind::kPolynomial);
  poly_half.exponent = 0.5;
  CurveDefinition logistic = Def(CurveKind::kLogistic);
  CurveDefinition logistic_rescaled = logistic;
  logistic_rescaled.rescale = true;
  CurveDefinition linear_offset = Def(CurveKind::kLinear);
  linear_offset.slope = 0.5;
  linear_offset.intercept = 0.25;
  CurveDefinition exp_neg = Def(CurveKind::kExponential);
  exp_neg.k = -3;
  CurveDefinition inverted = Def(CurveKind::kPolynomial);
  inverted.invert = true;
  CurveDefinition bump = Def(CurveKind::kSine);
  bump.frequency = 0.5;
  CurveDefinition piecewise = Def(CurveKind::kPiecewiseLinear);
  piecewise.points = {{0, 0.2}, {0.5, 0.9}, {1, 0.4}};
  CurveDefinition step = Def(CurveKind::kStep);
  step.threshold = 0.3;
  // L(0) and L(1) of the default logistic (k = 10, m = 0.5).
  const float l0 = 1.0f / (1.0f + std::exp(5.0f));
  const float l1 = 1.0f / (1.0f + std::exp(-5.0f));
  return {
      {"linear", Def(CurveKind::kLinear), 0, 1, Shape::kRising},
      {"linear_offset", linear_offset, 0.25f, 0.75f, Shape::kRising},
      {"quadratic", Def(CurveKind::kPolynomial), 0, 1, Shape::kRising},
      {"square_root", poly_half, 0, 1, Shape::kRising},
      {"inverse_quadratic", Def(CurveKind::kInverseQuadratic), 0, 1,
       Shape::kRising},
      {"exponential", Def(CurveKind::kExponential), 0, 1, Shape::kRising},
      {"exponential_negative_k", exp_neg, 0, 1, Shape::kRising},
      {"logistic", logistic, l0, l1, Shape::kRising},
      {"logistic_rescaled", logistic_rescaled, 0, 1, Shape::kRising},
      {"logit", Def(CurveKind::kLogit), 0, 1, Shape::kRising},
      {"normal", Def(CurveKind::kNormal), std::exp(-0.25f / (2 * 0.0225f)),
       std::exp(-0.25f / (2 * 0.0225f)), Shape::kBump},
      {"sine_quarter", Def(CurveKind::kSine), 0, 1, Shape::kRising},
      {"sine_bump", bump, 0, 0, Shape::kBump},
      {"smoothstep", Def(CurveKind::kSmoothstep), 0, 1, Shape::kRising},
      {"step", step, 0, 1, Shape::kRising},
      {"piecewise", piecewise, 0.2f, 0.4f, Shape::kBump},
      {"inverted_quadratic", inverted, 1, 0, Shape::kFalling},
  };
}

class CurveShapeTest : public ::testing::TestWithParam<CurveCase> {
 protected:
  float Eval(float x) {
    if (!compiled_) {
      curve_ = CompileCurve(GetParam().def, &points_);
      compiled_ = true;
    }
    return EvaluateCurve(curve_, x, points_);
  }

 private:
  bool compiled_ = false;
  CompiledCurve curve_;
  std::vector<CurvePoint> points_;
};

TEST_P(CurveShapeTest, StaysWithinZeroAndOne) {
  for (int i = -100; i <= 1100; ++i) {
    const float y = Eval(i / 1000.0f);
    ASSERT_GE(y, 0.0f) << "x=" << i / 1000.0f;
    ASSERT_LE(y, 1.0f) << "x=" << i / 1000.0f;
  }
}

TEST_P(CurveShapeTest, HitsItsEndpoints) {
  EXPECT_NEAR(Eval(0), GetParam().at0, 1e-5);
  EXPECT_NEAR(Eval(1), GetParam().at1, 1e-5);
}

TEST_P(CurveShapeTest, ClampsInputsOutsideZeroToOne) {
  EXPECT_EQ(Eval(-5), Eval(0));
  EXPECT_EQ(Eval(7), Eval(1));
}

TEST_P(CurveShapeTest, FollowsItsShape) {
  const Shape shape = GetParam().shape;
  float prev = Eval(0);
  for (int i = 1; i <= 1000; ++i) {
    const float x = i / 1000.0f;
    const float y = Eval(x);
    const bool rising =
        shape == Shape::kRising || (shape == Shape::kBump && x <= 0.5f);
    if (rising) {
      ASSERT_GE(y, prev - 1e-6f) << "x=" << x;
    } else {
      ASSERT_LE(y, prev + 1e-6f) << "x=" << x;
    }
    prev = y;
  }
  if (shape == Shape::kBump) {
    EXPECT_GT(Eval(0.5f), Eval(0.0f));
    EXPECT_GT(Eval(0.5f), Eval(1.0f));
  }
}

TEST_P(CurveShapeTest, MapsNanToZeroInput) {
  EXPECT_EQ(Eval(std::numeric_limits<float>::quiet_NaN()), Eval(0));
}

INSTANTIATE_TEST_SUITE_P(AllKinds, CurveShapeTest, ::testing::ValuesIn(Cases()),
                         [](const auto& p) { return p.param.name; });

float EvalDef(const CurveDefinition& def, float x) {
  std::vector<CurvePoint> points;
  const CompiledCurve c = CompileCurve(def, &points);
  return EvaluateCurve(c, x, points);
}

TEST(ResponseCurveTest, RescaledLogisticIsExactAtEnds) {
  CurveDefinition def = Def(CurveKind::kLogistic);
  def.rescale = true;
  for (double k : {1.0, 4.0, 10.0, 30.0}) {
    for (double m : {0.2, 0.5, 0.8}) {
      def.steepness = k;
      def.midpoint = m;
      EXPECT_EQ(EvalDef(def, 0.0f), 0.0f) << "k=" << k << " m=" << m;
      EXPECT_EQ(EvalDef(def, 1.0f), 1.0f) << "k=" << k << " m=" << m;
    }
  }
}

TEST(ResponseCurveTest, RawLogisticDoesNotVetoAtZero) {
  // Seed 004: with k = 10 and m = 0.5, L(0) ≈ 0.0067 and L(1) ≈ 0.9933.
  const CurveDefinition def = Def(CurveKind::kLogistic);
  EXPECT_NEAR(EvalDef(def, 0.0f), 0.0067, 5e-5);
  EXPECT_NEAR(EvalDef(def, 1.0f), 0.9933, 5e-5);
  EXPECT_NEAR(EvalDef(def, 0.5f), 0.5, 1e-6);
}

TEST(ResponseCurveTest, LogitInvertsTheLogistic) {
  CurveDefinition logistic = Def(CurveKind::kLogistic);
  logistic.steepness = 6;
  logistic.midpoint = 0.4;
  CurveDefinition logit = Def(CurveKind::kLogit);
  logit.steepness = 6;
  logit.midpoint = 0.4;
  for (float x : {0.1f, 0.3f, 0.5f, 0.7f}) {
    EXPECT_NEAR(EvalDef(logit, EvalDef(logistic, x)), x, 1e-4) << x;
  }
}

TEST(ResponseCurveTest, NamedShapesMatchTheirFormulas) {
  EXPECT_NEAR(EvalDef(Def(CurveKind::kPolynomial), 0.5f), 0.25f, 1e-6);
  EXPECT_NEAR(EvalDef(Def(CurveKind::kInverseQuadratic), 0.5f), 0.75f, 1e-6);
  EXPECT_NEAR(EvalDef(Def(CurveKind::kSmoothstep), 0.25f),
              0.25f * 0.25f * (3 - 0.5f), 1e-6);
  EXPECT_NEAR(EvalDef(Def(CurveKind::kExponential), 0.5f),
              std::expm1(2.0) / std::expm1(4.0), 1e-6);
  EXPECT_NEAR(EvalDef(Def(CurveKind::kSine), 0.5f), std::sin(M_PI / 4), 1e-6);
  EXPECT_NEAR(EvalDef(Def(CurveKind::kNormal), 0.5f), 1.0f, 1e-6);
  CurveDefinition linear = Def(CurveKind::kLinear);
  linear.slope = 2;
  EXPECT_EQ(EvalDef(linear, 0.75f), 1.0f);  // clamped
  linear.slope = -1;
  linear.intercept = 1;
  EXPECT_NEAR(EvalDef(linear, 0.2f), 0.8f, 1e-6);
}

TEST(ResponseCurveTest, StepSwitchesAtItsThreshold) {
  CurveDefinition step = Def(CurveKind::kStep);
  step.threshold = 0.3;
  EXPECT_EQ(EvalDef(step, 0.29f), 0.0f);
  EXPECT_EQ(EvalDef(step, 0.3f), 1.0f);
}

TEST(ResponseCurveTest, PiecewiseInterpolatesBetweenPoints) {
  CurveDefinition def = Def(CurveKind::kPiecewiseLinear);
  def.points = {{0.2, 0.0}, {0.6, 1.0}, {1.0, 0.5}};
  EXPECT_NEAR(EvalDef(def, 0.1f), 0.0f, 1e-6);  // before the first point
  EXPECT_NEAR(EvalDef(def, 0.4f), 0.5f, 1e-6);
  EXPECT_NEAR(EvalDef(def, 0.8f), 0.75f, 1e-6);
  EXPECT_NEAR(EvalDef(def, 1.0f), 0.5f, 1e-6);
}

TEST(ResponseCurveTest, InvertGivesOneMinusTheCurve) {
  CurveDefinition def = Def(CurveKind::kSmoothstep);
  const float plain = EvalDef(def, 0.3f);
  def.invert = true;
  EXPECT_NEAR(EvalDef(def, 0.3f), 1.0f - plain, 1e-6);
}

struct BadCurve {
  std::string name;
  CurveDefinition def;
  std::string path;
  std::string message;
};
void PrintTo(const BadCurve& c, std::ostream* os) { *os << c.name; }

class CurveValidationTest : public ::testing::TestWithParam<BadCurve> {};

TEST_P(CurveValidationTest, NamesTheBadParameter) {
  std::vector<ValidationIssue> issues;
  ValidateCurve(GetParam().def, "c.curve", &issues);
  ASSERT_THAT(issues,
              ElementsAre(Field(&ValidationIssue::path, GetParam().path)));
  EXPECT_THAT(issues[0].message, HasSubstr(GetParam().message));
}

std::vector<BadCurve> BadCurves() {
  std::vector<BadCurve> out;
  auto add = [&](std::string name, CurveKind kind, auto mutate,
                 std::string path, std::string message) {
    CurveDefinition d = Def(kind);
    mutate(d);
    out.push_back({std::move(name), d, std::move(path), std::move(message)});
  };
  add(
      "polynomial_zero", CurveKind::kPolynomial,
      [](CurveDefinition& d) { d.exponent = 0; }, "c.curve.polynomial.exponent",
      "must be > 0");
  add(
      "exponential_zero", CurveKind::kExponential,
      [](CurveDefinition& d) { d.k = 0; }, "c.curve.exponential.k",
      "must not be 0");
  add(
      "logistic_negative", CurveKind::kLogistic,
      [](CurveDefinition& d) { d.steepness = -2; },
      "c.curve.logistic.steepness", "must be > 0");
  add(
      "logistic_nan_midpoint", CurveKind::kLogistic,
      [](CurveDefinition& d) { d.midpoint = NAN; }, "c.curve.logistic.midpoint",
      "finite");
  add(
      "logit_huge", CurveKind::kLogit,
      [](CurveDefinition& d) { d.steepness = 1e6; }, "c.curve.logit.steepness",
      "at most 1000");
  add(
      "normal_stddev", CurveKind::kNormal,
      [](CurveDefinition& d) { d.stddev = 0; }, "c.curve.normal.stddev",
      "must be > 0");
  add(
      "sine_frequency", CurveKind::kSine,
      [](CurveDefinition& d) { d.frequency = -1; }, "c.curve.sine.frequency",
      "must be > 0");
  add(
      "step_threshold", CurveKind::kStep,
      [](CurveDefinition& d) { d.threshold = 2; }, "c.curve.step.threshold",
      "within 0..1");
  add(
      "piecewise_one_point", CurveKind::kPiecewiseLinear,
      [](CurveDefinition& d) {
        d.points = {{0, 0}};
      },
      "c.curve.piecewise_linear.points", "at least 2");
  add(
      "piecewise_unsorted", CurveKind::kPiecewiseLinear,
      [](CurveDefinition& d) {
        d.points = {{0.5, 0}, {0.5, 1}};
      },
      "c.curve.piecewise_linear.points[1]", "increase strictly");
  add(
      "piecewise_out_of_range", CurveKind::kPiecewiseLinear,
      [](CurveDefinition& d) {
        d.points = {{0, 0}, {1, 1.5}};
      },
      "c.curve.piecewise_linear.points[1]", "within 0..1");
  add(
      "linear_infinite", CurveKind::kLinear,
      [](CurveDefinition& d) { d.slope = INFINITY; }, "c.curve.linear.slope",
      "finite");
  return out;
}

INSTANTIATE_TEST_SUITE_P(Params, CurveValidationTest,
                         ::testing::ValuesIn(BadCurves()),
                         [](const auto& p) { return p.param.name; });

TEST(ValidateCurveTest, AcceptsDefaults) {
  for (CurveKind k : AllCurveKinds()) {
    if (k == CurveKind::kPiecewiseLinear) continue;  // needs points
    std::vector<ValidationIssue> issues;
    ValidateCurve(Def(k), "c", &issues);
    EXPECT_THAT(issues, IsEmpty()) << CurveKindName(k);
    // The same defaults with a number parameter made NaN are refused, at
    // that parameter's path: validation read the kind's parameters.
    for (const CurveParam& p : CurveParams(k)) {
      if (p.number == nullptr) continue;
      CurveDefinition bad = Def(k);
      bad.*p.number = std::numeric_limits<double>::quiet_NaN();
      std::vector<ValidationIssue> refused;
      ValidateCurve(bad, "c", &refused);
      ASSERT_FALSE(refused.empty()) << CurveKindName(k) << "." << p.name;
      EXPECT_THAT(refused[0].path, ::testing::HasSubstr(p.name))
          << CurveKindName(k);
    }
  }
}

TEST(CurveRegistryTest, EveryKindHasANameAndItsParameters) {
  ASSERT_EQ(AllCurveKinds().size(), 11u);
  for (size_t i = 0; i < AllCurveKinds().size(); ++i) {
    const CurveKind k = AllCurveKinds()[i];
    EXPECT_EQ(static_cast<size_t>(k), i);
    EXPECT_EQ(FindCurveKind(CurveKindName(k)), k);
    for (const CurveParam& p : CurveParams(k)) {
      EXPECT_EQ(
          (p.number != nullptr) + (p.flag != nullptr) + (p.points != nullptr),
          1)
          << CurveKindName(k) << "." << p.name;
    }
  }
  EXPECT_EQ(FindCurveKind("sigmoid"), std::nullopt);
  ASSERT_EQ(CurveParams(CurveKind::kLogistic).size(), 3u);
  EXPECT_STREQ(CurveParams(CurveKind::kLogistic)[0].name, "steepness");
  // Defaults are CurveDefinition's initial values.
  EXPECT_EQ(CurveDefinition().*CurveParams(CurveKind::kLogistic)[0].number, 10);
}

// Every kind, inverted or not, with the per-curve choices the column path
// makes once (polynomial exponents, a rescaled logistic): the column
// evaluation equals the scalar one bit for bit, over a grid that runs past
// both ends and includes NaN.
TEST(CurveColumnTest, EqualsScalarEvaluationForEveryKind) {
  std::vector<CurveDefinition> defs;
  for (CurveKind k : AllCurveKinds()) {
    for (bool invert : {false, true}) {
      CurveDefinition d = Def(k);
      d.invert = invert;
      if (k == CurveKind::kPiecewiseLinear) {
        d.points = {{0, 0.2}, {0.3, 0.9}, {0.7, 0.1}, {1, 0.6}};
      }
      defs.push_back(d);
      if (k == CurveKind::kPolynomial) {
        for (double e : {3.0, 0.5, 1.0, 1.7}) {
          d.exponent = e;
          defs.push_back(d);
        }
      }
      if (k == CurveKind::kLogistic) {
        d.rescale = true;
        defs.push_back(d);
      }
    }
  }
  std::vector<float> x;
  for (int i = -20; i <= 120; ++i) x.push_back(static_cast<float>(i) / 100);
  x.push_back(NAN);
  std::vector<float> y(x.size());
  for (const CurveDefinition& d : defs) {
    std::vector<CurvePoint> points;
    const CompiledCurve c = CompileCurve(d, &points);
    EvaluateCurveColumn(c, x.data(), y.data(), x.size(), points);
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(y[i], EvaluateCurve(c, x[i], points))
          << CurveKindName(d.kind) << " invert " << d.invert << " x " << x[i];
      ASSERT_GE(y[i], 0.0f);
      ASSERT_LE(y[i], 1.0f);
    }
  }
}

}  // namespace
}  // namespace utilityd::engine

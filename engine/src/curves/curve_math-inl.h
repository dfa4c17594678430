// The own maths of curve_math.h as Highway templates, and the vector
// evaluator of the kinds' shape expressions (VectorShape, curve_shape.h),
// for every file compiled per SIMD target that evaluates curves:
// curve_math.cc (the curve columns) and consider_column.cc (the fused
// consideration pass). Included
// once per target by those files (Highway's per-target include guard).
// Internal to the engine.
#if defined(UTILITYD_ENGINE_SRC_CURVE_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef UTILITYD_ENGINE_SRC_CURVE_MATH_INL_H_
#undef UTILITYD_ENGINE_SRC_CURVE_MATH_INL_H_
#else
#define UTILITYD_ENGINE_SRC_CURVE_MATH_INL_H_
#endif

#include <limits>
#include <type_traits>

#include "curves/curve_kinds.h"  // the kinds' OwnShape
#include "curves/curve_shape.h"
#include "hwy/highway.h"
#include "utilityd/engine/curve.h"

HWY_BEFORE_NAMESPACE();
namespace utilityd::engine::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
using Vec = hn::Vec<D>;

// p(x) = c[0] + c[1] x + ... + c[n-1] x^(n-1), by Horner's rule, each step
// a multiply then an add.
template <class D, typename T, size_t N>
HWY_INLINE Vec<D> Horner(D d, Vec<D> x, const T (&c)[N]) {
  Vec<D> p = hn::Set(d, c[N - 1]);
  for (size_t i = N - 1; i-- > 0;) p = hn::Add(hn::Mul(p, x), hn::Set(d, c[i]));
  return p;
}

// 1/k! for k = 0..11: e^r on |r| <= ln2/2 within 1e-14.
constexpr double kExpTaylor[] = {1.0,          1.0,           1.0 / 2,
                                 1.0 / 6,      1.0 / 24,      1.0 / 120,
                                 1.0 / 720,    1.0 / 5040,    1.0 / 40320,
                                 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800};
// 1/(k+1)! for k = 0..13: (e^x - 1)/x on |x| < 1/2 within 1e-16.
constexpr double kExpm1Taylor[] = {1.0,
                                   1.0 / 2,
                                   1.0 / 6,
                                   1.0 / 24,
                                   1.0 / 120,
                                   1.0 / 720,
                                   1.0 / 5040,
                                   1.0 / 40320,
                                   1.0 / 362880,
                                   1.0 / 3628800,
                                   1.0 / 39916800,
                                   1.0 / 479001600,
                                   1.0 / 6227020800.0,
                                   1.0 / 87178291200.0};
// 1/(2j+1) for j = 0..7: atanh(s)/s = sum z^j/(2j+1), z = s^2 <= 0.0295.
constexpr double kAtanh[] = {1.0,     1.0 / 3,  1.0 / 5,  1.0 / 7,
                             1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15};
// sin r / r and cos r as series in z = r^2, |r| <= pi/4.
constexpr double kSin[] = {
    1.0,          -1.0 / 6,        1.0 / 120,          -1.0 / 5040,
    1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800.0, -1.0 / 1307674368000.0};
constexpr double kCos[] = {
    1.0,         -1.0 / 2,       1.0 / 24,        -1.0 / 720,
    1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600, -1.0 / 87178291200.0};

// ln 2 and pi/2 split so that k * hi is exact for the k that occur
// (fdlibm's constants).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLog2e = 1.44269504088896338700e+00;
constexpr double kPio2_1 = 1.57079632673412561417e+00;
constexpr double kPio2_2 = 6.07710050630396597660e-11;
constexpr double kPio2_3 = 2.02226624871116645580e-21;
constexpr double kTwoOverPi = 6.36619772367581382433e-01;
// Adding 1.5 * 2^52 to an integral double |k| < 2^51 leaves k in the low
// bits of the sum's representation.
constexpr double kRoundMagic = 6755399441055744.0;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// e^x: x = k ln2 + r, |r| <= ln2/2; e^r by its series; times 2^k built in
// the exponent bits. 0 below -708, +inf above 708, NaN for NaN.
template <class D>
HWY_INLINE Vec<D> Exp(D d, Vec<D> x) {
  const hn::RebindToSigned<D> di;
  const auto nan = hn::IsNaN(x);
  const auto low = hn::Lt(x, hn::Set(d, -708.0));
  const auto high = hn::Gt(x, hn::Set(d, 708.0));
  Vec<D> v = hn::IfThenElse(nan, hn::Zero(d), x);
  v = hn::IfThenElse(low, hn::Zero(d), hn::IfThenElse(high, hn::Zero(d), v));
  const Vec<D> k = hn::Round(hn::Mul(v, hn::Set(d, kLog2e)));
  Vec<D> r = hn::Sub(v, hn::Mul(k, hn::Set(d, kLn2Hi)));
  r = hn::Sub(r, hn::Mul(k, hn::Set(d, kLn2Lo)));
  const Vec<D> p = Horner(d, r, kExpTaylor);
  const auto bits = hn::BitCast(di, hn::Add(k, hn::Set(d, kRoundMagic)));
  const Vec<D> scale = hn::BitCast(
      d, hn::ShiftLeft<52>(hn::Add(bits, hn::Set(di, int64_t{1023}))));
  Vec<D> y = hn::Mul(p, scale);
  y = hn::IfThenElse(low, hn::Zero(d), y);
  y = hn::IfThenElse(high, hn::Set(d, kInf), y);
  return hn::IfThenElse(nan, x, y);
}

// 1/k! for k = 0..7, in float: e^r on |r| <= ln2/2 within 6e-9 relatively.
constexpr float kExpTaylorF[] = {1.0f,       1.0f,       1.0f / 2,
                                 1.0f / 6,   1.0f / 24,  1.0f / 120,
                                 1.0f / 720, 1.0f / 5040};
// ln 2 in two floats: 355/512, whose products with the k that occur
// (|k| <= 127) are exact, and the rest.
constexpr float kLn2HiF = 0.693359375f;
constexpr float kLn2LoF = -2.12194440e-4f;
constexpr float kLog2eF = 1.44269504f;

// e^x in float, for the shapes computed in float (a logistic whose error
// bound allows it: docs/PERFORMANCE.md, "The logistic in float"): x = k ln2 +
// r, |r| <= ln2/2, e^r by its series, times 2^k built in the exponent bits.
// 0 below -87, +inf above 88 (where a logistic is 1 or 0 to within
// 1e-38), NaN for NaN. Relative error below 2^-22 (curve_math_test).
template <class D>
HWY_INLINE Vec<D> ExpF(D d, Vec<D> x) {
  static_assert(sizeof(hn::TFromD<D>) == 4);
  const hn::RebindToSigned<D> di;
  const auto nan = hn::IsNaN(x);
  const auto low = hn::Lt(x, hn::Set(d, -87.0f));
  const auto high = hn::Gt(x, hn::Set(d, 88.0f));
  const Vec<D> v = hn::IfThenZeroElse(hn::Or(nan, hn::Or(low, high)), x);
  const Vec<D> k = hn::Round(hn::Mul(v, hn::Set(d, kLog2eF)));
  Vec<D> r = hn::Sub(v, hn::Mul(k, hn::Set(d, kLn2HiF)));
  r = hn::Sub(r, hn::Mul(k, hn::Set(d, kLn2LoF)));
  const Vec<D> p = Horner(d, r, kExpTaylorF);
  const Vec<D> scale = hn::BitCast(
      d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, k), hn::Set(di, 127))));
  Vec<D> y = hn::Mul(p, scale);
  y = hn::IfThenElse(low, hn::Zero(d), y);
  y = hn::IfThenElse(high, hn::Set(d, std::numeric_limits<float>::infinity()),
                     y);
  return hn::IfThenElse(nan, x, y);
}

// e^x - 1: its own series near 0 (no cancellation), else e^x - 1.
template <class D>
HWY_INLINE Vec<D> Expm1(D d, Vec<D> x) {
  const auto small = hn::Lt(hn::Abs(x), hn::Set(d, 0.5));
  const Vec<D> s = hn::IfThenElse(small, x, hn::Zero(d));
  const Vec<D> near = hn::Mul(s, Horner(d, s, kExpm1Taylor));
  const Vec<D> far = hn::Sub(Exp(d, x), hn::Set(d, 1.0));
  return hn::IfThenElse(small, near, far);
}

// ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s),
// s = (m - 1) / (m + 1). -inf at 0, +inf at +inf, NaN below 0 and for NaN.
// (x is a float promoted to double, or a normal double: never subnormal
// here, where the exponent field would not be the exponent.)
template <class D>
HWY_INLINE Vec<D> Log(D d, Vec<D> x) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(du, x);
  // The exponent field as a double, exactly: placed in the low bits of
  // 2^52's representation.
  const Vec<D> two52 = hn::Set(d, 4503599627370496.0);
  const Vec<D> field = hn::Sub(
      hn::BitCast(d, hn::Or(hn::ShiftRight<52>(bits), hn::BitCast(du, two52))),
      two52);
  Vec<D> e = hn::Sub(field, hn::Set(d, 1023.0));
  Vec<D> m = hn::BitCast(
      d, hn::Or(hn::And(bits, hn::Set(du, uint64_t{0x000FFFFFFFFFFFFF})),
                hn::Set(du, uint64_t{0x3FF0000000000000})));
  const auto big = hn::Gt(m, hn::Set(d, 1.41421356237309504880));
  m = hn::IfThenElse(big, hn::Mul(m, hn::Set(d, 0.5)), m);
  e = hn::IfThenElse(big, hn::Add(e, hn::Set(d, 1.0)), e);
  const Vec<D> f = hn::Sub(m, hn::Set(d, 1.0));
  const Vec<D> s = hn::Div(f, hn::Add(m, hn::Set(d, 1.0)));
  const Vec<D> z = hn::Mul(s, s);
  const Vec<D> lnm = hn::Mul(hn::Add(s, s), Horner(d, z, kAtanh));
  Vec<D> y = hn::Add(hn::Mul(e, hn::Set(d, kLn2Hi)),
                     hn::Add(hn::Mul(e, hn::Set(d, kLn2Lo)), lnm));
  y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Set(d, -kInf), y);
  y = hn::IfThenElse(hn::Eq(x, hn::Set(d, kInf)), x, y);
  y = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Set(d, kNaN), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// sin x: x = k pi/2 + r, |r| <= pi/4 (pi/2 in three parts: exact products
// for |k| < 2^20, i.e. |x| below about 1.6e6); the quadrant k mod 4 picks
// sin r, cos r, -sin r or -cos r. NaN for NaN and infinities.
template <class D>
HWY_INLINE Vec<D> Sin(D d, Vec<D> x) {
  const hn::RebindToSigned<D> di;
  const auto bad = hn::Not(hn::IsFinite(x));
  const Vec<D> v = hn::IfThenElse(bad, hn::Zero(d), x);
  const Vec<D> k = hn::Round(hn::Mul(v, hn::Set(d, kTwoOverPi)));
  Vec<D> r = hn::Sub(v, hn::Mul(k, hn::Set(d, kPio2_1)));
  r = hn::Sub(r, hn::Mul(k, hn::Set(d, kPio2_2)));
  r = hn::Sub(r, hn::Mul(k, hn::Set(d, kPio2_3)));
  const Vec<D> z = hn::Mul(r, r);
  const Vec<D> sin_r = hn::Mul(r, Horner(d, z, kSin));
  const Vec<D> cos_r = Horner(d, z, kCos);
  const auto q = hn::And(hn::BitCast(di, hn::Add(k, hn::Set(d, kRoundMagic))),
                         hn::Set(di, int64_t{3}));
  const auto odd = hn::RebindMask(
      d, hn::Eq(hn::And(q, hn::Set(di, int64_t{1})), hn::Set(di, int64_t{1})));
  const auto negative = hn::RebindMask(
      d, hn::Eq(hn::And(q, hn::Set(di, int64_t{2})), hn::Set(di, int64_t{2})));
  Vec<D> y = hn::IfThenElse(odd, cos_r, sin_r);
  y = hn::IfThenElse(negative, hn::Neg(y), y);
  return hn::IfThenElse(bad, hn::Set(d, kNaN), y);
}

// x^a for x >= 0: e^(a ln x) (0 at x = 0 for a > 0).
template <class D>
HWY_INLINE Vec<D> Pow(D d, Vec<D> x, Vec<D> a) {
  return Exp(d, hn::Mul(a, Log(d, x)));
}

// A curve's constants in the evaluator's lane type (its floats, widened
// exactly for the own maths in double).
template <typename T>
struct Params {
  T a, b, c, d;
  bool rescale;
};

template <class D>
using ParamsFor = Params<hn::TFromD<D>>;

// VectorShape<E>::Run(d, params, x): the shape expression E of a curve
// kind's block (curve_shape.h) on a vector x of normalised inputs, one
// case per expression node, the same operations as shape::Scalar.
template <class E>
struct VectorShape;

template <>
struct VectorShape<shape::X> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D, const ParamsFor<D>&, Vec<D> x) {
    return x;
  }
};
template <int kIndex>
struct VectorShape<shape::Param<kIndex>> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D>) {
    static_assert(kIndex >= 0 && kIndex < 4);
    if constexpr (kIndex == 0) return hn::Set(d, p.a);
    if constexpr (kIndex == 1) return hn::Set(d, p.b);
    if constexpr (kIndex == 2) return hn::Set(d, p.c);
    return hn::Set(d, p.d);
  }
};
template <int kValue>
struct VectorShape<shape::Int<kValue>> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>&, Vec<D>) {
    return hn::Set(d, static_cast<hn::TFromD<D>>(kValue));
  }
};

// The nodes of one or two operands that map to one Highway operation.
#define UTILITYD_SHAPE_UNARY(Node, op)                                   \
  template <class E>                                                     \
  struct VectorShape<shape::Node<E>> {                                   \
    template <class D>                                                   \
    static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) { \
      return op(VectorShape<E>::Run(d, p, x));                           \
    }                                                                    \
  };
#define UTILITYD_SHAPE_BINARY(Node, op)                                      \
  template <class L, class R>                                                \
  struct VectorShape<shape::Node<L, R>> {                                    \
    template <class D>                                                       \
    static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) {     \
      return op(VectorShape<L>::Run(d, p, x), VectorShape<R>::Run(d, p, x)); \
    }                                                                        \
  };
UTILITYD_SHAPE_BINARY(Add, hn::Add)
UTILITYD_SHAPE_BINARY(Sub, hn::Sub)
UTILITYD_SHAPE_BINARY(Mul, hn::Mul)
UTILITYD_SHAPE_BINARY(Div, hn::Div)
UTILITYD_SHAPE_UNARY(Neg, hn::Neg)
UTILITYD_SHAPE_UNARY(Sqrt, hn::Sqrt)
#undef UTILITYD_SHAPE_UNARY
#undef UTILITYD_SHAPE_BINARY

template <class E>
struct VectorShape<shape::Square<E>> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) {
    const Vec<D> v = VectorShape<E>::Run(d, p, x);
    return hn::Mul(v, v);
  }
};
template <class L, class R>
struct VectorShape<shape::AtLeast<L, R>> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) {
    const auto at_least =
        hn::Ge(VectorShape<L>::Run(d, p, x), VectorShape<R>::Run(d, p, x));
    return hn::IfThenElseZero(at_least, hn::Set(d, 1));
  }
};
template <class E>
struct VectorShape<shape::ExactEnds<E>> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) {
    Vec<D> y = VectorShape<E>::Run(d, p, x);
    if (p.rescale) {
      y = hn::IfThenElse(hn::Le(x, hn::Zero(d)), hn::Zero(d), y);
      y = hn::IfThenElse(hn::Ge(x, hn::Set(d, 1)), hn::Set(d, 1), y);
    }
    return y;
  }
};

// The own maths' nodes, in double only (e^x also in float, below).
template <class D>
constexpr void OwnMathsInDouble() {
  static_assert(sizeof(hn::TFromD<D>) == 8,
                "e^x, ln x, x^a and sin x are own maths: an OwnShape, "
                "evaluated in double, not a FloatShape");
}
#define UTILITYD_SHAPE_OWN(Node, fn)                                     \
  template <class E>                                                     \
  struct VectorShape<shape::Node<E>> {                                   \
    template <class D>                                                   \
    static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) { \
      OwnMathsInDouble<D>();                                             \
      return fn(d, VectorShape<E>::Run(d, p, x));                        \
    }                                                                    \
  };
UTILITYD_SHAPE_OWN(Expm1, Expm1)
UTILITYD_SHAPE_OWN(Log, Log)
UTILITYD_SHAPE_OWN(Sin, Sin)
#undef UTILITYD_SHAPE_OWN
// e^x in double, or in float for the shapes a kind computes in float.
template <class E>
struct VectorShape<shape::Exp<E>> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) {
    const Vec<D> v = VectorShape<E>::Run(d, p, x);
    if constexpr (sizeof(hn::TFromD<D>) == 4) {
      return ExpF(d, v);
    } else {
      return Exp(d, v);
    }
  }
};
template <class L, class R>
struct VectorShape<shape::Pow<L, R>> {
  template <class D>
  static HWY_INLINE Vec<D> Run(D d, const ParamsFor<D>& p, Vec<D> x) {
    OwnMathsInDouble<D>();
    return Pow(d, VectorShape<L>::Run(d, p, x), VectorShape<R>::Run(d, p, x));
  }
};

// Clamps to 0..1 with NaN to 0, as Clamp01 does: x > 0 ? min(x, 1) : 0.
// Min's choice for a NaN differs between targets, but a NaN (and -0) is
// never above 0, so the result is the same bits on every target.
template <class DF>
HWY_INLINE Vec<DF> Clamp01(DF df, Vec<DF> x) {
  return hn::IfThenElseZero(hn::Gt(x, hn::Zero(df)),
                            hn::Min(x, hn::Set(df, 1.0f)));
}

template <typename T>
HWY_INLINE Params<T> ParamsOf(const CompiledCurve& c) {
  return {c.a, c.b, c.c, c.d, c.rescale};
}

// Calls visit(E{}) with the own-maths expression E of the curve's kind,
// when its block has one (curve_kinds.h); returns `otherwise` for the
// other kinds.
template <typename R, typename Visit>
R VisitOwnShape(CurveKind kind, R otherwise, Visit&& visit) {
  return VisitCurveKind(kind, [&](auto k) -> R {
    using K = decltype(k);
    if constexpr (HasOwnShape<K>) {
      return visit(typename K::OwnShape{});
    } else {
      return otherwise;
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace utilityd::engine::internal
HWY_AFTER_NAMESPACE();

#endif  // UTILITYD_ENGINE_SRC_CURVE_MATH_INL_H_

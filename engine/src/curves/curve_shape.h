// A curve kind's shape, written once in its block (curve_kinds.h) as a
// type: an expression over the normalised input X and the compiled
// constants A..D of CompiledCurve. Every evaluator reads the same
// expression, operation for operation, so that they round alike:
//   Scalar<E>          here, in float (single values, the scalar columns)
//   VectorShape<E>     curve_math-inl.h, per SIMD target: in float vectors
//                      for plain arithmetic (the fused consideration pass),
//                      in double vectors for the own maths (e^x, ln x, x^a,
//                      sin x, which only the double evaluator knows, but
//                      for e^x, which float shapes also use: OwnExpF)
// An evaluator has one case per node below and none per kind, so a new
// kind writes its formula and nothing else. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_CURVES_CURVE_SHAPE_H_
#define UTILITYD_ENGINE_SRC_CURVES_CURVE_SHAPE_H_

#include <cmath>
#include <cstddef>

#include "curves/curve_math.h"
#include "utilityd/engine/curve.h"

namespace utilityd::engine::internal::shape {

struct X {};  // the normalised input, clamped to 0..1
template <int kIndex>
struct Param {};  // CompiledCurve's a, b, c or d
using A = Param<0>;
using B = Param<1>;
using C = Param<2>;
using D = Param<3>;
template <int kValue>
struct Int {};  // a small integer constant
template <class L, class R>
struct Add {};
template <class L, class R>
struct Sub {};
template <class L, class R>
struct Mul {};
template <class L, class R>
struct Div {};
template <class E>
struct Neg {};
template <class E>
struct Square {};  // E computed once, times itself
template <class E>
struct Sqrt {};  // correctly rounded on every path
template <class L, class R>
struct AtLeast {};  // 1 where L >= R, else 0
// E, but exactly 0 at x <= 0 and 1 at x >= 1 when the curve is rescaled.
template <class E>
struct ExactEnds {};
// The own maths (double evaluator only): e^E, e^E - 1, ln E, sin E, L^R;
// e^E also in float (OwnExpF, one lane of the vector code).
template <class E>
struct Exp {};
template <class E>
struct Expm1 {};
template <class E>
struct Log {};
template <class E>
struct Sin {};
template <class L, class R>
struct Pow {};

// Alternative float shapes of one kind, of which the block's
// FloatCase(curve) picks one per curve (and a case past the last means
// the curve's shape is its own maths).
template <class... E>
struct Cases {};

template <class E>
struct CasesOf {
  using type = Cases<E>;
};
template <class... E>
struct CasesOf<Cases<E...>> {
  using type = Cases<E...>;
};

template <class E>
struct Scalar;  // Scalar<E>::Run(curve, x): E in float

template <>
struct Scalar<X> {
  static float Run(const CompiledCurve&, float x) { return x; }
};
template <int kIndex>
struct Scalar<Param<kIndex>> {
  static float Run(const CompiledCurve& c, float) {
    static_assert(kIndex >= 0 && kIndex < 4);
    if constexpr (kIndex == 0) return c.a;
    if constexpr (kIndex == 1) return c.b;
    if constexpr (kIndex == 2) return c.c;
    return c.d;
  }
};
template <int kValue>
struct Scalar<Int<kValue>> {
  static float Run(const CompiledCurve&, float) {
    return static_cast<float>(kValue);
  }
};
template <class L, class R>
struct Scalar<Add<L, R>> {
  static float Run(const CompiledCurve& c, float x) {
    return Scalar<L>::Run(c, x) + Scalar<R>::Run(c, x);
  }
};
template <class L, class R>
struct Scalar<Sub<L, R>> {
  static float Run(const CompiledCurve& c, float x) {
    return Scalar<L>::Run(c, x) - Scalar<R>::Run(c, x);
  }
};
template <class L, class R>
struct Scalar<Mul<L, R>> {
  static float Run(const CompiledCurve& c, float x) {
    return Scalar<L>::Run(c, x) * Scalar<R>::Run(c, x);
  }
};
template <class L, class R>
struct Scalar<Div<L, R>> {
  static float Run(const CompiledCurve& c, float x) {
    return Scalar<L>::Run(c, x) / Scalar<R>::Run(c, x);
  }
};
template <class E>
struct Scalar<Neg<E>> {
  static float Run(const CompiledCurve& c, float x) {
    return -Scalar<E>::Run(c, x);
  }
};
template <class E>
struct Scalar<Square<E>> {
  static float Run(const CompiledCurve& c, float x) {
    const float v = Scalar<E>::Run(c, x);
    return v * v;
  }
};
template <class E>
struct Scalar<Sqrt<E>> {
  static float Run(const CompiledCurve& c, float x) {
    return std::sqrt(Scalar<E>::Run(c, x));
  }
};
template <class L, class R>
struct Scalar<AtLeast<L, R>> {
  static float Run(const CompiledCurve& c, float x) {
    return Scalar<L>::Run(c, x) >= Scalar<R>::Run(c, x) ? 1.0f : 0.0f;
  }
};
template <class E>
struct Scalar<Exp<E>> {
  static float Run(const CompiledCurve& c, float x) {
    return OwnExpF(Scalar<E>::Run(c, x));
  }
};
template <class E>
struct Scalar<ExactEnds<E>> {
  static float Run(const CompiledCurve& c, float x) {
    if (c.rescale && x <= 0.0f) return 0.0f;
    if (c.rescale && x >= 1.0f) return 1.0f;
    return Scalar<E>::Run(c, x);
  }
};

}  // namespace utilityd::engine::internal::shape

#endif  // UTILITYD_ENGINE_SRC_CURVES_CURVE_SHAPE_H_

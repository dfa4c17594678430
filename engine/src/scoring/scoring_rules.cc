// The scoring rule that is not inline (utilityd/engine/scoring_rules.h):
// the geometric mean, in the own maths.
#include "utilityd/engine/scoring_rules.h"

#include "curves/curve_math.h"

namespace utilityd::engine {

float GeometricMean(float p, int n) {
  return static_cast<float>(internal::OwnPow(p, GeometricMeanExponent(n)));
}

}  // namespace utilityd::engine

#include "tests_scalar/suite.hpp"

#include "tests_scalar/families.hpp"

namespace gp::scalar {

std::span<const audit::ScalarProbe* const> probes() {
  static const std::vector<const audit::ScalarProbe*> probes = [] {
    std::vector<const audit::ScalarProbe*> v;
    add_rounding_probes(v);
    add_division_probes(v);
    add_storage_probes(v);
    add_register_probes(v);
    add_mad_probes(v);
    add_sign_symmetry_probes(v);
    add_subnormal_probes(v);
    add_subnormal_intermediate_probes(v);
    add_zero_probes(v);
    add_infinity_probes(v);
    add_nan_probes(v);
    add_adder_probes(v);
    add_multiplier_probes(v);
    add_binary16_probes(v);
    add_paranoia_probes(v);
    add_paranoia_sqrt_probes(v);
    add_paranoia_range_probes(v);
    add_fused_probes(v);
    add_ulp_error_probes(v);
    add_binary16_exhaustive_probes(v);
    return v;
  }();
  return probes;
}

}  // namespace gp::scalar

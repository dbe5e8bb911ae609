#include "tests_scalar/families.hpp"

namespace gp::audit {

std::span<const ScalarProbe* const> scalar_probes() {
  static const std::vector<const ScalarProbe*> probes = [] {
    std::vector<const ScalarProbe*> v;
    scalar::add_rounding_probes(v);
    scalar::add_division_probes(v);
    scalar::add_storage_probes(v);
    scalar::add_register_probes(v);
    scalar::add_mad_probes(v);
    scalar::add_sign_symmetry_probes(v);
    scalar::add_subnormal_probes(v);
    scalar::add_subnormal_intermediate_probes(v);
    scalar::add_zero_probes(v);
    scalar::add_infinity_probes(v);
    scalar::add_nan_probes(v);
    scalar::add_adder_probes(v);
    scalar::add_multiplier_probes(v);
    scalar::add_binary16_probes(v);
    scalar::add_paranoia_probes(v);
    scalar::add_paranoia_sqrt_probes(v);
    scalar::add_paranoia_range_probes(v);
    scalar::add_fused_probes(v);
    scalar::add_ulp_error_probes(v);
    scalar::add_binary16_exhaustive_probes(v);
    return v;
  }();
  return probes;
}

}  // namespace gp::audit

// The scalar probe families; each file of tests_scalar/ adds its probes to the registry.
#pragma once

#include <vector>

#include "audit/probe.hpp"

namespace gp::scalar {

void add_rounding_probes(std::vector<const audit::ScalarProbe*>& out);
void add_division_probes(std::vector<const audit::ScalarProbe*>& out);
void add_subnormal_intermediate_probes(std::vector<const audit::ScalarProbe*>& out);
void add_storage_probes(std::vector<const audit::ScalarProbe*>& out);
void add_register_probes(std::vector<const audit::ScalarProbe*>& out);
void add_mad_probes(std::vector<const audit::ScalarProbe*>& out);
void add_sign_symmetry_probes(std::vector<const audit::ScalarProbe*>& out);
void add_subnormal_probes(std::vector<const audit::ScalarProbe*>& out);
void add_zero_probes(std::vector<const audit::ScalarProbe*>& out);
void add_infinity_probes(std::vector<const audit::ScalarProbe*>& out);
void add_nan_probes(std::vector<const audit::ScalarProbe*>& out);
void add_adder_probes(std::vector<const audit::ScalarProbe*>& out);
void add_multiplier_probes(std::vector<const audit::ScalarProbe*>& out);
void add_binary16_probes(std::vector<const audit::ScalarProbe*>& out);
void add_paranoia_probes(std::vector<const audit::ScalarProbe*>& out);
void add_paranoia_sqrt_probes(std::vector<const audit::ScalarProbe*>& out);
void add_paranoia_range_probes(std::vector<const audit::ScalarProbe*>& out);
void add_fused_probes(std::vector<const audit::ScalarProbe*>& out);
void add_ulp_error_probes(std::vector<const audit::ScalarProbe*>& out);
void add_binary16_exhaustive_probes(std::vector<const audit::ScalarProbe*>& out);

}  // namespace gp::scalar

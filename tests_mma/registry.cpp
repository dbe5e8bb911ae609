#include "tests_mma/families.hpp"

namespace gp::audit {

std::span<const MmaProbe* const> mma_probes() {
  static const std::vector<const MmaProbe*> probes = [] {
    std::vector<const MmaProbe*> v;
    mma::add_mmasim_probes(v);
    mma::add_specials_probes(v);
    mma::add_fasi_probes(v);
    mma::add_valpey_probes(v);
    return v;
  }();
  return probes;
}

}  // namespace gp::audit

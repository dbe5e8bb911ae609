#include "tests_mma/suite.hpp"

#include "tests_mma/families.hpp"

namespace gp::mma {

std::span<const audit::MmaProbe* const> probes() {
  static const std::vector<const audit::MmaProbe*> probes = [] {
    std::vector<const audit::MmaProbe*> v;
    add_mmasim_probes(v);
    add_specials_probes(v);
    add_fasi_probes(v);
    add_valpey_probes(v);
    return v;
  }();
  return probes;
}

const audit::MmaProbe* probe(std::string_view id) {
  for (const audit::MmaProbe* p : probes())
    if (p->id() == id) return p;
  return nullptr;
}

}  // namespace gp::mma

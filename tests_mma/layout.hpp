// The layout check that gates every MMA configuration (audit/runner.cpp): before any arithmetic
// probe, tiles of exact values make sure that the backend puts each element of A, B and C where
// the unit reads it and reads D back from where the unit writes it. A wrong fragment layout or
// stride would otherwise come out as plausible, wrong arithmetic (a K mapping as a summation tree).
#pragma once

#include "audit/probe.hpp"

namespace gp::mma {

// Each output element of a check tile is one product A[i][k] * B[k][j] (row i of A holds one
// nonzero, at k = (i + t) mod K in tile t; B is dense; C[i][j] a zero of the product's sign) or
// C[i][j] alone (A and B zero), so it is exact whatever the unit's summation, alignment or rounding,
// and its random sign and exponent (powers of two, exact at any output precision) name the elements
// that made it. Every (i, k), (k, j) and (i, j) is met
// in two rounds of random values.
//
// A K permutation applied alike to A and B is not seen (no exact sum depends on the order), and
// needs no seeing: the model is stated in the positions the API's matrices give.
//
// ok with what was checked; error "layout check failed: <first wrong element>" or "the layout
// check could not run: <device error>"; unsupported when the formats cannot hold the tiles.
// Not one of the suite's probes: it asks the model nothing, and the runner runs it first, always.
class LayoutCheck final : public audit::MmaProbe {
 public:
  std::string_view id() const override { return "mma.layout"; }
  std::string_view title() const override { return "The layout of A, B, C and D"; }
  std::string_view source() const override { return "gpuparanoia"; }
  audit::Finding run(backends::Device& device, const backends::MmaConfig& cfg,
                     const audit::ProbeContext& ctx) const override;
  const audit::MmaQuestion* question() const override { return nullptr; }
};

}  // namespace gp::mma

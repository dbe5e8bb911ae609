#include "tests_scalar/ulp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/value.hpp"

namespace gp::scalar::paranoia {

std::optional<Exact> exact_result(const model::Format& f, backends::Node op, std::span<const std::uint64_t> x) {
  using backends::Node;
  switch (op) {
    case Node::add: return model::exact_result(f, model::Op::add, x);
    case Node::sub: return model::exact_result(f, model::Op::sub, x);
    case Node::mul: return model::exact_result(f, model::Op::mul, x);
    case Node::div: return model::exact_result(f, model::Op::div, x);
    case Node::sqrt: return model::exact_result(f, model::Op::sqrt, x);
    default: return std::nullopt;
  }
}

double q64_to_double(i128 q) { return std::ldexp(double(q), -64); }

void ErrorRange::add(i128 e, std::size_t index) {
  if (results == 0 || e < min) {
    min = e;
    argmin = index;
  }
  if (results == 0 || e > max) {
    max = e;
    argmax = index;
  }
  ++results;
}

bool ErrorRange::correctly_rounded() const {
  const i128 half = i128{1} << 63;
  return mismatches == 0 && nonfinite == 0 && min >= -half && max <= half;
}

bool ErrorRange::faithful() const {
  const i128 one = i128{1} << 64;
  return nonfinite == 0 && min > -one && max < one;
}

std::string ErrorRange::bounds() const {
  if (results == 0) return "[]";
  return fmt::format("[{:.5g}, {:.5g}]", min_ulps(), max_ulps());
}

nlohmann::json ErrorRange::to_json() const {
  nlohmann::json j = {{"results", results},
                      {"mismatches", mismatches},
                      {"nonfinite", nonfinite},
                      {"skipped", skipped},
                      {"correctly_rounded", correctly_rounded()},
                      {"faithful", faithful()}};
  if (results > 0) {
    j["min_ulps"] = min_ulps();
    j["max_ulps"] = max_ulps();
  }
  return j;
}

}  // namespace gp::scalar::paranoia

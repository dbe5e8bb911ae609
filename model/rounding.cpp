#include "model/rounding.hpp"

#include <array>

namespace gp::model {

namespace {
constexpr std::array<std::string_view, 11> rounding_names = {"rne", "rna", "rnz", "rnu", "rnd", "rno",
                                                             "rz",  "ru",  "rd",  "ra",  "ro"};
}

std::string_view name(Rounding r) { return rounding_names[std::size_t(r)]; }

std::optional<Rounding> find_rounding(std::string_view n) {
  for (std::size_t i = 0; i < rounding_names.size(); ++i)
    if (rounding_names[i] == n) return Rounding(i);
  return std::nullopt;
}

namespace detail {

Result round_slow(const Format& f, const Options& o, bool neg, int exp, std::uint64_t sig, bool sticky) {
  if (neg && !f.has_sign()) return invalid_result(f);
  const int lead = exp + msb(sig);
  if (lead > f.emax()) return overflow_result(f, o, neg);
  const int q = lead - f.man_bits > f.quantum_min() ? lead - f.man_bits : f.quantum_min();
  const Split s = split(sig, sticky, q - exp);
  const bool tiny = lead < f.emin() && tiny_after_rounding(f, o, neg, exp, sig, sticky, lead);
  // Magnitude encoding as in round_pack; for a format whose exponent field 0 is a normal binade
  // (ue8m0), a zero kept part gives -1: below the smallest value.
  const std::int64_t base = std::int64_t(q + f.man_bits + f.bias - 1) * (std::int64_t{1} << f.man_bits);
  std::int64_t mag = base + std::int64_t(s.kept);
  mag += increment(o.rounding, neg, std::uint64_t(mag), s.rest);
  if (mag > std::int64_t(f.max_finite_magnitude())) return overflow_result(f, o, neg);
  const bool inexact = s.rest != exact;
  Flags flags = inexact ? Flag::inexact : 0;
  if (tiny && inexact) flags |= Flag::underflow;
  const bool flush = tiny && o.ftz_out;
  if (mag < 0 || (mag == 0 && f.has_zero()) || flush) {
    Result z = zero(f, neg);
    z.flags |= flags | (flush ? Flag::underflow | Flag::inexact : 0);
    return z;
  }
  return {pack(f, neg, std::uint64_t(mag)), flags};
}

}  // namespace detail
}  // namespace gp::model

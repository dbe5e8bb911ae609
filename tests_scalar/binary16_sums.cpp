// binary16 sums computed wider, then rounded (Daumas, da Graca, Defour 2006, section 2.3, last
// paragraph): "the same additions with 16-bit floats: on NVIDIA, the additions are performed at
// full precision (26 bits) and then rounded to the destination format (11 bits)". Does a binary16
// a + b equal a binary16 adder's sum, or a wider register's sum (from that format's adder, with
// its guard bits) rounded to binary16, a double rounding? The candidates and the question are those
// of scalar.add.guard_bits on binary16 (the adders that reproduce its additions: every adder of
// binary16 and of the device's wider formats with every store), asked on the paper's 1.5 - 2^-i for
// i up to 28 (scaled into binary16's range), sums whose smaller operand lies below the binary16
// precision, and random pairs. Where a wider computation gives the sums of a binary16 adder (round
// to nearest twice through binary32: 24 >= 2*11 + 2, Figueroa; a directed store of a directed
// adder) the answer is that adder: the sums cannot tell. The chopped wide adder of the paper is what
// separates them: 1.5 - 2^-i stays 1.5 up to i = 25 rather than up to i = 12.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

std::string say_wider(const AdderAnswer& a) {
  const std::string adder = say_adder(a);
  if (a.registers) return "computed wider, then rounded: " + adder;
  // g guard bits: sums to 11 + g bits, then rounded to 11 (as [DGD]'s 26 bits chopped to 11 read).
  const std::string bits =
      a.adder.guard_bits ? fmt::format("sums to {} bits, then rounded to 11; ", 11 + *a.adder.guard_bits) : "";
  return fmt::format("the sums of a binary16 adder: {} ({}a wider sum rounded to binary16 may give the same)", adder,
                     bits);
}

class WiderSumsProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.binary16.wider_sums"; }
  std::string_view title() const override { return "binary16 sums computed wider, then rounded"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.3"; }
  bool applies(const Format& f) const override { return &f == &model::binary16; }
  // The adder's answer; the profile is the guard-bits probe's.
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"BINARY16 SUMS", "how binary16 sums are computed", audit::typed(say_wider)},
                                adder_question().ask};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const auto [k, imax] = adder_scale(f);
    const int p = f.precision();
    std::vector<Case> paper, cases;
    for (int i = 1; i <= imax; ++i) {
      paper.push_back({{value(f, false, k - 1, 3), pow2(f, k - i, true)}, fmt::format("1.5 + -2^-{}{}", i, times(k))});
      cases.push_back({{pow2(f, k), pow2(f, k - i)}, fmt::format("1 + 2^-{}{}", i, times(k))});
      if (i >= 2)
        cases.push_back({{value(f, false, k - 1, 3), value(f, true, k - i - 1, 3)},
                         fmt::format("1.5 + -1.5*2^-{}{}", i, times(k))});
      if (k - i - p + 1 >= f.emin() - f.man_bits)
        cases.push_back({{value(f, false, k - 1, 3), value(f, true, k - i - p + 1, (std::uint64_t{1} << (p - 1)) | 1)},
                         fmt::format("1.5 + -(1 + 2^-{})*2^-{}{}", p - 1, i, times(k))});
    }
    std::mt19937_64 rng(ctx.seed ^ 0x62696e61727931ULL);
    const std::uint64_t n = ctx.cases(64, 256, 16384);
    for (std::uint64_t c = 0; c < n; ++c) {
      const int d = int(rng() % std::uint64_t(imax + 1));
      const std::uint64_t a = random_normal(f, rng(), 0, rng() & 1, k, k);
      const std::uint64_t b = random_normal(f, rng(), 0, rng() & 1, k - d, k - d);
      cases.push_back({{a, b}, fmt::format("{} + {}", show(f, a), show(f, b))});
    }
    auto units = reproducing_adders(device, f, ctx);
    if (!units) return audit::failed(units.error());
    if (units->empty()) units->push_back(model::ieee_unit(f));  // no adder fits: nothing reproduces, said so
    audit::Finding finding;
    const Expr expr = backends::binary(Node::add, f);
    auto out =
        conclude(device, {{expr, paper}, {expr, cases}}, *units, question(), finding, {keep_all(), keep_some(8, 16)});
    if (!out) return audit::failed(out.error());
    if (const auto& j = finding.judgement; j && j->conclusion == audit::Conclusion::stated)
      finding.parameters["wider"] =
          j->answer.as<AdderAnswer>().registers ? nlohmann::json(true) : nlohmann::json(nullptr);
    // The paper's reading, a measurement: from which i on is 1.5 - 2^-i exactly 1.5?
    int until = 0;
    for (int i = imax; i >= 1; --i) {
      if ((*out)[0][std::size_t(i - 1)] != paper[std::size_t(i - 1)].operands[0]) break;
      until = i;
    }
    finding.parameters["one_and_half_minus_2^-i_is_1.5_from_i"] =
        until ? nlohmann::json(until) : nlohmann::json(nullptr);
    if (until) finding.verdict += fmt::format("; 1.5 - 2^-i = 1.5 from i = {}", until);
    return finding;
  }
};

}  // namespace

void add_binary16_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const WiderSumsProbe wider;
  out.push_back(&wider);
}

}  // namespace gp::scalar

// binary16 sums computed wider, then rounded (Daumas, da Graca, Defour 2006, section 2.3, last
// paragraph): "the same additions with 16-bit floats: on NVIDIA, the additions are performed at
// full precision (26 bits) and then rounded to the destination format (11 bits)". Does a binary16
// a + b equal the correctly rounded binary16 sum, or a binary32 sum (from the binary32 adder, with
// its guard bits) rounded to binary16, a double rounding? Hypotheses: every binary16 adder (0 to 4
// guard bits, sticky or not, chop or any mode, or correctly rounded), and every binary32 adder of
// the same kinds followed by a rounding to binary16 (chop, rne, ru, rd, ra). Cases: the paper's
// 1.5 - 2^-i for i up to 28 (scaled into binary16's range), sums whose smaller operand lies below
// the binary16 precision, and random pairs.
//
// Round to nearest twice through binary32 equals rounding once for binary16 sums (24 >= 2*11 + 2,
// Figueroa): then both families fit and the verdict says so. The chopped wide adder of the paper
// is what separates them: 1.5 - 2^-i stays 1.5 up to i = 25 rather than up to i = 12.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::AdderParams;
using model::Rounding;

class WiderSumsProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.binary16.wider_sums"; }
  std::string_view title() const override { return "binary16 sums computed wider, then rounded"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.3"; }
  bool applies(const Format& f) const override { return &f == &model::binary16; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const Format& w = model::binary32;
    const auto [k, imax] = adder_scale(f);
    const int p = f.precision();
    std::vector<Case> paper, cases;
    for (int i = 1; i <= imax; ++i) {
      paper.push_back({{value(f, false, k - 1, 3), pow2(f, k - i, true)}, fmt::format("1.5 + -2^-{}{}", i, times(k))});
      cases.push_back({{pow2(f, k), pow2(f, k - i)}, fmt::format("1 + 2^-{}{}", i, times(k))});
      if (i >= 2) cases.push_back({{value(f, false, k - 1, 3), value(f, true, k - i - 1, 3)}, fmt::format("1.5 + -1.5*2^-{}{}", i, times(k))});
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
    const std::vector<AdderParams> adders = adder_hypotheses(4);
    const std::vector<Rounding> narrowing = {Rounding::rne, Rounding::rz, Rounding::ru, Rounding::rd, Rounding::ra};
    std::vector<Hypothesis> hyps;
    std::vector<std::string> narrow_names, wide_names;
    // The two the question names first: the correctly rounded binary16 sum and the double rounding.
    hyps.push_back({"correctly rounded binary16 sum (rne)", [&f](const Case& c) {
                      return model::add(f, model::Options{}, c.operands[0], c.operands[1]).bits;
                    }});
    hyps.push_back({"binary32 sum rounded to binary16 (rne twice)", [&f, &w](const Case& c) {
                      const model::Options o;
                      const std::uint64_t a = model::cvt(w, f, o, c.operands[0]).bits, b = model::cvt(w, f, o, c.operands[1]).bits;
                      return model::cvt(f, w, o, model::add(w, o, a, b).bits).bits;
                    }});
    for (const AdderParams& a : adders) {
      const std::string nm = "binary16 adder " + describe_adder(a);
      narrow_names.push_back(nm);
      hyps.push_back({nm, [&f, a](const Case& c) { return model::adder_add(f, a, model::Options{}, c.operands[0], c.operands[1]).bits; }});
    }
    for (const AdderParams& a : adders)
      for (Rounding r : narrowing) {
        const std::string nm = fmt::format("binary32 adder {}, then {} to binary16", describe_adder(a), model::name(r));
        wide_names.push_back(nm);
        hyps.push_back({nm, [&f, &w, a, r](const Case& c) {
                          model::Options o;
                          const std::uint64_t x = model::cvt(w, f, o, c.operands[0]).bits, y = model::cvt(w, f, o, c.operands[1]).bits;
                          const std::uint64_t s = model::adder_add(w, a, o, x, y).bits;
                          o.rounding = r;
                          return model::cvt(f, w, o, s).bits;
                        }});
      }
    audit::Finding finding;
    const Expr expr = backends::binary(Node::add, f);
    auto s1 = select_some(device, expr, paper, hyps, finding, keep_all());
    if (!s1) return audit::failed(s1.error().message);
    auto s2 = select_some(device, expr, cases, hyps, finding, keep_some(8, 16));
    if (!s2) return audit::failed(s2.error().message);
    std::vector<std::string> narrow, wide;
    for (const std::string& h : s1->consistent) {
      if (std::find(s2->consistent.begin(), s2->consistent.end(), h) == s2->consistent.end()) continue;
      if (std::find(narrow_names.begin(), narrow_names.end(), h) != narrow_names.end()) narrow.push_back(h);
      if (std::find(wide_names.begin(), wide_names.end(), h) != wide_names.end()) wide.push_back(h);
    }
    const auto has = [&](const std::string& h) {
      return std::find(s1->consistent.begin(), s1->consistent.end(), h) != s1->consistent.end() &&
             std::find(s2->consistent.begin(), s2->consistent.end(), h) != s2->consistent.end();
    };
    int until = 0;  // 1.5 - 2^-i == 1.5 from i = until
    for (int i = imax; i >= 1; --i) {
      if (s1->outputs[std::size_t(i - 1)] != paper[std::size_t(i - 1)].operands[0]) break;
      until = i;
    }
    const auto first = [](const std::vector<std::string>& v) {
      return v.size() <= 3 ? join(v, " or ") : fmt::format("{} (and {} more)", join({v[0], v[1], v[2]}, " or "), v.size() - 3);
    };
    finding.parameters["binary16_adders"] = narrow.size() <= 16 ? nlohmann::json(narrow) : nlohmann::json(narrow.size());
    finding.parameters["wider_adders"] = wide.size() <= 16 ? nlohmann::json(wide) : nlohmann::json(wide.size());
    finding.parameters["one_and_half_minus_2^-i_is_1.5_from_i"] = until ? nlohmann::json(until) : nlohmann::json(nullptr);
    if (narrow.empty() && !wide.empty()) {
      finding.parameters["wider"] = true;
      finding.verdict = fmt::format("BINARY16 SUMS: computed wider, then rounded: {}", first(wide));
    } else if (!narrow.empty() && wide.empty()) {
      finding.parameters["wider"] = false;
      finding.verdict = fmt::format("BINARY16 SUMS: computed in binary16: {}", first(narrow));
    } else if (!narrow.empty() && has(hyps[0].name) && has(hyps[1].name)) {
      finding.parameters["wider"] = nullptr;
      finding.verdict =
          "BINARY16 SUMS: correctly rounded (rne); a binary32 sum rounded to binary16 gives the same results (rounding "
          "to nearest twice is innocuous: 24 >= 2 * 11 + 2)";
    } else if (!narrow.empty()) {
      finding.parameters["wider"] = nullptr;
      finding.verdict = fmt::format(
          "BINARY16 SUMS: a binary16 adder and a wider sum rounded to binary16 give the same results here: {}; or {}",
          first(narrow), first(wide));
    } else {
      finding.parameters["wider"] = nullptr;
      finding.verdict = "BINARY16 SUMS: neither a binary16 adder nor a binary32 sum rounded to binary16 fits";
    }
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

// The findings of Valpey, Li, Pai and Gopalakrishnan, "An SMT formalization of mixed-precision
// matrix multiplication" (section 4): bits shifted out at alignment are truncated, which is not
// round-toward-zero on an effective subtraction (4.2, table 3: 2 + (-2^-40) gives 2, RZ gives
// 2 - 2^-23), and the 5-term accumulator of Volta and Turing keeps 3 carry-out bits (4.3).
#include <fmt/format.h>

#include <algorithm>

#include "model/ops.hpp"
#include "tests_mma/families.hpp"

namespace gp::mma {
namespace {

using nlohmann::json;

using model::Rounding;

constexpr const char* kValpey = "Valpey, Li, Pai, Gopalakrishnan 2025, section ";

// A fused sum truncates the products' bits shifted out at alignment; how c joins it varies.
struct Truncation {
  CAlignmentAnswer c;
};
json answer_fields(const Truncation& t) {
  json j = answer_fields(t.c);
  j["products"] = "truncated";
  return j;
}
std::string say_truncation(const Truncation& t) {
  return fmt::format("products' bits shifted out are truncated; c is {}", describe(t.c.how));
}

MmaQuestion truncation_question() {
  return {{"ALIGNMENT", "what a fused sum does with the bits shifted out at alignment", audit::typed(say_truncation)},
          [](const MmaConfig&, const DotConfig& c) { return fused_only(c, Truncation{c_alignment_answer(c)}); }};
}

class TruncationProbe final : public ProbeBase {
 public:
  TruncationProbe()
      : ProbeBase("mma.valpey.truncation", "Truncation vs round-toward-zero on alignment: 2 + (-2^-e)",
                  std::string(kValpey) + "4.2, table 3", truncation_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const Format& fd = *cfg.d;
    auto cal = measure_kept_bits(device, cfg);
    if (!cal) return audit::failed(cal.error());
    const int F = cal->F ? *cal->F : fd.man_bits;
    // The small summand lies below the bits kept beside 2 (whose leading exponent is 1).
    std::vector<int> exps;
    for (int e : {40, F + 1, F + 2, F + 8, F + 15})
      if (e > F - 1 && std::find(exps.begin(), exps.end(), e) == exps.end()) exps.push_back(e);
    std::vector<DotCase> cases;
    std::vector<Exact> exact;
    for (int e : exps)
      for (bool negative_two : {false, true}) {
        const Exact small = pow2(-e, !negative_two);
        CaseBuilder b(cfg);
        b.product(0, pow2(1, negative_two));
        if (!b.c(small)) {
          b = CaseBuilder(cfg);
          b.product(0, pow2(1, negative_two));
          if (cfg.k >= 2)
            b.product(1, small);
          else
            b.set(-1, small);
        }
        if (!b.ok()) continue;
        cases.push_back(b.done(fmt::format("{} {} 2^-{}", negative_two ? "-2" : "2", negative_two ? "+" : "-", e)));
        exact.push_back(add(pow2(1, negative_two), small));
      }
    if (cases.empty()) return audit::unsupported("2 and 2^-e cannot be expressed in these formats");
    Reference trunc{"truncated at alignment", {}}, rz{"exact sum rounded toward zero", {}},
        rne{"exact sum rounded to nearest", {}};
    for (const Exact& v : exact) {
      trunc.outputs.push_back(*encode(fd, pow2(1, v.neg)));
      rz.outputs.push_back(round_to(fd, fd.man_bits, Rounding::rz, v));
      rne.outputs.push_back(round_to(fd, fd.man_bits, Rounding::rne, v));
    }
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    const std::vector<std::string> as = matching(*out, {trunc, rz, rne});
    const auto has = [&](const Reference& r) { return std::find(as.begin(), as.end(), r.name) != as.end(); };
    const std::string example = cases.front().note;
    f.parameters["matching"] = as;
    f.parameters["alignment"] = has(trunc) && !has(rz) ? nlohmann::json("truncation")
                                : has(rz)              ? nlohmann::json("round toward zero (sticky)")
                                                       : nlohmann::json(nullptr);
    if (has(trunc) && !has(rz)) {
      f.verdict = fmt::format(
          "ALIGNMENT: shifted-out bits are truncated, not rounded toward zero: {} gives {} where "
          "round-toward-zero gives {}",
          example, show(fd, (*out)[0]), show(fd, rz.outputs.front()));
      if (has(rne))
        f.message = "an exact sum rounded to nearest would give the same outputs: see mma.rounding for the rounding";
    } else if (has(rz)) {
      f.verdict =
          fmt::format("ALIGNMENT: the exact sum is rounded toward zero: {} gives {}", example, show(fd, (*out)[0]));
    } else {
      f.verdict = fmt::format("ALIGNMENT: {} gives {} (neither truncation nor a rounded exact sum)", example,
                              show(fd, (*out)[0]));
    }
    return f;
  }
};

class CarryOutProbe final : public ProbeBase {
 public:
  CarryOutProbe()
      : ProbeBase("mma.valpey.carry_bits",
                  "Carry-out bits of the accumulator: summands near 2 whose sum needs them all",
                  std::string(kValpey) + "4.3", carries_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const int K = cfg.k;
    const Format& fd = *cfg.d;
    // n summands of 1.75 (2 - 2^-2): their sum needs ceil(log2(1.75 n)) integer bits, i.e.
    // floor(log2(1.75 n)) carry-out bits beyond the leading one of a summand.
    const Exact v = {false, 7, -2};
    std::vector<DotCase> cases;
    std::vector<int> counts;
    std::vector<std::uint64_t> exact;  // one per case
    for (int n : {5, K + 1}) {
      if (n > K + 1 || n < 3 || std::find(counts.begin(), counts.end(), n) != counts.end()) continue;
      CaseBuilder b(cfg);
      b.c(v);
      for (int k = 0; k < n - 1; ++k) b.product(k, v);
      const Exact sum = {false, 7 * std::uint64_t(n), -2};
      const auto e = encode(fd, sum);
      if (!b.ok() || !e) continue;
      const std::string note = fmt::format("{} summands of 1.75 (c and {} products) = {}", n, n - 1, show(sum));
      cases.push_back(b.done(note));
      counts.push_back(n);
      exact.push_back(*e);
    }
    if (cases.empty()) return audit::unsupported("1.75 cannot be expressed in these formats, or K < 2");
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    std::vector<std::string> parts;
    bool all = true;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const bool ok = (*out)[i] == exact[i];
      all &= ok;
      const Exact sum = {false, 7 * std::uint64_t(counts[i]), -2};
      const int bits = model::msb(sum.sig) + sum.exp;
      parts.push_back(fmt::format("{} summands: {} ({} carry-out bits {})", counts[i], show(fd, (*out)[i]), bits,
                                  ok ? "kept" : "not kept"));
      f.parameters[fmt::format("carry_bits_{}_summands", counts[i])] =
          ok ? nlohmann::json(bits) : nlohmann::json(nullptr);
    }
    f.parameters["carries_kept"] = all;
    f.verdict = "CARRIES: " + join(parts, "; ", "; ");
    return f;
  }
};

}  // namespace

void add_valpey_probes(std::vector<const audit::MmaProbe*>& out) {
  static const TruncationProbe truncation;
  static const CarryOutProbe carries;
  out.push_back(&truncation);
  out.push_back(&carries);
}

}  // namespace gp::mma

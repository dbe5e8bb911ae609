#include "tests_scalar/compiler.hpp"

#include <fmt/format.h>

#include <random>

#include "tests_scalar/daumas_support.hpp"

namespace gp::scalar {
namespace {

using u64 = std::uint64_t;
constexpr std::size_t kCases = 32;
constexpr std::size_t kControlCases = 2 * kCases;  // (a*b)*c, the control of both canaries
constexpr std::size_t kShown = 4;  // observations kept per expression: the first cases that differ, else the first

// Outputs of an expression beside the same operations stored one at a time, and what one rounding
// gives.
struct Compared {
  std::size_t differ = 0, single = 0;
};

Compared compare_outputs(const Expr& expr, const std::vector<Case>& cases, const std::vector<u64>& out,
                         const std::vector<u64>& stored, const std::vector<u64>& one, audit::Finding& fi) {
  Compared c;
  std::vector<std::size_t> shown;  // the first cases that differ, else the first cases
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bool differs = out[i] != stored[i];
    c.differ += differs;
    c.single += differs && out[i] == one[i];
    if (differs && shown.size() < kShown) shown.push_back(i);
  }
  for (std::size_t i = 0; shown.empty() && i < std::min(cases.size(), kShown / 2); ++i) shown.push_back(i);
  for (const std::size_t i : shown) {
    audit::Observation o = observation(expr, cases[i], out[i]);
    o.predictions = {{"as stored", stored[i]}, {"one rounding", one[i]}};
    fi.observations.push_back(std::move(o));
  }
  return c;
}

// (a*b)*c beside its two products stored: which intermediates are kept wider than the storage. A
// multiply feeds no fused instruction, so a difference is the registers'. The cases that differ.
Expected<std::size_t> wider_registers(backends::Device& device, const Format& w, std::mt19937_64& rng) {
  std::vector<Case> cases;
  for (std::size_t i = 0; i < kControlCases; ++i)
    cases.push_back({{random_normal(w, rng(), 0, rng() & 1, 0, 0), random_normal(w, rng(), 0, false, 0, 0),
                      random_normal(w, rng(), 0, false, 0, 0)},
                     "(a * b) * c"});
  auto out = run_cases(device, compound(Node::mul, Node::mul, w), cases);
  if (!out) return out.error();
  auto stored = stepwise(device, w, Node::mul, Node::mul, cases);
  if (!stored) return stored.error();
  std::size_t differ = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) differ += (*out)[i] != (*stored)[i];
  return differ;
}

// Whether w is wider than f and binary64 holds exactly its products and sums of values near 1, so
// that the one rounding of the exact result is known.
bool narrows(const Format& w, const Format& f) {
  return w.precision() > f.precision() + 1 && 2 * w.precision() <= model::binary64.precision() && w.has_sign() &&
         w.emax() >= 2;
}

std::string say_registers(std::size_t differ) {
  return fmt::format(
      "not told apart from registers wider than the storage: (a * b) * c also differs from its "
      "products stored one at a time in {} of {} cases (scalar.register.* say which)",
      differ, kControlCases);
}

// Operands of w whose result in w is a tie of f that the exact value is not: the two roundings
// and the one round apart. [0]: products, [1]: sums; `one` holds the one rounding of each case.
struct NarrowingCases {
  std::vector<Case> cases[2];
  std::vector<u64> one[2];
};

NarrowingCases narrowing_cases(const Format& f, const Format& w, std::mt19937_64& rng) {
  const model::Options o;
  NarrowingCases nc;
  const auto exact = [&](u64 x) { return model::cvt(model::binary64, w, o, x).bits; };
  const auto keep = [&](int k, u64 a, u64 b, u64 in_w, u64 exact_value, const char* note) {
    const u64 two = model::cvt(f, w, o, in_w).bits, single = model::cvt(f, model::binary64, o, exact_value).bits;
    if (two == single || nc.cases[k].size() == kCases / 2) return;
    nc.cases[k].push_back({{a, b}, note});
    nc.one[k].push_back(single);
  };
  for (std::size_t attempt = 0; attempt < 64 * kCases && nc.cases[0].size() + nc.cases[1].size() < kCases; ++attempt) {
    const bool neg = rng() & 1;
    // A tie of f in [1, 2), exact in w.
    const u64 tie = value(w, neg, -(f.man_bits + 1), (u64{1} << (f.man_bits + 1)) | (2 * (rng() & f.man_mask()) + 1));
    const u64 a = random_normal(w, rng(), 0, false, 0, 0);
    const u64 b = model::div(w, o, tie, a).bits;
    keep(0, a, b, model::mul(w, o, a, b).bits, model::mul(model::binary64, o, exact(a), exact(b)).bits,
         "a * b near a tie of the narrower format");
    const u64 tiny = pow2(w, -(w.man_bits + 3), rng() & 1);
    keep(1, tie, tiny, model::add(w, o, tie, tiny).bits, model::add(model::binary64, o, exact(tie), exact(tiny)).bits,
         "a + b, a a tie of the narrower format, b below half an ulp of a");
  }
  return nc;
}

// The narrowing cases run as compiled, an operation of w converted to f, beside the operation
// stored in w and then converted: how many differ, how many of those are the one rounding.
struct NarrowingTotal {
  Compared compared;
  std::size_t n = 0;
};

Expected<NarrowingTotal> compare_narrowing(backends::Device& device, const Format& f, const Format& w,
                                           const NarrowingCases& nc, audit::Finding& fi) {
  NarrowingTotal total;
  for (int k = 0; k < 2; ++k) {
    const Node op = k == 0 ? Node::mul : Node::add;
    backends::ExprBuilder e(w, 2);
    e.cvt(e.op(op, e.in(0), e.in(1)), f);
    const Expr expr = e.done(&f);
    auto out = run_cases(device, expr, nc.cases[k]);
    if (!out) return out.error();
    auto in_w = run_cases(device, single(op, w), nc.cases[k]);
    if (!in_w) return in_w.error();
    std::vector<Case> stores;
    for (const u64 x : *in_w) stores.push_back({{x}, "stored"});
    auto stored = run_cases(device, backends::conversion(w, f), stores);
    if (!stored) return stored.error();
    const Compared c = compare_outputs(expr, nc.cases[k], *out, *stored, nc.one[k], fi);
    total.compared.differ += c.differ;
    total.compared.single += c.single;
    total.n += nc.cases[k].size();
  }
  return total;
}

// What the narrowing from w to f shows, in the verdict's words; its parameters go in `entry`.
Expected<std::string> say_narrowing(backends::Device& device, const Format& f, const Format& w, const NarrowingTotal& t,
                                    std::mt19937_64& rng, nlohmann::json& entry) {
  const Compared& total = t.compared;
  const std::size_t n = t.n;
  entry = {{"cases", n}, {"differ", total.differ}, {"one_rounding", total.single}};
  const std::string head = fmt::format("{} products and sums converted to {}", w.name, f.name);
  if (total.differ == 0) {
    entry["folded"] = false;
    return fmt::format("{}: as stored ({} cases)", head, n);
  }
  auto wide = wider_registers(device, w, rng);
  if (!wide) return wide.error();
  if (*wide) {
    entry["folded"] = nullptr;
    return fmt::format("{}: {} of {} cases differ from the operations stored one at a time, {}", head, total.differ, n,
                       say_registers(*wide));
  }
  entry["folded"] = true;
  return fmt::format(
      "{}: the compiled code folds the operation into the conversion: {} of {} cases differ from the two roundings "
      "stored one at a time ({} of them are the one rounding of the exact result); findings of expressions that "
      "convert a {} result to {} describe the compiler's code, not the unit",
      head, total.differ, n, total.single, w.name, f.name);
}

}  // namespace

audit::Finding ContractionCanary::run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const {
  if (f.man_bits < 2)
    return audit::unsupported(fmt::format("{} has too few fraction bits for a product's rounding error", f.name));
  std::mt19937_64 rng(ctx.seed ^ 0x636f6e7472616374ULL);
  std::vector<Case> products;
  for (std::size_t i = 0; i < kCases; ++i)
    products.push_back(
        {{random_normal(f, rng(), 0, rng() & 1, 0, 0), random_normal(f, rng(), 0, false, 0, 0)}, "a * b"});
  auto p = run_cases(device, single(Node::mul, f), products);
  if (!p) return audit::failed(p.error());
  audit::Finding fi;
  Compared total;
  // c is the device's own product: a*b + (-c) and a*b - c are 0 from two roundings of any unit.
  for (const Node op : {Node::add, Node::sub}) {
    std::vector<Case> cases;
    std::vector<u64> one;
    for (std::size_t i = 0; i < kCases; ++i) {
      const u64 a = products[i].operands[0], b = products[i].operands[1];
      const u64 c = op == Node::add ? negate(f, (*p)[i]) : (*p)[i];
      cases.push_back(
          {{a, b, c}, op == Node::add ? "a * b + c, c = -(a * b) as stored" : "a * b - c, c = a * b as stored"});
      one.push_back(model::fma(f, model::Options{}, a, b, op == Node::add ? c : negate(f, c)).bits);
    }
    const Expr expr = compound(Node::mul, op, f);
    auto out = run_cases(device, expr, cases);
    if (!out) return audit::failed(out.error());
    auto stored = stepwise(device, f, Node::mul, op, cases);
    if (!stored) return audit::failed(stored.error());
    const Compared c = compare_outputs(expr, cases, *out, *stored, one, fi);
    total.differ += c.differ;
    total.single += c.single;
  }
  const std::size_t n = 2 * kCases;
  fi.parameters = {{"cases", n}, {"differ", total.differ}, {"one_rounding", total.single}};
  if (total.differ == 0) {
    fi.parameters["contracted"] = false;
    fi.verdict = fmt::format(
        "CONTRACTION: none: a * b + c and a * b - c written as two roundings are computed as "
        "two ({} cases as stored)",
        n);
    return fi;
  }
  auto wide = wider_registers(device, f, rng);
  if (!wide) return audit::failed(wide.error());
  fi.parameters["registers_differ"] = *wide;
  if (*wide) {
    fi.parameters["contracted"] = nullptr;
    fi.verdict = fmt::format("CONTRACTION: {} of {} cases differ from the operations stored one at a time, {}",
                             total.differ, n, say_registers(*wide));
    return fi;
  }
  fi.parameters["contracted"] = true;
  fi.verdict = fmt::format(
      "CONTRACTION: the compiled code fuses a * b + c written as two roundings: {} of {} cases differ from the two "
      "operations stored one at a time ({} of them are the one rounding of fma(a, b, c)); findings of expressions "
      "that multiply then add in {} describe the compiler's code, not the unit",
      total.differ, n, total.single, f.name);
  return fi;
}

bool NarrowingCanary::applies(const Format& f) const {
  for (const Format* w : model::all_formats())
    if (narrows(*w, f)) return true;
  return false;
}

audit::Finding NarrowingCanary::run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const {
  std::vector<const Format*> wider;
  for (const Format* w : device.caps().formats)
    if (narrows(*w, f)) wider.push_back(w);
  if (wider.empty())
    return audit::unsupported(
        fmt::format("the device computes in no format wider than {} whose products binary64 holds exactly", f.name));
  std::mt19937_64 rng(ctx.seed ^ 0x6e6172726f77ULL);
  audit::Finding fi;
  std::vector<std::string> said;
  for (const Format* w : wider) {
    const NarrowingCases nc = narrowing_cases(f, *w, rng);
    const auto total = compare_narrowing(device, f, *w, nc, fi);
    if (!total) return audit::failed(total.error());
    auto line = say_narrowing(device, f, *w, *total, rng, fi.parameters["from"][w->name]);
    if (!line) return audit::failed(line.error());
    said.push_back(std::move(*line));
  }
  fi.verdict = "NARROWING: " + fmt::format("{}", fmt::join(said, "; "));
  return fi;
}

std::span<const audit::ScalarProbe* const> canaries() {
  static const ContractionCanary contraction;
  static const NarrowingCanary narrowing;
  static const audit::ScalarProbe* const all[] = {&contraction, &narrowing};
  return all;
}

void CompiledCode::learn(const nlohmann::json& canary) {
  if (canary.value("status", "") != "ok") return;
  const std::string probe = canary.value("probe", ""), format = canary.value("format", "");
  const nlohmann::json& parameters = canary.contains("parameters") ? canary["parameters"] : nlohmann::json::object();
  if (probe == ContractionCanary().id() && parameters.value("contracted", nlohmann::json()) == true)
    contracted_[format] = fmt::format(
        "the compiled code fuses a multiply into the addition or subtraction that follows it in {} ({}), and this "
        "probe's expressions multiply then add",
        format, probe);
  if (probe == NarrowingCanary().id() && parameters.contains("from") && parameters["from"].is_object())
    for (const auto& [w, entry] : parameters["from"].items())
      if (entry.is_object() && entry.value("folded", nlohmann::json()) == true)
        folded_[{w, format}] = fmt::format(
            "the compiled code folds {} operations into the conversion to {} ({}), and this probe's expressions "
            "convert such a result",
            w, format, probe);
}

std::string CompiledCode::altered(const Expr& expr) const {
  const auto& code = expr.code;
  for (const backends::Instr& in : code) {
    if (in.op == Node::add || in.op == Node::sub)
      for (int k = 0; k < 2; ++k) {
        const backends::Instr& arg = code[in.arg[k]];
        if (arg.op != Node::mul || arg.format != in.format) continue;
        if (auto it = contracted_.find(std::string_view(in.format->name)); it != contracted_.end()) return it->second;
      }
    if (in.op == Node::cvt) {
      const backends::Instr& arg = code[in.arg[0]];
      if (arg.op != Node::mul && arg.op != Node::add && arg.op != Node::sub) continue;
      if (auto it = folded_.find(std::pair<std::string, std::string>(arg.format->name, in.format->name));
          it != folded_.end())
        return it->second;
    }
  }
  return "";
}

}  // namespace gp::scalar

#include "tests_scalar/daumas_support.hpp"

#include <fmt/format.h>

#include <memory>

namespace gp::scalar {

namespace {

std::uint64_t flush(const Format& f, std::uint64_t x) {
  return model::classify(f, x) == model::Class::subnormal ? model::zero(f, model::sign_of(f, x)).bits : x;
}

std::uint64_t quiet(const Format& f, std::uint64_t x) {
  if (model::classify(f, x) != model::Class::signaling_nan) return x;
  return x | (f.quiet_bit() << f.pad_bits);
}

}  // namespace

std::uint64_t model_eval(const Expr& e, std::span<const std::uint64_t> x, const ModelPolicy& p) {
  std::vector<std::uint64_t> r(e.code.size());
  for (std::size_t i = 0; i < e.code.size(); ++i) {
    const backends::Instr& in = e.code[i];
    const Format& f = *e.format_of(i);
    const auto a = [&](int k) { return r[in.arg[k]]; };
    switch (in.op) {
      case Node::input: {
        std::uint64_t v = x[in.arg[0]];
        if (p.flush_load) v = flush(f, v);
        if (p.quiet_load) v = quiet(f, v);
        r[i] = v;
        break;
      }
      case Node::add: r[i] = model::add(f, p.o, a(0), a(1)).bits; break;
      case Node::sub: r[i] = model::sub(f, p.o, a(0), a(1)).bits; break;
      case Node::mul: r[i] = model::mul(f, p.o, a(0), a(1)).bits; break;
      case Node::div: r[i] = model::div(f, p.o, a(0), a(1)).bits; break;
      case Node::sqrt: r[i] = model::sqrt(f, p.o, a(0)).bits; break;
      case Node::fma: r[i] = model::fma(f, p.o, a(0), a(1), a(2)).bits; break;
      case Node::mad:
        r[i] = p.fused_mad ? model::fma(f, p.o, a(0), a(1), a(2)).bits
                           : model::add(f, p.o, model::mul(f, p.o, a(0), a(1)).bits, a(2)).bits;
        break;
      case Node::neg: r[i] = a(0) ^ f.sign_mask(); break;
      case Node::cvt: r[i] = model::cvt(f, *e.format_of(in.arg[0]), p.o, a(0)).bits; break;
    }
  }
  std::uint64_t out = r.back();
  if (p.flush_store) out = flush(*e.output_format, out);
  return out;
}

std::function<std::uint64_t(const Case&)> model_predictor(const Expr& expr, const ModelPolicy& p) {
  return [&expr, p](const Case& c) { return model_eval(expr, c.operands, p); };
}

Hypothesis tabled(std::string name, const std::vector<Case>& cases, std::vector<std::uint64_t> predictions) {
  return {std::move(name), [&cases, v = std::move(predictions)](const Case& c) { return v.at(index_of(cases, c)); }};
}

Expr single(Node op, const Format& f) {
  switch (op) {
    case Node::sqrt:
    case Node::neg: return backends::unary(op, f);
    case Node::fma:
    case Node::mad: return backends::ternary(op, f);
    default: return backends::binary(op, f);
  }
}

Expr compound(Node op1, Node op2, const Format& f) {
  backends::ExprBuilder b(f, 3);
  const int x = b.in(0), y = b.in(1), z = b.in(2);
  b.op(op2, b.op(op1, x, y), z);
  return b.done();
}

Expected<std::vector<std::uint64_t>> stepwise(backends::Device& device, const Format& f, Node op1, Node op2,
                                              const std::vector<Case>& cases) {
  std::vector<Case> first, second;
  for (const Case& c : cases) first.push_back({{c.operands.at(0), c.operands.at(1)}, c.note});
  auto t = run_cases(device, single(op1, f), first);
  if (!t) return t.error();
  for (std::size_t i = 0; i < cases.size(); ++i) second.push_back({{(*t)[i], cases[i].operands.at(2)}, cases[i].note});
  return run_cases(device, single(op2, f), second);
}

Selection judge(const Expr& expr, const std::vector<Case>& cases, std::vector<std::uint64_t> outputs,
                const std::vector<Hypothesis>& hypotheses, audit::Finding& finding, const KeepFn& keep,
                bool nan_equivalent, std::size_t record_all_up_to) {
  const Format& of = *expr.output_format;
  const auto same = [&](std::uint64_t a, std::uint64_t b) {
    if (a == b) return true;
    return nan_equivalent && model::is_nan(model::classify(of, a)) && model::is_nan(model::classify(of, b));
  };
  Selection s{{}, std::move(outputs)};
  const std::size_t nh = hypotheses.size();
  std::vector<bool> alive(nh, true);
  std::vector<std::uint64_t> pred(nh);
  std::vector<std::size_t> kept;             // case indices that become observations
  std::vector<std::vector<std::uint64_t>> kept_pred;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    for (std::size_t h = 0; h < nh; ++h) {
      pred[h] = hypotheses[h].predict(cases[i]);
      if (!same(pred[h], s.outputs[i])) alive[h] = false;
    }
    const bool differs = nh != 0 && !same(pred[0], s.outputs[i]);
    if (!keep(i, differs)) continue;
    kept.push_back(i);
    kept_pred.push_back(pred);
  }
  // Many hypotheses: the observations carry the consistent ones and the first few (references).
  std::vector<bool> recorded(nh, true);
  if (nh > record_all_up_to)
    for (std::size_t h = 0; h < nh; ++h) recorded[h] = alive[h] || h < 4;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const std::size_t i = kept[k];
    audit::Observation o;
    o.inputs = cases[i].operands;
    o.output = s.outputs[i];
    o.input_bits = expr.input_format->storage_bits;
    o.output_bits = of.storage_bits;
    o.note = cases[i].note;
    for (std::size_t h = 0; h < nh; ++h)
      if (recorded[h]) o.predictions.emplace_back(hypotheses[h].name, kept_pred[k][h]);
    finding.observations.push_back(std::move(o));
  }
  for (std::size_t h = 0; h < nh; ++h)
    if (alive[h]) s.consistent.push_back(hypotheses[h].name);
  return s;
}

Expected<Selection> select_some(backends::Device& device, const Expr& expr, const std::vector<Case>& cases,
                                const std::vector<Hypothesis>& hypotheses, audit::Finding& finding, const KeepFn& keep,
                                bool nan_equivalent, std::size_t record_all_up_to) {
  auto out = run_cases(device, expr, cases);
  if (!out) return out.error();
  return judge(expr, cases, std::move(*out), hypotheses, finding, keep, nan_equivalent, record_all_up_to);
}


Expected<Battery> select_all(backends::Device& device, const std::vector<Group>& groups, const HypothesisFactory& make,
                             audit::Finding& finding, bool nan_equivalent) {
  Battery b;
  bool first = true;
  for (const Group& g : groups) {
    if (g.cases.empty()) {
      b.outputs.emplace_back();
      continue;
    }
    const std::vector<Hypothesis> hyps = make(g.expr, g.cases);
    auto sel = select(device, g.expr, g.cases, hyps, finding, nan_equivalent);
    if (!sel) return sel.error();
    b.outputs.push_back(sel->outputs);
    if (first) {
      b.consistent = sel->consistent;
      first = false;
      continue;
    }
    std::vector<std::string> both;
    for (const std::string& h : b.consistent)
      if (std::find(sel->consistent.begin(), sel->consistent.end(), h) != sel->consistent.end()) both.push_back(h);
    b.consistent = std::move(both);
  }
  return b;
}

std::vector<std::string> deviations(const std::vector<Group>& groups, const Battery& b, const HypothesisFactory& make,
                                    const std::string& reference, bool nan_equivalent,
                                    std::size_t limit) {
  std::vector<std::string> out;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    if (g.cases.empty()) continue;
    const std::vector<Hypothesis> hyps = make(g.expr, g.cases);
    const auto h = std::find_if(hyps.begin(), hyps.end(), [&](const Hypothesis& x) { return x.name == reference; });
    if (h == hyps.end()) continue;
    const Format& of = *g.expr.output_format;
    for (std::size_t i = 0; i < g.cases.size(); ++i) {
      const std::uint64_t want = h->predict(g.cases[i]), got = b.outputs[gi][i];
      const bool nan_both = model::is_nan(model::classify(of, want)) && model::is_nan(model::classify(of, got));
      if (want == got || (nan_equivalent && nan_both)) continue;
      if (out.size() < limit)
        out.push_back(fmt::format("{} = {} ({}: {})", g.cases[i].note, show(of, got), reference, show(of, want)));
      else if (out.size() == limit)
        out.push_back("...");
    }
  }
  return out;
}

Wide round_to_bits(model::u128 sig, int exp, int q, model::Rounding r) {
  const int drop = model::msb(sig) + 1 - q;
  if (drop <= 0) return {sig, exp};
  const model::u128 kept = sig >> drop, rest = sig & ((model::u128{1} << drop) - 1);
  const model::u128 half = model::u128{1} << (drop - 1);
  bool up = false;
  if (r == model::Rounding::rne) up = rest > half || (rest == half && (kept & 1));
  else if (r != model::Rounding::rz) throw std::logic_error("round_to_bits: only rne and rz");
  Wide w{kept + (up ? 1 : 0), exp + drop};
  if (w.sig >> q) {  // carried into a new binade
    w.sig >>= 1;
    ++w.exp;
  }
  return w;
}

std::uint64_t pack_wide(const Format& f, model::Rounding r, bool neg, Wide w) {
  model::Options o;
  o.rounding = r;
  if (w.sig == 0) return model::zero(f, neg).bits;
  int exp = w.exp;
  const std::uint64_t s = model::narrow_jam(w.sig, exp);
  return model::round_pack(f, o, neg, exp, s).bits;
}

std::string describe_adder(const model::AdderParams& a) {
  if (!a.guard_bits) return fmt::format("correctly rounded ({})", model::name(a.rounding.mode));
  const int g = *a.guard_bits;
  return fmt::format("{}, {} guard bit{}, {}",
                     a.rounding.chop ? std::string("chopped") : "rounded " + std::string(model::name(a.rounding.mode)),
                     g, g == 1 ? "" : "s", a.sticky ? "sticky bit" : "no sticky bit");
}

std::vector<model::AdderParams> adder_hypotheses(int gmax) {
  using model::Rounding;
  using model::UnitRounding;
  std::vector<model::AdderParams> v = {{UnitRounding::ieee(Rounding::rne), std::nullopt, false},
                                       {UnitRounding::chopped(), 2, false},
                                       {UnitRounding::chopped(), 1, false},
                                       {UnitRounding::chopped(), 0, false}};
  const auto add = [&](const model::AdderParams& a) {
    if (std::find(v.begin(), v.end(), a) == v.end()) v.push_back(a);
  };
  for (Rounding r : model::all_roundings) add({UnitRounding::ieee(r), std::nullopt, false});
  std::vector<UnitRounding> rs = {UnitRounding::chopped()};
  for (Rounding r : model::all_roundings)
    if (r != Rounding::rz) rs.push_back(UnitRounding::ieee(r));
  for (const UnitRounding& r : rs)
    for (int g = 0; g <= gmax; ++g)
      for (bool sticky : {false, true}) add({r, g, sticky});
  return v;
}

Expected<std::vector<model::ScalarUnit>> fusion_candidates(backends::Device& device, const Format& f,
                                                           const audit::ProbeContext& ctx) {
  auto adders = reproducing_adders(device, f, ctx);
  if (!adders) return adders.error();
  auto multipliers = reproducing_multipliers(device, f, ctx);
  if (!multipliers) return multipliers.error();
  const std::vector<model::MultiplierParams> exact = {{model::UnitRounding::ieee(model::Rounding::rne), std::nullopt, 0},
                                                      {model::UnitRounding::chopped(), std::nullopt, 0}};
  std::vector<model::ScalarUnit> out;
  for (const model::ScalarUnit& a : *adders)
    for (bool fma_fused : {true, false}) {
      model::ScalarUnit u = a;
      u.fma_fused = fma_fused;
      u.mad_fused = true;
      out.push_back(u);
      u.mad_fused = false;
      for (const model::MultiplierParams& m : u.format == &f ? *multipliers : exact) {
        u.mul = m;
        out.push_back(u);
      }
    }
  return out;
}

nlohmann::json fusion_answer(const model::ScalarUnit& u, bool fused) {
  const Format& f = u.storage_format();
  if (u.format == &f) return {{"fused", fused}};
  using model::Rounding;
  const Rounding r = u.add.rounding.effective(), s = u.convert.effective();
  const bool exact_product = u.format->precision() >= 2 * f.precision() && !u.mul.truncated_columns;
  const bool correctly_rounded = !u.add.guard_bits || (u.add.sticky && *u.add.guard_bits >= 2);
  const bool directed = s == Rounding::rz || s == Rounding::ru || s == Rounding::rd || s == Rounding::ra;
  if ((fused || exact_product) && correctly_rounded && (r == Rounding::ro || (r == s && directed)))
    return {{"fused", true}};
  return {{"registers", u.format->name}, {"fused", fused}};
}

std::vector<Case> double_rounding_cases(const Format& f) {
  const int p = f.precision();
  const std::uint64_t half = std::uint64_t{1} << (p - 1);
  std::uint64_t k = 0;
  while ((k + 1) * (k + 2) < half) ++k;  // the largest k with k (k + 1) < 2^(p-1)
  const std::uint64_t a = value(f, false, 1 - 2 * p, half + k + 1), b = value(f, false, 1 - p, half - k);
  // And just below a tie whose even neighbour is above: (2^(p-1) + 1)(2^(p-1) - 1) 2^(2-3p) + 1 + u,
  // which registers rounding up or away (or to nearest) lift onto the tie.
  const std::uint64_t a2 = value(f, false, 1 - 2 * p, half + 1), b2 = value(f, false, 1 - p, half - 1),
                      c2 = value(f, false, 1 - p, half + 1);
  std::vector<Case> v;
  for (bool neg : {false, true}) {
    const auto sg = [&](std::uint64_t x) { return neg ? negate(f, x) : x; };
    v.push_back({{sg(a), b, sg(one(f))}, fmt::format("{} * {} + {} (just off a tie)", show(f, sg(a)), show(f, b), show(f, sg(one(f))))});
    v.push_back({{sg(a2), b2, sg(c2)}, fmt::format("{} * {} + {} (just off a tie)", show(f, sg(a2)), show(f, b2), show(f, sg(c2)))});
  }
  return v;
}

int max_guard(const Format& f) { return std::min(2 * f.precision() + 4, model::max_guard_bits); }

AdderScale adder_scale(const Format& f) {
  const int imax = std::min(f.precision() + max_guard(f) + 2, f.emax() - 1 - f.emin());
  return {f.emin() + imax <= 0 ? 0 : f.emin() + imax, imax};
}

std::string times(int k) { return k ? fmt::format(" (times 2^{})", k) : std::string(); }

std::string hex(const Format& f, std::uint64_t bits) { return fmt::format("{:0{}x}", bits, (f.storage_bits + 3) / 4); }

std::string show(const Format& f, std::uint64_t bits) {
  const model::Unpacked u = model::unpack(f, bits);
  const char* s = u.neg ? "-" : "";
  switch (u.cls) {
    case model::Class::zero: return fmt::format("{}0", s);
    case model::Class::infinite: return fmt::format("{}inf", s);
    case model::Class::quiet_nan: return fmt::format("{}qNaN({})", s, hex(f, bits));
    case model::Class::signaling_nan: return fmt::format("{}sNaN({})", s, hex(f, bits));
    default: break;
  }
  if (model::magnitude_of(f, bits) == f.max_finite_magnitude()) return fmt::format("{}MAX", s);
  std::uint64_t sig = u.sig;
  int exp = u.exp;
  while (!(sig & 1)) {
    sig >>= 1;
    ++exp;
  }
  if (sig == 1) return fmt::format("{}2^{}", s, exp);
  return fmt::format("{}{}*2^{}", s, sig, exp);
}

model::Unpacked decode(const Format& f, std::uint64_t bits) { return model::unpack(f, bits); }

std::uint64_t random_normal(const Format& f, std::uint64_t r_sig, std::uint64_t r_exp, bool neg, int lo, int hi) {
  const int e = lo + int(r_exp % std::uint64_t(hi - lo + 1));
  return value(f, neg, e - f.man_bits, (std::uint64_t{1} << f.man_bits) | (r_sig & f.man_mask()));
}

const Format* wider_on(const backends::Device& device, const Format& f) {
  // The narrowest format the device has that holds every value of f exactly.
  const Format* best = nullptr;
  for (const Format* g : device.caps().formats) {
    if (g == &f || !g->has_sign() || g->man_bits < f.man_bits || g->emax() < f.emax() ||
        g->quantum_min() > f.quantum_min() || (f.has_inf() && !g->has_inf()) || (f.has_nan() && g->nan != model::NanStyle::ieee))
      continue;
    if (g->man_bits == f.man_bits && g->exp_bits == f.exp_bits) continue;
    if (!best || g->storage_bits < best->storage_bits) best = g;
  }
  return best;
}

}  // namespace gp::scalar

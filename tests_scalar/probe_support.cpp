#include "tests_scalar/probe_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "backends/reference/profile.hpp"
#include "backends/reference/reference_backend.hpp"
#include "tests_scalar/daumas_support.hpp"

namespace gp::scalar {

std::uint64_t value(const Format& f, bool neg, int exp, std::uint64_t sig) {
  return model::round_pack(f, model::Options{}, neg, exp, sig).bits;
}

std::uint64_t negate(const Format& f, std::uint64_t x) { return x ^ f.sign_mask(); }
std::uint64_t largest(const Format& f, bool neg) { return model::pack(f, neg, f.max_finite_magnitude()); }
std::uint64_t smallest_normal(const Format& f, bool neg) { return model::pack(f, neg, f.man_mask() + 1); }
std::uint64_t smallest_subnormal(const Format& f, bool neg) { return model::pack(f, neg, 1); }

Expected<std::vector<std::uint64_t>> run_cases(backends::Device& device, const Expr& expr,
                                               const std::vector<Case>& cases) {
  std::vector<std::uint64_t> operands;
  operands.reserve(cases.size() * std::size_t(expr.inputs));
  for (const Case& c : cases) {
    if (c.operands.size() != std::size_t(expr.inputs))
      return Error{
          fmt::format("case '{}' has {} operands, the expression takes {}", c.note, c.operands.size(), expr.inputs)};
    operands.insert(operands.end(), c.operands.begin(), c.operands.end());
  }
  auto out = device.scalar({&expr, operands});
  if (out && out->size() != cases.size())
    return Error{fmt::format("the device returned {} results for {} cases", out->size(), cases.size())};
  return out;
}

audit::Observation observation(const Expr& expr, const Case& c, std::uint64_t output) {
  audit::Observation o;
  o.inputs = c.operands;
  o.output = output;
  o.input_bits = expr.input_format->storage_bits;
  o.output_bits = expr.output_format->storage_bits;
  o.note = c.note;
  return o;
}

KeepFn keep_all() {
  return [](std::size_t, bool) { return true; };
}

KeepFn keep_some(std::size_t head, std::size_t odd) {
  auto count = std::make_shared<std::size_t>(0);
  return [head, odd, count](std::size_t i, bool differs) {
    if (i < head) return true;
    if (differs && *count < odd) {
      ++*count;
      return true;
    }
    return false;
  };
}

std::vector<model::UnitRounding> unit_roundings() {
  std::vector<model::UnitRounding> v = {model::UnitRounding::chopped()};
  for (model::Rounding r : model::all_roundings)
    if (r != model::Rounding::rz) v.push_back(model::UnitRounding::ieee(r));
  return v;
}

std::vector<model::DefaultNan> default_nans(const Format& f) {
  std::vector<model::DefaultNan> v;
  for (model::DefaultNan d : model::all_default_nans)
    if (std::none_of(v.begin(), v.end(),
                     [&](model::DefaultNan e) { return model::default_nan(f, e) == model::default_nan(f, d); }))
      v.push_back(d);
  return v;
}

std::vector<model::NanPolicy> one_operand_nan_policies(const Format& f) {
  std::vector<model::NanPolicy> v;
  for (bool transfer : {false, true}) {
    for (bool quiet : {true, false}) {
      model::NanPolicy p;
      p.quiet_on_transfer = transfer;
      p.quiet = quiet;
      v.push_back(p);
    }
    for (model::DefaultNan d : default_nans(f)) {
      model::NanPolicy p;
      p.canonical = true;
      p.quiet_on_transfer = transfer;
      p.default_nan = d;
      v.push_back(p);
    }
  }
  return v;
}

std::vector<std::array<std::optional<model::OpFlush>, model::kFlushOps>> add_and_mul_flushes() {
  std::vector<std::array<std::optional<model::OpFlush>, model::kFlushOps>> v;
  for (int add = 0; add < 4; ++add)
    for (int mul = 0; mul < 4; ++mul) {
      std::array<std::optional<model::OpFlush>, model::kFlushOps> x{};
      x[std::size_t(model::FlushOp::add)] = model::OpFlush{bool(add & 1), bool(add & 2)};
      x[std::size_t(model::FlushOp::mul)] = model::OpFlush{bool(mul & 1), bool(mul & 2)};
      v.push_back(x);
    }
  return v;
}

std::vector<model::ScalarUnit> candidates(const backends::Device& device, const Format& f, const SpaceOf& space,
                                          const std::vector<model::UnitRounding>& stores) {
  std::vector<const Format*> registers = {&f};
  if (!stores.empty())
    for (const Format* g : device.caps().formats)
      if (g != &f && g->exp_bits >= f.exp_bits && g->man_bits > f.man_bits) registers.push_back(g);
  std::vector<model::ScalarUnit> out;
  for (const Format* reg : registers) {
    const Space s = space(*reg);
    model::ScalarUnit base = model::ieee_unit(*reg);
    base.name = "candidate";
    if (reg != &f) base.storage = &f;
    std::vector<model::ScalarUnit> units = {base};
    // Every combination: each list multiplies the units so far by its alternatives.
    const auto vary = [&units](const auto& alternatives, auto set) {
      if (alternatives.empty()) return;
      std::vector<model::ScalarUnit> next;
      for (const model::ScalarUnit& u : units)
        for (const auto& a : alternatives) {
          model::ScalarUnit v = u;
          set(v, a);
          next.push_back(v);
        }
      units = std::move(next);
    };
    vary(s.adders, [](model::ScalarUnit& u, const model::AdderParams& a) { u.add = a; });
    vary(s.multipliers, [](model::ScalarUnit& u, const model::MultiplierParams& m) { u.mul = m; });
    vary(s.mad_fused, [](model::ScalarUnit& u, bool b) { u.mad_fused = b; });
    vary(s.fma_fused, [](model::ScalarUnit& u, bool b) { u.fma_fused = b; });
    vary(s.divisions, [](model::ScalarUnit& u, const model::DivParams& d) { u.div = d; });
    vary(s.sqrts, [](model::ScalarUnit& u, const model::UnitRounding& r) { u.sqrt = r; });
    vary(s.subnormals, [](model::ScalarUnit& u, const model::SubnormalPolicy& p) { u.subnormals = p; });
    vary(s.op_flushes, [](model::ScalarUnit& u, const auto& flushes) { u.op_flush = flushes; });
    vary(s.nans, [](model::ScalarUnit& u, const model::NanPolicy& p) { u.nan = p; });
    vary(s.fma_zero_addends, [](model::ScalarUnit& u, model::ZeroAddend z) { u.fma_zero_addend = z; });
    if (reg != &f) vary(stores, [](model::ScalarUnit& u, const model::UnitRounding& c) { u.convert = c; });
    out.insert(out.end(), units.begin(), units.end());
  }
  return out;
}

Expected<std::vector<model::ScalarUnit>> with_reproducing_multipliers(backends::Device& device,
                                                                      const std::vector<model::ScalarUnit>& units,
                                                                      const audit::ProbeContext& ctx) {
  std::map<const Format*, std::vector<model::MultiplierParams>> multipliers;
  std::vector<model::ScalarUnit> out;
  for (const model::ScalarUnit& u : units) {
    auto it = multipliers.find(u.format);
    if (it == multipliers.end()) {
      auto ms = reproducing_multipliers(device, *u.format, ctx);
      if (!ms) return ms.error();
      it = multipliers.emplace(u.format, std::move(*ms)).first;
    }
    for (const model::MultiplierParams& m : it->second) {
      model::ScalarUnit c = u;
      c.mul = m;
      out.push_back(c);
    }
  }
  return out;
}

std::optional<model::Rounding> tie_directed(model::Rounding nearest) {
  switch (nearest) {
    case model::Rounding::rnz: return model::Rounding::rz;
    case model::Rounding::rna: return model::Rounding::ra;
    case model::Rounding::rnu: return model::Rounding::ru;
    case model::Rounding::rno: return model::Rounding::ro;
    default: return std::nullopt;
  }
}

std::vector<std::string> rounding_class(std::string_view directed, bool overflow) {
  std::vector<std::string> names = {std::string(directed)};
  const auto d = model::find_unit_rounding(directed);
  for (model::Rounding r : model::all_roundings)
    if (d && tie_directed(r) == d->effective() && (!overflow || r == model::Rounding::rna))
      names.push_back(std::string(model::name(r)));
  return names;
}

std::string or_equivalently(const std::vector<std::string>& equivalent_roundings) {
  if (equivalent_roundings.empty()) return "";
  return ", or equivalently " +
         join(std::vector<std::string>(equivalent_roundings.begin() + 1, equivalent_roundings.end()), " or ");
}

std::unique_ptr<backends::Device> unit_device(const model::ScalarUnit& u, const std::vector<const Format*>& formats) {
  backends::Profile p{"candidate", "candidate unit", "model", "", {u}, {}, {}, {}};
  for (const Format* f : formats)
    if (std::none_of(p.units.begin(), p.units.end(),
                     [&](const model::ScalarUnit& x) { return &x.storage_format() == f; }))
      p.units.push_back(model::ieee_unit(*f));
  return std::make_unique<backends::ReferenceDevice>(std::move(p));
}

namespace {

// A candidate on the one interpreter, for the formats of the groups' expressions.
class Interpreter {
 public:
  Interpreter(const model::ScalarUnit& u, const std::vector<Group>& groups) {
    std::vector<const Format*> formats;
    for (const Group& g : groups)
      for (const Format* f : g.expr.formats()) formats.push_back(f);
    device_ = unit_device(u, formats);
  }
  // The outputs of cases [from, to) of a group.
  Expected<std::vector<std::uint64_t>> run(const Group& g, std::size_t from, std::size_t to) {
    const std::vector<Case> part(g.cases.begin() + std::ptrdiff_t(from), g.cases.begin() + std::ptrdiff_t(to));
    return run_cases(*device_, g.expr, part);
  }

 private:
  std::unique_ptr<backends::Device> device_;
};

// A candidate's parameters as the profile writes them, only those that differ from its format's
// IEEE unit (and the stores' rounding of wider registers).
nlohmann::json unit_parameters(const model::ScalarUnit& u) {
  const nlohmann::json all = backends::unit_to_json(u), ieee = backends::unit_to_json(model::ieee_unit(*u.format));
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : all.items())
    if (!ieee.contains(k) || ieee[k] != v || (k == "cvt" && all.contains("registers"))) out[k] = v;
  return out;
}

std::string unit_label(const model::ScalarUnit& u) {
  return &u.storage_format() == u.format
             ? fmt::format("{} unit", u.format->name)
             : fmt::format("{} registers, {} storage", u.format->name, u.storage_format().name);
}

}  // namespace

namespace {

using Outputs = std::vector<std::vector<std::uint64_t>>;

Expected<Outputs> run_groups(backends::Device& device, const std::vector<Group>& groups) {
  Outputs outputs;
  for (const Group& g : groups) {
    auto out = run_cases(device, g.expr, g.cases);
    if (!out) return out.error();
    outputs.push_back(std::move(*out));
  }
  return outputs;
}

bool same_output(const Format& of, std::uint64_t a, std::uint64_t b, bool nan_equivalent) {
  return a == b || (nan_equivalent && model::is_nan(model::classify(of, a)) && model::is_nan(model::classify(of, b)));
}

// A candidate's wrong cases, evaluated first on a few cases of each group (most candidates fail
// there), then on the rest; with `all`, every wrong case is counted (for the closest candidates).
struct Wrong {
  std::size_t count = 0;
  std::string first;
};
Expected<Wrong> wrong_cases(const model::ScalarUnit& u, const std::vector<Group>& groups, const Outputs& outputs,
                            bool nan_equivalent, bool all) {
  Interpreter in(u, groups);
  Wrong w;
  for (std::size_t pass = 0; pass < 2; ++pass)
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const Group& g = groups[gi];
      const std::size_t head = std::min<std::size_t>(8, g.cases.size());
      const std::size_t from = pass ? head : 0, to = pass ? g.cases.size() : head;
      if (from == to) continue;
      auto p = in.run(g, from, to);
      if (!p) return p.error();
      const Format& of = *g.expr.output_format;
      for (std::size_t i = from; i < to; ++i)
        if (!same_output(of, (*p)[i - from], outputs[gi][i], nan_equivalent)) {
          if (!w.count++)
            w.first = fmt::format("{}: device {}, model {}", g.cases[i].note, hex(of, outputs[gi][i]),
                                  hex(of, (*p)[i - from]));
          if (!all) return w;
        }
    }
  return w;
}

}  // namespace

namespace {

// The challenge's operands of f: values near 1, far below or above another operand (1 + tiny: what
// guard bits and sticky bits see, and what wider registers round twice), at the subnormal and overflow
// boundaries, with full, short (ties of products and sums), all-ones and 1 + 2^-k significands,
// and raw bit patterns. `base` is the exponent of the operand it is drawn against.
std::uint64_t challenge_operand(const Format& f, std::mt19937_64& rng, int base) {
  if (rng() % 8 == 0) return rng() & f.storage_mask() & ~((std::uint64_t{1} << f.pad_bits) - 1);
  const int p = f.precision();
  std::uint64_t sig = (std::uint64_t{1} << f.man_bits) | (rng() & f.man_mask());
  switch (rng() % 6) {
    case 0: {  // 0 to 3 bits after the leading one
      const int drop = std::max(0, f.man_bits - int(rng() % 4));
      sig &= ~((std::uint64_t{1} << drop) - 1);
      break;
    }
    case 1: sig = (std::uint64_t{1} << p) - 1; break;
    case 2: sig = (std::uint64_t{1} << f.man_bits) | (std::uint64_t{1} << int(rng() % std::uint64_t(p))); break;
    default: break;
  }
  int e = base;
  switch (rng() % 9) {
    case 0:
    case 1: e -= 1 + int(rng() % std::uint64_t(2 * p + 8)); break;  // far below: 1 + tiny
    case 2: e -= 1 + int(rng() % std::uint64_t(f.emax() - f.emin() + p)); break;
    case 8: e += 1 + int(rng() % std::uint64_t(2 * p + 8)); break;  // far above: tiny + 1
    case 3: e = f.emin() - int(rng() % std::uint64_t(p + 2)) + 1; break;
    case 4: e = f.emax() - int(rng() % 3); break;
    default: e += int(rng() % 5) - 2; break;
  }
  return value(f, rng() & 1, e - f.man_bits, sig);
}

// The exponent of a finite nonzero value of f (subnormals at emin), else 0.
int exponent_of(const Format& f, std::uint64_t x) {
  const model::Class c = model::classify(f, x);
  if (c != model::Class::normal && c != model::Class::subnormal) return 0;
  return std::max(f.emin(), int(model::magnitude_of(f, x) >> f.man_bits) - f.bias);
}

// Cases of an expression's inputs for the challenge: the whole input space where it is small
// (two 8-bit operands), else `n` drawn ones: the first operand around 1 or at either end of the range,
// the second against it, a third (an fma's addend) against their product.
std::vector<Case> challenge_pool(const Expr& e, std::mt19937_64& rng, std::size_t n, bool& exhaustive) {
  const Format& f = *e.input_format;
  const int bits = f.storage_bits * e.inputs;
  std::vector<Case> pool;
  exhaustive = bits <= 20;
  if (exhaustive) {
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << bits); ++x) {
      Case c;
      for (int i = 0; i < e.inputs; ++i) c.operands.push_back((x >> (i * f.storage_bits)) & f.storage_mask());
      pool.push_back(std::move(c));
    }
    return pool;
  }
  for (std::size_t k = 0; k < n; ++k) {
    Case c;
    c.operands.push_back(challenge_operand(f, rng, int(rng() % 8) - 4));
    const int e0 = exponent_of(f, c.operands[0]);
    for (int i = 1; i < e.inputs; ++i)
      c.operands.push_back(challenge_operand(f, rng, i == 2 ? e0 + exponent_of(f, c.operands[1]) : e0));
    pool.push_back(std::move(c));
  }
  return pool;
}

// Whether the challenge may draw inputs for an expression: one addition, subtraction or
// multiplication, whose every parameter (the adder or multiplier, wider registers and the stores'
// rounding, flushing) the candidate spaces of the probes that ask about it hold. A compound
// expression or another operation runs on parameters a probe's candidates fix (the multiplier
// behind a MAD's fusion, the reciprocal's rounding), which inputs beyond the probe's own would
// test in place of its question.
bool challengeable(const Expr& e) {
  std::size_t ops = 0;
  bool arithmetic = true;
  for (const backends::Instr& i : e.code) {
    if (i.op == Node::input) continue;
    ++ops;
    arithmetic = arithmetic && (i.op == Node::add || i.op == Node::sub || i.op == Node::mul || i.op == Node::fma ||
                                i.op == Node::mad);
  }
  return ops == 1 && arithmetic;
}

// Survivors that speak for the answers: each answer (numbered in order) through up to three of
// its survivors, which must agree on an input.
using ChallengeReps = std::vector<std::pair<std::size_t, const model::ScalarUnit*>>;

ChallengeReps challenge_representatives(const std::map<std::string, std::vector<const model::ScalarUnit*>>& by_answer) {
  ChallengeReps reps;
  std::size_t answers = 0;
  for (const auto& [answer, units] : by_answer) {
    for (std::size_t i : {std::size_t{0}, units.size() / 2, units.size() - 1})
      if (reps.empty() || reps.back().first != answers || reps.back().second != units[i])
        reps.emplace_back(answers, units[i]);
    ++answers;
  }
  return reps;
}

// The classes of the probe's operands and outputs for expression e (in its own `own` groups), and
// subnormals.
struct ChallengeDomain {
  std::set<model::Class> in = {model::Class::subnormal}, out = {model::Class::subnormal};
};

ChallengeDomain challenge_domain(const Expr& e, const std::vector<Group>& groups, const Outputs& outputs,
                                 std::size_t own) {
  ChallengeDomain d;
  for (std::size_t gj = 0; gj < own; ++gj)
    if (groups[gj].expr.to_string() == e.to_string()) {
      for (const Case& c : groups[gj].cases)
        for (std::uint64_t x : c.operands) d.in.insert(model::classify(*e.input_format, x));
      for (std::uint64_t y : outputs[gj]) d.out.insert(model::classify(*e.output_format, y));
    }
  return d;
}

// Greedy: an input of the pool joins when it splits a pair of answers no input so far has split
// (32 inputs at most, each with outputs in the domain whatever the survivor).
Group splitting_cases(const Expr& e, const std::vector<Case>& pool,
                      const std::vector<std::vector<std::uint64_t>>& predicted, const ChallengeReps& reps,
                      const std::set<model::Class>& out_classes, bool nan_equivalent) {
  std::set<std::pair<std::size_t, std::size_t>> split;
  Group chosen{e, {}};
  for (std::size_t i = 0; i < pool.size() && chosen.cases.size() < 32; ++i) {
    if (std::any_of(predicted.begin(), predicted.end(),
                    [&](const auto& p) { return !out_classes.count(model::classify(*e.output_format, p[i])); }))
      continue;
    const auto same = [&](std::size_t x, std::size_t y) {
      return same_output(*e.output_format, predicted[x][i], predicted[y][i], nan_equivalent);
    };
    bool agree = true, fresh = false;
    for (std::size_t x = 0; x < reps.size(); ++x)
      for (std::size_t y = x + 1; y < reps.size() && agree; ++y)
        if (reps[x].first == reps[y].first) agree = same(x, y);
    for (std::size_t x = 0; x < reps.size() && agree; ++x)
      for (std::size_t y = x + 1; y < reps.size(); ++y)
        if (reps[x].first != reps[y].first && !same(x, y))
          fresh = split.emplace(reps[x].first, reps[y].first).second || fresh;
    if (!fresh) continue;
    Case c = pool[i];
    std::vector<std::string> shown;
    for (std::uint64_t x : c.operands) shown.push_back(show(*e.input_format, x));
    c.note = "drawn to split the survivors: " + join(shown);
    chosen.cases.push_back(std::move(c));
  }
  return chosen;
}

// One round's inputs for expression e: a pool drawn in the probe's domain, as the representatives
// predict it, and the inputs of it that split them (none: an empty group). `exhaustive`: whether the
// pool is every input.
Expected<Group> challenge_group(const Expr& e, const std::vector<Group>& groups, const Outputs& outputs,
                                std::size_t own, const ChallengeReps& reps, std::mt19937_64& rng, bool nan_equivalent,
                                Challenge& report, bool& exhaustive) {
  const ChallengeDomain domain = challenge_domain(e, groups, outputs, own);
  std::vector<Case> pool = challenge_pool(e, rng, 1024, exhaustive);
  std::erase_if(pool, [&](const Case& c) {
    return std::any_of(c.operands.begin(), c.operands.end(),
                       [&](std::uint64_t x) { return !domain.in.count(model::classify(*e.input_format, x)); });
  });
  report.searched += pool.size();
  if (pool.empty()) return Group{e, {}};
  const Group g{e, pool};
  std::vector<std::vector<std::uint64_t>> predicted;
  for (const auto& [answer, u] : reps) {
    auto p = Interpreter(*u, {g}).run(g, 0, pool.size());
    if (!p) return p.error();
    predicted.push_back(std::move(*p));
  }
  return splitting_cases(e, pool, predicted, reps, domain.out, nan_equivalent);
}

// The survivors that reproduce the challenge's outputs (the groups from `own` on), each as it is or
// as the first variant of it that flushes subnormal inputs, outputs or transfers and reproduces
// every output.
Expected<std::vector<model::ScalarUnit>> challenge_survivors(const std::vector<model::ScalarUnit>& alive,
                                                             const std::vector<Group>& groups, const Outputs& outputs,
                                                             std::size_t own, bool nan_equivalent) {
  std::vector<model::ScalarUnit> kept;
  const std::vector<Group> challenged(groups.begin() + std::ptrdiff_t(own), groups.end());
  const Outputs challenged_outputs(outputs.begin() + std::ptrdiff_t(own), outputs.end());
  for (const model::ScalarUnit& u : alive)
    for (int flush = 0; flush < 8; ++flush) {
      model::ScalarUnit v = u;
      v.subnormals.flush_input = u.subnormals.flush_input || (flush & 1);
      v.subnormals.flush_output = u.subnormals.flush_output || (flush & 2);
      v.subnormals.flush_transfer = u.subnormals.flush_transfer || (flush & 4);
      if (flush && v == u) continue;
      // The challenge's cases first, the probe's own only for a variant (the unit passed them).
      auto w = wrong_cases(v, challenged, challenged_outputs, nan_equivalent, false);
      if (!w) return w.error();
      if (!w->count && flush) w = wrong_cases(v, groups, outputs, nan_equivalent, false);
      if (!w) return w.error();
      if (w->count) continue;
      kept.push_back(v);
      break;
    }
  return kept;
}

// The challenge (see conclude): survivors that answer apart face inputs searched to split them.
// Each round draws a pool of inputs for each of the probe's expressions (challengeable), keeps those
// on which a few survivors of each answer agree and two answers predict different outputs, runs
// them on the device and drops the survivors they refute, until one answer is left, no input of a
// pool splits them, or the rounds run out. The inputs stay within the probe's domain: operands and
// outputs of the classes (zero, normal, infinite, NaN) its cases have, so that the challenge asks
// the probe's question and not another's (a NaN policy, say), and subnormals, which the probe's
// candidates may keep or flush apart from what its cases decided: a survivor refuted there is kept
// as the variant of it that flushes subnormal inputs, outputs or transfers where that reproduces
// every output. The challenge's groups and outputs are appended to `groups` and `outputs`.
Expected<Challenge> challenge(backends::Device& device, std::vector<Group>& groups, Outputs& outputs,
                              std::vector<model::ScalarUnit>& alive, const UnitQuestion& q, bool nan_equivalent) {
  Challenge report;
  const std::size_t own = groups.size();
  std::mt19937_64 rng(0x6368616c6c656e67ULL);
  for (int round = 0; round < 6; ++round) {
    std::map<std::string, std::vector<const model::ScalarUnit*>> by_answer;
    for (const model::ScalarUnit& u : alive) by_answer[q.ask(u).key()].push_back(&u);
    if (by_answer.size() <= 1) return report;
    const ChallengeReps reps = challenge_representatives(by_answer);
    std::vector<Group> drawn;
    std::set<std::string> exprs;
    bool all_exhaustive = true;
    for (std::size_t gi = 0; gi < own; ++gi) {
      const Expr& e = groups[gi].expr;
      if (!challengeable(e) || !exprs.insert(e.to_string()).second) continue;
      bool exhaustive = false;
      auto chosen = challenge_group(e, groups, outputs, own, reps, rng, nan_equivalent, report, exhaustive);
      all_exhaustive = all_exhaustive && exhaustive;
      if (!chosen) return chosen.error();
      if (!chosen->cases.empty()) drawn.push_back(std::move(*chosen));
    }
    report.exhaustive = all_exhaustive;
    if (drawn.empty()) {
      report.unsplit = true;
      return report;
    }
    auto out = run_groups(device, drawn);
    if (!out) return out.error();
    for (std::size_t i = 0; i < drawn.size(); ++i) {
      report.run += drawn[i].cases.size();
      groups.push_back(std::move(drawn[i]));
      outputs.push_back(std::move((*out)[i]));
    }
    auto kept = challenge_survivors(alive, groups, outputs, own, nan_equivalent);
    if (!kept) return kept.error();
    alive = std::move(*kept);
  }
  return report;
}

// The challenge in the finding: parameters.challenge, and for a verdict left inconclusive, how far
// the search went.
void say_challenge(const Challenge& c, audit::Conclusion conclusion, audit::Finding& finding) {
  if (!c.searched) return;
  finding.parameters["challenge"] = {
      {"searched", c.searched}, {"run", c.run}, {"exhaustive", c.exhaustive}, {"unsplit", c.unsplit}};
  if (conclusion != audit::Conclusion::inconclusive) return;
  if (c.unsplit && c.exhaustive)
    finding.verdict += fmt::format("; no input splits them (every input of the expressions tried, {} run)", c.run);
  else if (c.unsplit)
    finding.verdict += fmt::format("; no input of a search splits them ({} drawn, {} run)", c.searched, c.run);
  else
    finding.verdict += fmt::format(
        "; the search for inputs that split them stopped after its rounds ({} drawn, {} run)", c.searched, c.run);
}

}  // namespace

Expected<std::vector<model::ScalarUnit>> survivors(backends::Device& device, const std::vector<Group>& groups,
                                                   const std::vector<model::ScalarUnit>& candidates,
                                                   bool nan_equivalent, const UnitQuestion* split_by) {
  auto outputs = run_groups(device, groups);
  if (!outputs) return outputs.error();
  std::vector<model::ScalarUnit> out;
  for (const model::ScalarUnit& u : candidates) {
    auto w = wrong_cases(u, groups, *outputs, nan_equivalent, false);
    if (!w) return w.error();
    if (!w->count) out.push_back(u);
  }
  if (split_by) {
    std::vector<Group> all = groups;
    auto c = challenge(device, all, *outputs, out, *split_by, nan_equivalent);
    if (!c) return c.error();
  }
  return out;
}

Expected<std::vector<std::vector<std::uint64_t>>> conclude(backends::Device& device, const std::vector<Group>& groups,
                                                           const std::vector<model::ScalarUnit>& candidates,
                                                           const UnitQuestion& q, audit::Finding& finding,
                                                           const std::vector<KeepFn>& keep, bool nan_equivalent) {
  if (candidates.empty()) return Error{"no candidate units"};
  auto run = run_groups(device, groups);
  if (!run) return run.error();
  const Outputs& outputs = *run;
  const auto same = [&](const Format& of, std::uint64_t a, std::uint64_t b) {
    return same_output(of, a, b, nan_equivalent);
  };
  const auto test = [&](const model::ScalarUnit& u, bool all) {
    return wrong_cases(u, groups, outputs, nan_equivalent, all);
  };
  std::vector<model::ScalarUnit> alive;
  for (const model::ScalarUnit& u : candidates) {
    auto v = test(u, false);
    if (!v) return v.error();
    if (!v->count) alive.push_back(u);
  }
  // Survivors that answer apart face inputs drawn to split them; what they refute is observed too.
  std::vector<Group> all_groups = groups;
  Outputs all_outputs = outputs;
  auto challenged = challenge(device, all_groups, all_outputs, alive, q, nan_equivalent);
  if (!challenged) return challenged.error();
  std::vector<audit::Candidate> survivors;
  std::vector<const model::ScalarUnit*> shown;  // one unit per distinct answer, for the observations
  std::map<std::string, bool> answers_seen;
  for (const model::ScalarUnit& u : alive) {
    audit::Answer a = q.ask(u);
    if (answers_seen.emplace(a.key(), true).second && shown.size() < 4) shown.push_back(&u);
    survivors.push_back({unit_label(u), unit_parameters(u), std::move(a)});
  }
  std::vector<audit::Miss> misses;
  if (survivors.empty()) {
    std::vector<std::pair<Wrong, const model::ScalarUnit*>> all;
    for (const model::ScalarUnit& u : candidates) {
      auto v = wrong_cases(u, all_groups, all_outputs, nan_equivalent, true);
      if (!v) return v.error();
      all.emplace_back(*v, &u);
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.first.count < b.first.count; });
    for (std::size_t i = 0; i < all.size() && i < 3; ++i) {
      // Named by its answer, or by its parameters where the question does not apply to it.
      const audit::Answer answer = q.ask(*all[i].second);
      const std::string named =
          answer.applies() ? audit::render(answer) : audit::render(unit_parameters(*all[i].second));
      misses.push_back(
          {fmt::format("{} ({})", unit_label(*all[i].second), named), all[i].first.count, all[i].first.first});
      shown.push_back(all[i].second);
    }
  }
  const audit::Judgement j = audit::judge(q.question, survivors, misses);
  audit::apply(j, finding);
  if (j.conclusion == audit::Conclusion::stated && q.profile) finding.profile = q.profile(j.answer);
  say_challenge(*challenged, j.conclusion, finding);
  // Observations: the predictions of the units shown, named by their answers.
  for (std::size_t gi = 0; gi < all_groups.size(); ++gi) {
    const Group& g = all_groups[gi];
    std::vector<std::vector<std::uint64_t>> predictions;
    std::vector<std::string> names;
    for (const model::ScalarUnit* u : shown) {
      auto p = Interpreter(*u, all_groups).run(g, 0, g.cases.size());
      if (!p) return p.error();
      predictions.push_back(std::move(*p));
      const audit::Answer a = q.ask(*u);
      names.push_back(a.applies() ? audit::render(a) : unit_label(*u));
    }
    // "Differs" from the first candidate (the IEEE unit where the space starts with it).
    auto reference = Interpreter(candidates.front(), all_groups).run(g, 0, g.cases.size());
    if (!reference) return reference.error();
    const KeepFn k = gi < keep.size() && keep[gi] ? keep[gi] : keep_all();
    for (std::size_t i = 0; i < g.cases.size(); ++i) {
      if (!k(i, !same(*g.expr.output_format, (*reference)[i], all_outputs[gi][i]))) continue;
      audit::Observation o = observation(g.expr, g.cases[i], all_outputs[gi][i]);
      for (std::size_t h = 0; h < shown.size(); ++h) o.predictions.emplace_back(names[h], predictions[h][i]);
      finding.observations.push_back(std::move(o));
    }
  }
  return *run;
}

bool computes_in(const backends::Device& device, const Format& f) { return device.caps().has(f); }

audit::Finding no_format(const Format& f) {
  return audit::unsupported(fmt::format("the device does not compute in {}", f.name));
}

std::string_view shout(Node op) {
  switch (op) {
    case Node::add: return "ADDITION";
    case Node::sub: return "SUBTRACTION";
    case Node::mul: return "MULTIPLICATION";
    case Node::div: return "DIVISION";
    case Node::sqrt: return "SQUARE ROOT";
    case Node::fma: return "FMA";
    case Node::mad: return "MAD";
    case Node::cvt: return "CONVERSION";
    default: return "OPERATION";
  }
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

}  // namespace gp::scalar

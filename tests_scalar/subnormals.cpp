// Subnormal flushing per operation (add, mul, fma, div, sqrt, cvt): does the operation read
// subnormal operands as zeros (input flush, DAZ), does it return zeros for subnormal results
// (output flush, FTZ), and what do the load and the store do? Three kinds of cases per operation:
//   input:  a subnormal operand from memory, a normal result  (flushed if the load or the op flushes)
//   output: normal operands, a subnormal result to memory     (flushed if the op or the store flushes)
//   chain:  op -> subnormal in a register -> op -> normal     (flushed if the op flushes either way)
// Every result is exact, so rounding does not enter, but for the sign of fma(x, 0, 0) with zeros of
// opposite signs, which also shows an fma that returns the product a*b for a zero addend (libclc's
// software fma, rusticl's: model::ZeroAddend). Candidates: the units of the model with every
// flushing of each operation (input, output) and of transfers, either zero addend, in registers of
// f or wider (nvidia-g70-binary16 keeps binary16 subnormals as binary32 normals in its registers),
// and the IEEE fmas that round down. Conversions involve a second unit, whose policy the
// candidates do not vary: they are left out.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

struct OpCases {
  std::string op;  // "add"
  std::vector<Group> groups;
};

// Each operation's cases, built on the edges of f's subnormal range.
class SubnormalCaseTables {
 public:
  explicit SubnormalCaseTables(const Format& format)
      : f(format),
        p(f.precision()),
        m(f.man_bits),
        emin(f.emin()),
        tiny(smallest_normal(f)),
        half(pow2(f, emin - 1)),
        smax(model::pack(f, false, f.man_mask())),
        smin(smallest_subnormal(f)),
        zero(model::zero(f, false).bits),
        one_(one(f)),
        tiny15(value(f, false, emin - 1, 3)),
        transfer{
            backends::transfer(f),
            {{{half}, fmt::format("transfer: {}", s(half))}, {{n(smin)}, fmt::format("transfer: {}", s(n(smin)))}}} {}

  OpCases add_cases() const {
    OpCases c{"add", {transfer}};
    c.groups.push_back({backends::binary(Node::add, f),
                        {{{tiny, half}, fmt::format("input: {} + {}", s(tiny), s(half))},
                         {{n(tiny), n(half)}, fmt::format("input: {} + {}", s(n(tiny)), s(n(half)))},
                         {{smax, smin}, "input: largest subnormal + smallest subnormal"}}});
    c.groups.push_back({backends::binary(Node::add, f),
                        {{{tiny15, n(tiny)}, fmt::format("output: {} + {}", s(tiny15), s(n(tiny)))},
                         {{n(tiny15), tiny}, fmt::format("output: {} + {}", s(n(tiny15)), s(tiny))}}});
    c.groups.push_back(
        {compound(Node::add, Node::add, f),
         {{{tiny15, n(tiny), tiny}, fmt::format("chain: ({} + {}) + {}", s(tiny15), s(n(tiny)), s(tiny))}}});
    return c;
  }
  OpCases mul_cases() const {
    OpCases c{"mul", {transfer}};
    c.groups.push_back({backends::binary(Node::mul, f),
                        {{{half, pow2(f, p)}, fmt::format("input: {} * 2^{}", s(half), p)},
                         {{n(smin), pow2(f, m + 1)}, fmt::format("input: {} * 2^{}", s(n(smin)), m + 1)}}});
    c.groups.push_back({backends::binary(Node::mul, f),
                        {{{tiny, pow2(f, -1)}, fmt::format("output: {} * 0.5", s(tiny))},
                         {{n(tiny), pow2(f, -m)}, fmt::format("output: {} * 2^-{}", s(n(tiny)), m)}}});
    c.groups.push_back({compound(Node::mul, Node::mul, f),
                        {{{tiny, pow2(f, -1), pow2(f, 1)}, fmt::format("chain: ({} * 0.5) * 2", s(tiny))}}});
    return c;
  }
  OpCases fma_cases() const {
    OpCases c{"fma", {transfer}};
    c.groups.push_back({backends::ternary(Node::fma, f),
                        {{{half, pow2(f, p), zero}, fmt::format("input: fma({}, 2^{}, 0)", s(half), p)},
                         {{tiny, one_, half}, fmt::format("input: fma({}, 1, {})", s(tiny), s(half))},
                         {{one_, n(half), n(tiny)}, fmt::format("input: fma(1, {}, {})", s(n(half)), s(n(tiny)))}}});
    c.groups.push_back({backends::ternary(Node::fma, f),
                        {{{tiny, pow2(f, -1), zero}, fmt::format("output: fma({}, 0.5, 0)", s(tiny))},
                         {{tiny15, one_, n(tiny)}, fmt::format("output: fma({}, 1, {})", s(tiny15), s(n(tiny)))}}});
    // A zero addend: IEEE adds it (+0 in every mode but rd, which gives -0 for both), an fma that
    // returns the product a*b keeps the product's sign (model::ZeroAddend::product).
    c.groups.push_back({backends::ternary(Node::fma, f),
                        {{{n(one_), zero, zero}, "zero addend: fma(-1, 0, 0)"},
                         {{one_, zero, n(zero)}, "zero addend: fma(1, 0, -0)"}}});
    backends::ExprBuilder b(f, 5);
    const int t = b.op(Node::fma, b.in(0), b.in(1), b.in(2));
    b.op(Node::fma, t, b.in(3), b.in(4));
    c.groups.push_back(
        {b.done(),
         {{{tiny, pow2(f, -1), zero, pow2(f, 1), zero}, fmt::format("chain: fma(fma({}, 0.5, 0), 2, 0)", s(tiny))}}});
    return c;
  }
  OpCases div_cases() const {
    OpCases c{"div", {transfer}};
    c.groups.push_back({backends::binary(Node::div, f),
                        {{{half, pow2(f, -p)}, fmt::format("input: {} / 2^-{}", s(half), p)},
                         {{n(smin), pow2(f, -(m + 1))}, fmt::format("input: {} / 2^-{}", s(n(smin)), m + 1)}}});
    c.groups.push_back({backends::binary(Node::div, f),
                        {{{tiny, pow2(f, 1)}, fmt::format("output: {} / 2", s(tiny))},
                         {{n(tiny), pow2(f, m)}, fmt::format("output: {} / 2^{}", s(n(tiny)), m)}}});
    c.groups.push_back({compound(Node::div, Node::div, f),
                        {{{tiny, pow2(f, 1), pow2(f, -1)}, fmt::format("chain: ({} / 2) / 0.5", s(tiny))}}});
    return c;
  }
  // A subnormal power of two with an even exponent; its root is normal (where m >= 2).
  OpCases sqrt_cases() const {
    const int e = (emin - 1) % 2 == 0 ? emin - 1 : emin - 2;
    OpCases c{"sqrt", {transfer}};
    c.groups.push_back({backends::unary(Node::sqrt, f), {{{pow2(f, e)}, fmt::format("input: sqrt(2^{})", e)}}});
    return c;
  }
  // Conversions to a wider format g the device has, and back.
  OpCases cvt_cases(const Format& g) const {
    OpCases c{"cvt", {transfer}};
    const auto gv = [&](int e, bool neg = false) { return pow2(g, e, neg); };
    c.groups.push_back({backends::conversion(f, g),
                        {{{half}, fmt::format("input: {}({})", g.name, s(half))},
                         {{n(smin)}, fmt::format("input: {}({})", g.name, s(n(smin)))}}});
    c.groups.push_back({backends::conversion(g, f),
                        {{{gv(emin - 1)}, fmt::format("output: {}(2^{})", f.name, emin - 1)},
                         {{gv(f.quantum_min(), true)}, fmt::format("output: {}(-2^{})", f.name, f.quantum_min())}}});
    backends::ExprBuilder b(g, 1);
    b.cvt(b.cvt(b.in(0), f), g);
    c.groups.push_back({b.done(&g), {{{gv(emin - 1)}, fmt::format("chain: {}({}(2^{}))", g.name, f.name, emin - 1)}}});
    return c;
  }

 private:
  std::uint64_t n(std::uint64_t x) const { return negate(f, x); }
  std::string s(std::uint64_t x) const { return show(f, x); }

  const Format& f;
  const int p, m, emin;
  const std::uint64_t tiny, half, smax, smin, zero, one_, tiny15;
  // Every operation's table starts with plain transfers, which tie down the load and the store.
  const Group transfer;
};

std::vector<OpCases> subnormal_cases(const Format& f, const Format* g) {
  const SubnormalCaseTables tables(f);
  std::vector<OpCases> out = {tables.add_cases(), tables.mul_cases(), tables.fma_cases(), tables.div_cases()};
  if (f.man_bits >= 2) out.push_back(tables.sqrt_cases());
  if (g) out.push_back(tables.cvt_cases(*g));
  return out;
}

const char* key(bool flush) { return flush ? "flush" : "preserve"; }

// The operations the probe asks about (its cases: subnormal_cases() without a second format).
constexpr model::FlushOp kOps[] = {model::FlushOp::add, model::FlushOp::mul, model::FlushOp::fma, model::FlushOp::div,
                                   model::FlushOp::sqrt};
std::string op_name(model::FlushOp op) { return std::string(model::flush_op_names[std::size_t(op)]); }

// The unit's answer, per operation: what any expression on values of f shows. Flushing on transfer
// hides an operation's input flushing when it flushes its outputs and the reverse (a subnormal
// reaches an operation only from a load or from another operation's output), and a square root's
// input flushing altogether (it has no subnormal results to chain): those units answer alike.
// Registers whose range holds the subnormals of f as normal numbers never flush them in operations.
struct FlushAnswer {
  bool transfer = false;              // loads and stores flush
  const Format* registers = nullptr;  // registers too narrow in range to hold f's subnormals
  // Per operation of kOps: its flushing (a square root's input only), none where loads hide it.
  std::array<std::optional<model::OpFlush>, std::size(kOps)> ops;
  model::ZeroAddend zero_addend = model::ZeroAddend::ieee;
};

// What the answer says of an operation whose flushing transfers hide.
std::string hidden_by_loads(model::FlushOp op) {
  return op == model::FlushOp::sqrt ? "unobservable (loads flush)"
                                    : "flush (inputs, outputs or both: which is unobservable)";
}

nlohmann::json answer_fields(const FlushAnswer& a) {
  nlohmann::json j = nlohmann::json::object();
  j["transfer"] = key(a.transfer);
  if (a.registers) j["registers"] = a.registers->name;
  for (std::size_t i = 0; i < std::size(kOps); ++i) {
    const std::optional<model::OpFlush>& x = a.ops[i];
    if (!x)
      j[op_name(kOps[i])] = hidden_by_loads(kOps[i]);
    else if (kOps[i] == model::FlushOp::sqrt)
      j[op_name(kOps[i])] = {{"input", key(x->flush_input)}};
    else
      j[op_name(kOps[i])] = {{"input", key(x->flush_input)}, {"output", key(x->flush_output)}};
  }
  // The zero addend cases show it whatever the flushing (zeros are never flushed).
  if (a.zero_addend != model::ZeroAddend::ieee) j["fma.zero_addend"] = model::name(a.zero_addend);
  return j;
}

FlushAnswer flush_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  const bool wide = u.format != &f && u.format->emin() <= f.quantum_min();
  FlushAnswer a;
  a.transfer = u.subnormals.flush_transfer;
  if (u.format != &f && !wide) a.registers = u.format;
  for (std::size_t i = 0; i < std::size(kOps); ++i) {
    model::OpFlush x = wide ? model::OpFlush{} : model::flushing(u, kOps[i]);
    const bool sqrt = kOps[i] == model::FlushOp::sqrt;
    if (sqrt) x.flush_output = false;  // no subnormal results
    if (!(a.transfer && (sqrt || x.flush_input || x.flush_output))) a.ops[i] = x;
  }
  a.zero_addend = u.fma_zero_addend;
  return a;
}

std::string say_flush(const FlushAnswer& a) {
  const auto word = [](bool flush) { return flush ? "flushed" : "kept"; };
  // Operations that answer alike are named together: "add, mul, div: inputs kept, outputs kept".
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (std::size_t i = 0; i < std::size(kOps); ++i) {
    const std::optional<model::OpFlush>& x = a.ops[i];
    const std::string what =
        !x ? hidden_by_loads(kOps[i])
           : fmt::format("inputs {}{}", word(x->flush_input),
                         kOps[i] == model::FlushOp::sqrt ? "" : fmt::format(", outputs {}", word(x->flush_output)));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
    if (it == groups.end())
      groups.push_back({what, {op_name(kOps[i])}});
    else
      it->second.push_back(op_name(kOps[i]));
  }
  std::string s = fmt::format("{} on transfer", word(a.transfer));
  for (const auto& [what, ops] : groups) s += fmt::format("; {}: {}", join(ops, ", "), what);
  if (a.zero_addend != model::ZeroAddend::ieee) s += "; fma with a zero addend: the product a*b";
  return s + in_registers(a.registers);
}

// The profile keys of an answer: the unit's flushing (the one most operations share) and the
// operations that differ from it; of units that answer alike, the one that flushes everything.
backends::ScalarProfile flush_profile(const FlushAnswer& a) {
  backends::ScalarProfile p;
  if (a.registers) return p;
  std::vector<std::pair<model::FlushOp, std::pair<std::string, std::string>>> seen;  // op -> (input, output)
  for (std::size_t i = 0; i < std::size(kOps); ++i) {
    const model::FlushOp op = kOps[i];
    if (!a.ops[i]) {
      if (op != model::FlushOp::sqrt) seen.push_back({op, {"flush", "flush"}});
    } else {
      seen.push_back({op, {key(a.ops[i]->flush_input), op == model::FlushOp::sqrt ? "" : key(a.ops[i]->flush_output)}});
    }
  }
  // The unit's: the most common (input, output) of the operations with an output.
  std::map<std::pair<std::string, std::string>, int> count;
  for (const auto& [op, io] : seen)
    if (!io.second.empty()) ++count[io];
  std::pair<std::string, std::string> unit{"preserve", "preserve"};
  int best = 0;
  for (const auto& [io, n] : count)
    if (n > best) best = n, unit = io;
  const auto flushes = [](const std::string& k) { return k == "flush"; };
  p.subnormals = {flushes(unit.first), flushes(unit.second), flushes(key(a.transfer))};
  for (const auto& [op, io] : seen) {
    const std::string out = io.second.empty() ? unit.second : io.second;
    if (io.first == unit.first && out == unit.second) continue;
    backends::ScalarProfile::Operation& o = p.stated(*backends::find_unit_op(op_name(op)));
    o.flush_input = flushes(io.first);
    o.flush_output = flushes(out);
  }
  if (a.zero_addend != model::ZeroAddend::ieee) p.stated(backends::UnitOp::fma).zero_addend = a.zero_addend;
  return p;
}

class FlushProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.subnormals.flush"; }
  std::string_view title() const override { return "Subnormal flushing per operation"; }
  std::string_view source() const override {
    return "IEEE 754-2019 section 7.5; flush-to-zero and denormals-are-zero as GPUs and x86 implement them";
  }
  bool applies(const Format& f) const override {
    return f.has_subnormals() && f.has_sign() && f.man_bits >= 1 && f.has_zero();
  }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"SUBNORMALS", "the flushing of subnormals", audit::typed(say_flush)},
                                [](const model::ScalarUnit& u) { return audit::Answer(flush_answer(u)); },
                                audit::typed(flush_profile)};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    std::vector<Group> groups;
    for (OpCases& op : subnormal_cases(f, nullptr))
      for (Group& g : op.groups)
        if (groups.empty() || g.expr.code.size() > 1) groups.push_back(std::move(g));  // the transfers once
    // Every operation with every input and output flushing (a square root: input only), on
    // transfers that flush or not.
    const SpaceOf space = [](const Format&) {
      Space s;
      for (bool transfer : {false, true}) s.subnormals.push_back({false, false, transfer});
      s.op_flushes = {{}};
      for (model::FlushOp op : kOps) {
        const int states = op == model::FlushOp::sqrt ? 2 : 4;
        std::vector<std::array<std::optional<model::OpFlush>, model::kFlushOps>> next;
        for (const auto& partial : s.op_flushes)
          for (int i = 0; i < states; ++i) {
            auto x = partial;
            x[std::size_t(op)] = model::OpFlush{bool(i & 1), bool(i & 2)};
            next.push_back(x);
          }
        s.op_flushes = std::move(next);
      }
      s.fma_zero_addends = {model::ZeroAddend::ieee, model::ZeroAddend::product};
      return s;
    };
    std::vector<model::ScalarUnit> units =
        candidates(device, f, space, {model::UnitRounding::ieee(model::Rounding::rne)});
    // An IEEE fma rounding down gives -0 for +0 + -0 (the zero addend cases): its units too.
    for (std::size_t i = 0, n = units.size(); i < n; ++i)
      if (units[i].fma_zero_addend == model::ZeroAddend::ieee) {
        model::ScalarUnit v = units[i];
        v.add.rounding = model::UnitRounding::ieee(model::Rounding::rd);
        units.push_back(v);
      }
    audit::Finding finding;
    auto out = conclude(device, groups, units, question(), finding);
    if (!out) return audit::failed(out.error());
    return finding;
  }
};

}  // namespace

void add_subnormal_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const FlushProbe flush;
  out.push_back(&flush);
}

}  // namespace gp::scalar

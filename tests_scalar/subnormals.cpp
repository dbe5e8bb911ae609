// Subnormal flushing per operation (add, mul, fma, div, sqrt, cvt): does the operation read
// subnormal operands as zeros (input flush, DAZ), does it return zeros for subnormal results
// (output flush, FTZ), and what do the load and the store do? Three kinds of cases per operation:
//   input:  a subnormal operand from memory, a normal result  (flushed if the load or the op flushes)
//   output: normal operands, a subnormal result to memory     (flushed if the op or the store flushes)
//   chain:  op -> subnormal in a register -> op -> normal     (flushed if the op flushes either way)
// Every result is exact, so rounding does not enter. Hypotheses: the 16 combinations of flushing on
// load, on store, of the operation's inputs and of its outputs; what every consistent combination
// agrees on is reported, and what they disagree on is unobservable on this device (a unit that
// flushes on load and store hides whether its operations flush).
#include <fmt/format.h>

#include <map>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

struct Flushes {
  bool load, store, in, out;
};

const char* word(bool flush) { return flush ? "flushed" : "kept"; }

std::string name(Flushes x) {
  return fmt::format("{} on load, {} on store, inputs {}, outputs {}", word(x.load), word(x.store), word(x.in),
                     word(x.out));
}

std::vector<Flushes> all_flushes() {
  std::vector<Flushes> v;
  for (int i = 0; i < 16; ++i) v.push_back({bool(i & 8), bool(i & 4), bool(i & 2), bool(i & 1)});
  return v;
}

std::vector<Hypothesis> hypotheses(const Expr& e, const std::vector<Case>&) {
  std::vector<Hypothesis> h;
  for (Flushes x : all_flushes()) {
    ModelPolicy p;
    p.flush_load = x.load;
    p.flush_store = x.store;
    p.o.ftz_in = x.in;
    p.o.ftz_out = x.out;
    p.fused_mad = true;
    h.push_back({name(x), model_predictor(e, p)});
  }
  return h;
}

struct OpCases {
  std::string op;  // "add"
  std::vector<Group> groups;
};

std::vector<OpCases> build(const Format& f, const Format* g) {
  const int p = f.precision(), m = f.man_bits, emin = f.emin();
  const std::uint64_t tiny = smallest_normal(f), half = pow2(f, emin - 1), smax = model::pack(f, false, f.man_mask()),
                      smin = smallest_subnormal(f), zero = model::zero(f, false).bits, one_ = one(f);
  const std::uint64_t tiny15 = value(f, false, emin - 1, 3);
  const auto n = [&](std::uint64_t x) { return negate(f, x); };
  const auto s = [&](std::uint64_t x) { return show(f, x); };
  std::vector<OpCases> out;
  // Every operation's table starts with plain transfers, which tie down the load and the store.
  const Group transfer{backends::transfer(f),
                       {{{half}, fmt::format("transfer: {}", s(half))}, {{n(smin)}, fmt::format("transfer: {}", s(n(smin)))}}};

  {  // add
    OpCases c{"add", {transfer}};
    c.groups.push_back({backends::binary(Node::add, f),
                        {{{tiny, half}, fmt::format("input: {} + {}", s(tiny), s(half))},
                         {{n(tiny), n(half)}, fmt::format("input: {} + {}", s(n(tiny)), s(n(half)))},
                         {{smax, smin}, "input: largest subnormal + smallest subnormal"}}});
    c.groups.push_back({backends::binary(Node::add, f),
                        {{{tiny15, n(tiny)}, fmt::format("output: {} + {}", s(tiny15), s(n(tiny)))},
                         {{n(tiny15), tiny}, fmt::format("output: {} + {}", s(n(tiny15)), s(tiny))}}});
    c.groups.push_back({compound(Node::add, Node::add, f),
                        {{{tiny15, n(tiny), tiny}, fmt::format("chain: ({} + {}) + {}", s(tiny15), s(n(tiny)), s(tiny))}}});
    out.push_back(std::move(c));
  }
  {  // mul
    OpCases c{"mul", {transfer}};
    c.groups.push_back({backends::binary(Node::mul, f),
                        {{{half, pow2(f, p)}, fmt::format("input: {} * 2^{}", s(half), p)},
                         {{n(smin), pow2(f, m + 1)}, fmt::format("input: {} * 2^{}", s(n(smin)), m + 1)}}});
    c.groups.push_back({backends::binary(Node::mul, f),
                        {{{tiny, pow2(f, -1)}, fmt::format("output: {} * 0.5", s(tiny))},
                         {{n(tiny), pow2(f, -m)}, fmt::format("output: {} * 2^-{}", s(n(tiny)), m)}}});
    c.groups.push_back({compound(Node::mul, Node::mul, f),
                        {{{tiny, pow2(f, -1), pow2(f, 1)}, fmt::format("chain: ({} * 0.5) * 2", s(tiny))}}});
    out.push_back(std::move(c));
  }
  {  // fma
    OpCases c{"fma", {transfer}};
    c.groups.push_back({backends::ternary(Node::fma, f),
                        {{{half, pow2(f, p), zero}, fmt::format("input: fma({}, 2^{}, 0)", s(half), p)},
                         {{tiny, one_, half}, fmt::format("input: fma({}, 1, {})", s(tiny), s(half))},
                         {{one_, n(half), n(tiny)}, fmt::format("input: fma(1, {}, {})", s(n(half)), s(n(tiny)))}}});
    c.groups.push_back({backends::ternary(Node::fma, f),
                        {{{tiny, pow2(f, -1), zero}, fmt::format("output: fma({}, 0.5, 0)", s(tiny))},
                         {{tiny15, one_, n(tiny)}, fmt::format("output: fma({}, 1, {})", s(tiny15), s(n(tiny)))}}});
    backends::ExprBuilder b(f, 5);
    const int t = b.op(Node::fma, b.in(0), b.in(1), b.in(2));
    b.op(Node::fma, t, b.in(3), b.in(4));
    c.groups.push_back({b.done(), {{{tiny, pow2(f, -1), zero, pow2(f, 1), zero}, fmt::format("chain: fma(fma({}, 0.5, 0), 2, 0)", s(tiny))}}});
    out.push_back(std::move(c));
  }
  {  // div
    OpCases c{"div", {transfer}};
    c.groups.push_back({backends::binary(Node::div, f),
                        {{{half, pow2(f, -p)}, fmt::format("input: {} / 2^-{}", s(half), p)},
                         {{n(smin), pow2(f, -(m + 1))}, fmt::format("input: {} / 2^-{}", s(n(smin)), m + 1)}}});
    c.groups.push_back({backends::binary(Node::div, f),
                        {{{tiny, pow2(f, 1)}, fmt::format("output: {} / 2", s(tiny))},
                         {{n(tiny), pow2(f, m)}, fmt::format("output: {} / 2^{}", s(n(tiny)), m)}}});
    c.groups.push_back({compound(Node::div, Node::div, f),
                        {{{tiny, pow2(f, 1), pow2(f, -1)}, fmt::format("chain: ({} / 2) / 0.5", s(tiny))}}});
    out.push_back(std::move(c));
  }
  if (m >= 2) {  // sqrt: a subnormal power of two with an even exponent; its root is normal
    const int e = (emin - 1) % 2 == 0 ? emin - 1 : emin - 2;
    OpCases c{"sqrt", {transfer}};
    c.groups.push_back({backends::unary(Node::sqrt, f), {{{pow2(f, e)}, fmt::format("input: sqrt(2^{})", e)}}});
    out.push_back(std::move(c));
  }
  if (g) {  // conversions to a wider format the device has, and back
    OpCases c{"cvt", {transfer}};
    const auto gv = [&](int e, bool neg = false) { return pow2(*g, e, neg); };
    c.groups.push_back({backends::conversion(f, *g),
                        {{{half}, fmt::format("input: {}({})", g->name, s(half))},
                         {{n(smin)}, fmt::format("input: {}({})", g->name, s(n(smin)))}}});
    c.groups.push_back({backends::conversion(*g, f),
                        {{{gv(emin - 1)}, fmt::format("output: {}(2^{})", f.name, emin - 1)},
                         {{gv(f.quantum_min(), true)}, fmt::format("output: {}(-2^{})", f.name, f.quantum_min())}}});
    backends::ExprBuilder b(*g, 1);
    b.cvt(b.cvt(b.in(0), f), *g);
    c.groups.push_back({b.done(&*g), {{{gv(emin - 1)}, fmt::format("chain: {}({}(2^{}))", g->name, f.name, emin - 1)}}});
    out.push_back(std::move(c));
  }
  return out;
}

// "flush" / "preserve" when every consistent hypothesis agrees, else nullopt.
std::optional<bool> agree(const std::vector<std::string>& consistent, bool Flushes::*field) {
  std::map<std::string, Flushes> by_name;
  for (Flushes x : all_flushes()) by_name[name(x)] = x;
  return agreed<bool>(consistent, [&](const std::string& h) { return by_name.at(h).*field; });
}

nlohmann::json key(std::optional<bool> v) {
  if (!v) return nullptr;
  return *v ? "flush" : "preserve";
}

class FlushProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.subnormals.flush"; }
  std::string_view title() const override { return "Subnormal flushing per operation"; }
  std::string_view source() const override {
    return "IEEE 754-2019 section 7.5; flush-to-zero and denormals-are-zero as GPUs and x86 implement them";
  }
  bool applies(const Format& f) const override { return f.has_subnormals() && f.has_sign() && f.man_bits >= 1 && f.has_zero(); }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const std::vector<OpCases> ops = build(f, wider_on(device, f));
    audit::Finding finding;
    // First pass: each operation's consistent combinations. Loads and stores do not depend on the
    // operation: the (load, store) pairs every operation admits are the device's.
    std::vector<std::vector<std::string>> per_op;
    std::map<std::string, Flushes> by_name;
    for (Flushes x : all_flushes()) by_name[name(x)] = x;
    std::vector<bool> transfer_ok(4, true);  // index load * 2 + store
    for (const OpCases& op : ops) {
      auto b = select_all(device, op.groups, hypotheses, finding);
      if (!b) return audit::failed(b.error().message);
      std::vector<bool> seen(4, false);
      for (const std::string& h : b->consistent) seen[by_name.at(h).load * 2 + by_name.at(h).store] = true;
      for (int i = 0; i < 4; ++i) transfer_ok[std::size_t(i)] = transfer_ok[std::size_t(i)] && seen[std::size_t(i)];
      per_op.push_back(b->consistent);
    }
    // A unit's flushing is the same for every operation: those that show it decide, those whose
    // loads and stores hide it (a square root has no chain) do not.
    bool any_in_flush = false, any_out_flush = false, some_in_known = false, some_out_known = false;
    std::map<std::string, std::vector<std::string>> by_outcome;  // "inputs flushed, outputs kept" -> ops
    std::vector<std::string> failures, all_consistent;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::string& op = ops[k].op;
      std::vector<std::string> cs;
      for (const std::string& h : per_op[k])
        if (transfer_ok[std::size_t(by_name.at(h).load * 2 + by_name.at(h).store)]) cs.push_back(h);
      all_consistent.insert(all_consistent.end(), cs.begin(), cs.end());
      const bool output_applies = op != "sqrt";
      if (cs.empty()) {
        failures.push_back(op);
        finding.parameters[op] = {{"input", nullptr}, {"output", nullptr}, {"consistent", false}};
        continue;
      }
      const auto in = agree(cs, &Flushes::in), out = agree(cs, &Flushes::out);
      finding.parameters[op] = {{"input", key(in)}};
      if (output_applies) finding.parameters[op]["output"] = key(out);
      if (in) {
        any_in_flush = any_in_flush || *in;
        some_in_known = true;
      }
      if (output_applies && out) {
        any_out_flush = any_out_flush || *out;
        some_out_known = true;
      }
      const std::string what = fmt::format(
          "inputs {}{}", in ? word(*in) : "unobservable",
          output_applies ? fmt::format(", outputs {}", out ? word(*out) : "unobservable") : std::string());
      by_outcome[what].push_back(op);
    }
    // Profile keys: "flush" if an operation is seen to flush, "preserve" if those seen all keep.
    if (some_in_known) finding.profile["subnormals"]["input"] = any_in_flush ? "flush" : "preserve";
    if (some_out_known) finding.profile["subnormals"]["output"] = any_out_flush ? "flush" : "preserve";
    const std::optional<bool> load = agree(all_consistent, &Flushes::load), store = agree(all_consistent, &Flushes::store);
    finding.parameters["load"] = key(load);
    finding.parameters["store"] = key(store);

    std::vector<std::string> parts;
    if (load && store) {
      parts.push_back(*load || *store ? fmt::format("{} on load, {} on store", word(*load), word(*store))
                                      : "kept on load and store");
    } else if (!all_consistent.empty()) {
      parts.push_back("flushed by a load or a store (which one is unobservable)");
    }
    for (const auto& [what, names] : by_outcome) parts.push_back(fmt::format("{}: {}", join(names, ", "), what));
    if (!failures.empty())
      parts.push_back(fmt::format("{}: fits no combination of flushes (see the observations)", join(failures, ", ")));
    finding.verdict = "SUBNORMALS: " + join(parts, "; ");
    return finding;
  }
};

}  // namespace

void add_subnormal_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const FlushProbe flush;
  out.push_back(&flush);
}

}  // namespace gp::scalar

// Subnormal flushing per operation (add, mul, fma, div, sqrt, cvt): does the operation read
// subnormal operands as zeros (input flush, DAZ), does it return zeros for subnormal results
// (output flush, FTZ), and what do the load and the store do? Three kinds of cases per operation:
//   input:  a subnormal operand from memory, a normal result  (flushed if the load or the op flushes)
//   output: normal operands, a subnormal result to memory     (flushed if the op or the store flushes)
//   chain:  op -> subnormal in a register -> op -> normal     (flushed if the op flushes either way)
// Every result is exact, so rounding does not enter. Candidates: the units of the model with every
// flushing policy (input, output, transfer), in registers of f or wider (nvidia-g70-binary16 keeps
// binary16 subnormals as binary32 normals in its registers). Conversions involve a second unit, whose
// policy the candidates do not vary: they are left out.
#include <fmt/format.h>


#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

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

const char* key(bool flush) { return flush ? "flush" : "preserve"; }

// The policy's answer: what any expression on values of f shows. Flushing on transfer hides the
// operations' input flushing when they flush their outputs and the reverse (a subnormal reaches an
// operation only from a load or from another operation's output): those units answer alike.
// Registers whose range holds the subnormals of f as normal numbers never flush them in operations.
nlohmann::json flush_answer(const model::ScalarUnit& u) {
  model::SubnormalPolicy s = u.subnormals;
  const Format& f = u.storage_format();
  if (u.format != &f) {
    if (u.format->emin() > f.quantum_min()) {
      return {{"registers", u.format->name}, {"transfer", key(s.flush_transfer)}, {"input", key(s.flush_input)},
              {"output", key(s.flush_output)}};
    }
    s.flush_input = s.flush_output = false;
  }
  nlohmann::json j = nlohmann::json::object();
  j["transfer"] = key(s.flush_transfer);
  if (s.flush_transfer && (s.flush_input || s.flush_output)) {
    j["operations"] = "flush (inputs, outputs or both: which is unobservable)";
  } else {
    j["input"] = key(s.flush_input);
    j["output"] = key(s.flush_output);
  }
  return j;
}

std::string say_flush(const nlohmann::json& a) {
  const std::string regs = a.contains("registers") ? fmt::format(" (in {} registers)", a["registers"].get<std::string>()) : "";
  const auto word = [](const nlohmann::json& v) { return v == "flush" ? "flushed" : "kept"; };
  if (a.contains("operations"))
    return fmt::format("flushed to zero on transfer; operations flush their inputs or outputs (which one is unobservable){}", regs);
  return fmt::format("{} on transfer; inputs {}, outputs {} by the operations{}", word(a["transfer"]), word(a["input"]),
                     word(a["output"]), regs);
}

// The profile keys of an answer; of units that answer alike, the one that flushes everything.
nlohmann::json flush_profile(const nlohmann::json& a) {
  if (a.contains("registers")) return nlohmann::json::object();
  const bool both = a.contains("operations");
  return {{"subnormals",
           {{"transfer", a["transfer"]}, {"input", both ? nlohmann::json("flush") : a["input"]},
            {"output", both ? nlohmann::json("flush") : a["output"]}}}};
}

class FlushProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.subnormals.flush"; }
  std::string_view title() const override { return "Subnormal flushing per operation"; }
  std::string_view source() const override {
    return "IEEE 754-2019 section 7.5; flush-to-zero and denormals-are-zero as GPUs and x86 implement them";
  }
  bool applies(const Format& f) const override { return f.has_subnormals() && f.has_sign() && f.man_bits >= 1 && f.has_zero(); }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"SUBNORMALS", "the flushing of subnormals", say_flush}, flush_answer, flush_profile};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    std::vector<Group> groups;
    for (OpCases& op : build(f, nullptr))
      for (Group& g : op.groups)
        if (groups.empty() || g.expr.code.size() > 1) groups.push_back(std::move(g));  // the transfers once
    const SpaceOf space = [](const Format&) {
      Space s;
      for (int i = 0; i < 8; ++i) s.subnormals.push_back({bool(i & 1), bool(i & 2), bool(i & 4)});
      return s;
    };
    audit::Finding finding;
    auto out = conclude(device, groups, candidates(device, f, space, {model::UnitRounding::ieee(model::Rounding::rne)}),
                        question(), finding);
    if (!out) return audit::failed(out.error().message);
    return finding;
  }
};

}  // namespace

void add_subnormal_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const FlushProbe flush;
  out.push_back(&flush);
}

}  // namespace gp::scalar

// Subnormal intermediates: a subnormal result used by the next operation of the same expression,
// never stored. Where loads and stores flush, single operations cannot show whether the unit
// itself flushes its results or its operands; two dependent operations can: (x * y) * z and
// (x * y) + z with x * y subnormal and x, y, z, and the exact result, normal. The candidates are
// the units with every input and output flushing of the multiplier and the adder, and of transfers.
#include <fmt/format.h>

#include "tests_scalar/families.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace {

constexpr const char *mul_chain = "(x*y)*z", *add_chain = "(x*y)+z";

// Whether the subnormal x * y reaches the next operation of each chain, and whether transfers flush.
struct IntermediateAnswer {
  bool mul_flushes = false, add_flushes = false, transfer_flushes = false;
};

nlohmann::json answer_fields(const IntermediateAnswer& a) {
  return {{mul_chain, a.mul_flushes ? "flush" : "keep"},
          {add_chain, a.add_flushes ? "flush" : "keep"},
          {"transfer", a.transfer_flushes ? "flush" : "preserve"}};
}

// From the unit's parameters: the product is flushed by the multiplier's output flushing or by the
// next operation's input flushing, never in registers that hold f's subnormals as normal numbers.
IntermediateAnswer intermediate_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  const bool wide = u.format != &f && u.format->emin() <= f.quantum_min();
  const auto flush = [&](model::FlushOp op) { return wide ? model::OpFlush{} : model::flushing(u, op); };
  const bool product = flush(model::FlushOp::mul).flush_output;
  return {product || flush(model::FlushOp::mul).flush_input, product || flush(model::FlushOp::add).flush_input,
          u.subnormals.flush_transfer};
}

std::string say_intermediate(const IntermediateAnswer& a) {
  const std::string t = a.transfer_flushes ? "loads and stores flush" : "loads and stores keep subnormals";
  if (a.mul_flushes == a.add_flushes)
    return fmt::format("a subnormal intermediate result {} ({})",
                       a.mul_flushes ? "is flushed to zero before the next operation" : "reaches the next operation",
                       t);
  return fmt::format("a subnormal product is {} by a multiplication and {} by an addition ({})",
                     a.mul_flushes ? "flushed" : "kept", a.add_flushes ? "flushed" : "kept", t);
}

// Only where loads and stores flush does this decide the profile: otherwise single operations
// (scalar.subnormals.flush) tell a flushed result from a flushed operand, which this cannot.
backends::ScalarProfile intermediate_profile(const IntermediateAnswer& a) {
  backends::ScalarProfile p;
  if (!a.transfer_flushes || a.mul_flushes != a.add_flushes) return p;
  backends::ScalarProfile::Subnormals& s = p.subnormals.emplace();
  s.flush_output = a.mul_flushes;
  if (!a.mul_flushes) s.flush_input = false;
  return p;
}

class IntermediateProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.subnormals.intermediate"; }
  std::string_view title() const override { return "Subnormal intermediate results"; }
  std::string_view source() const override {
    return "Daumas et al. 2006, section 2.1 (subnormals); MMA-Sim section III-F (flush after operations)";
  }
  bool applies(const Format& f) const override { return f.has_subnormals() && f.man_bits >= 4; }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"SUBNORMALS", "subnormal intermediate results", audit::typed(say_intermediate)},
                                [](const model::ScalarUnit& u) { return audit::Answer(intermediate_answer(u)); },
                                audit::typed(intermediate_profile)};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    // x * y = 1.5 * 2^(emin-3): subnormal and exact; x, y normal.
    const int a = f.emin() / 2, b = f.emin() - 3 - a;
    const std::uint64_t x = value(f, false, a - 1, 3), y = pow2(f, b);
    const std::uint64_t scale = pow2(f, 10), tiny_normal = smallest_normal(f);
    backends::ExprBuilder m(f, 3), s(f, 3);
    m.op(Node::mul, m.op(Node::mul, m.in(0), m.in(1)), m.in(2));
    s.op(Node::add, s.op(Node::mul, s.in(0), s.in(1)), s.in(2));
    const std::vector<Group> groups = {
        {m.done(), {{{x, y, scale}, "(x * y) * 2^10"}, {{negate(f, x), y, scale}, "(-x * y) * 2^10"}}},
        {s.done(), {{{x, y, tiny_normal}, "(x * y) + 2^emin"}}},
        {backends::transfer(f), {{{smallest_subnormal(f)}, "transfer of the smallest subnormal"}}}};
    // The candidates: transfers, the multiplier's and the adder's input and output flushing, each
    // with the device's multipliers (a correction constant may alter the products), in registers
    // of f or wider.
    const SpaceOf space = [](const Format&) {
      Space sp;
      for (bool transfer : {false, true}) sp.subnormals.push_back({false, false, transfer});
      sp.op_flushes = add_and_mul_flushes();
      return sp;
    };
    auto units = with_reproducing_multipliers(
        device, candidates(device, f, space, {model::UnitRounding::ieee(model::Rounding::rne)}), ctx);
    if (!units) return audit::failed(units.error());
    if (units->empty()) units->push_back(model::ieee_unit(f));  // no multiplier fits: nothing reproduces, said so
    audit::Finding out;
    auto got = conclude(device, groups, *units, question(), out);
    if (!got) return audit::failed(got.error());
    // The readings of the old verdict, from the answer when one is stated.
    if (const auto& j = out.judgement; j && j->conclusion == audit::Conclusion::stated) {
      const IntermediateAnswer& stated = j->answer.as<IntermediateAnswer>();
      out.parameters["flushed"] =
          stated.mul_flushes != stated.add_flushes ? nlohmann::json(nullptr) : nlohmann::json(stated.mul_flushes);
      out.parameters["transfer_flushes"] = stated.transfer_flushes;
    }
    return out;
  }
};

}  // namespace

void add_subnormal_intermediate_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const IntermediateProbe probe;
  out.push_back(&probe);
}

}  // namespace gp::scalar

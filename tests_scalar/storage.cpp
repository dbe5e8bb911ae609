// Storage and transfer of special values (Daumas, da Graca, Defour 2006, section 2.1): subnormals,
// NaNs (signalling and quiet, with payloads and both signs) and infinities sent to the device and
// read back, first through a load and a store with no operation, then through x*1 and x+(-0), the
// operations that leave every value unchanged in IEEE arithmetic. The paper found subnormals
// replaced by zeros on both its GPUs, infinities kept, NaNs kept on NVIDIA and signalling NaNs
// quieted on ATI. The candidates are units of the model (flushing on transfer and per operation,
// NaN policies), so each verdict states what the model's parameters imply for these values;
// infinities, which every unit keeps, are a measurement beside it.
#include <fmt/format.h>

#include <array>
#include <optional>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

struct Category {
  std::string name;  // "subnormals"
  std::vector<Case> cases;
};

// The special values of f, by category; `extra` are the operands that follow x (1 for x*1).
std::vector<Category> categories(const Format& f, const std::vector<std::uint64_t>& extra) {
  const auto with = [&](std::uint64_t x, std::string note) {
    Case c{{x}, std::move(note)};
    c.operands.insert(c.operands.end(), extra.begin(), extra.end());
    return c;
  };
  std::vector<Category> out;
  if (f.has_subnormals() && f.man_bits > 0) {
    Category c{"subnormals", {}};
    const std::uint64_t mid = model::pack(f, false, (f.man_mask() & 0x5555555555555555ULL) | 1);
    for (bool neg : {false, true}) {
      c.cases.push_back(with(smallest_subnormal(f, neg), fmt::format("{}smallest subnormal", neg ? "-" : "")));
      c.cases.push_back(
          with(mid ^ (neg ? f.sign_mask() : 0), fmt::format("{}subnormal, alternate bits", neg ? "-" : "")));
      c.cases.push_back(with(model::pack(f, neg, f.man_mask()), fmt::format("{}largest subnormal", neg ? "-" : "")));
    }
    out.push_back(std::move(c));
  }
  if (f.has_nan()) {
    Category c{"NaNs", {}};
    if (f.nan == model::NanStyle::ieee && f.man_bits >= 2) {
      const std::uint64_t q = f.quiet_bit(), low = f.man_mask() >> 1;  // payload bits below the quiet bit
      for (bool neg : {false, true}) {
        const char* s = neg ? "-" : "";
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | q), fmt::format("{}qNaN, no payload", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | q | 1), fmt::format("{}qNaN, payload 1", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | q | (low & 0x5555555555555555ULL)),
                               fmt::format("{}qNaN, alternate payload", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | 1), fmt::format("{}sNaN, payload 1", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | low), fmt::format("{}sNaN, full payload", s)));
      }
    } else {
      c.cases.push_back(with(model::canonical_nan(f), "NaN"));
      if (f.nan == model::NanStyle::all_ones && f.has_sign())
        c.cases.push_back(with(model::pack(f, true, f.magnitude_mask()), "-NaN"));
    }
    out.push_back(std::move(c));
  }
  if (f.has_inf()) {
    Category c{"infinities", {}};
    c.cases.push_back(with(model::pack(f, false, f.inf_magnitude()), "+inf"));
    c.cases.push_back(with(model::pack(f, true, f.inf_magnitude()), "-inf"));
    out.push_back(std::move(c));
  }
  return out;
}

// The answers' and the profile's word for what loads, stores and operations do to subnormals.
const char* subnormals_key(bool flush) { return flush ? "flush" : "preserve"; }

// The transfer policy's answer, for the classes of values f has (none: f has no such values).
struct TransferAnswer {
  std::optional<bool> subnormals_flushed;
  std::optional<bool> nans_quieted;  // signalling NaNs
};

nlohmann::json answer_fields(const TransferAnswer& a) {
  nlohmann::json j = nlohmann::json::object();
  if (a.subnormals_flushed) j["subnormals"] = subnormals_key(*a.subnormals_flushed);
  if (a.nans_quieted) j["nan"] = *a.nans_quieted ? "quiet" : "preserve";
  return j;
}

TransferAnswer transfer_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  TransferAnswer a;
  if (f.has_subnormals() && f.man_bits > 0) a.subnormals_flushed = u.subnormals.flush_transfer;
  if (f.has_nan() && f.nan == model::NanStyle::ieee && f.man_bits >= 2) a.nans_quieted = u.nan.quiet_on_transfer;
  return a;
}

std::string say_transfer(const TransferAnswer& a) {
  std::vector<std::string> parts;
  if (a.subnormals_flushed) parts.push_back(*a.subnormals_flushed ? "subnormals: flushed to zero" : "subnormals: kept");
  if (a.nans_quieted) parts.push_back(*a.nans_quieted ? "NaNs: signalling ones quieted" : "NaNs: kept");
  return parts.empty() ? std::string("nothing to transfer but normal numbers") : join(parts);
}

backends::ScalarProfile transfer_profile(const TransferAnswer& a) {
  backends::ScalarProfile p;
  if (a.subnormals_flushed) p.subnormals.emplace().flush_transfer = a.subnormals_flushed;
  if (a.nans_quieted) p.nan.emplace().quiet_on_transfer = a.nans_quieted;
  return p;
}

class TransferProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.storage.transfer"; }
  std::string_view title() const override { return "Transfer of subnormals, NaNs and infinities, no operation"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{
        {"TRANSFER (load and store, no operation)", "the transfer of special values", audit::typed(say_transfer)},
        [](const model::ScalarUnit& u) { return audit::Answer(transfer_answer(u)); },
        audit::typed(transfer_profile)};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const Expr expr = backends::transfer(f);
    std::vector<Group> groups;
    for (Category& c : categories(f, {})) groups.push_back({expr, std::move(c.cases)});
    const SpaceOf space = [](const Format&) {
      Space s;
      s.subnormals = {{false, false, false}, {false, false, true}};
      s.nans = {{false, false}, {false, true}};
      return s;
    };
    audit::Finding finding;
    auto out = conclude(device, groups, candidates(device, f, space, {model::UnitRounding::ieee(model::Rounding::rne)}),
                        question(), finding, {}, false);
    if (!out) return audit::failed(out.error());
    // Infinities: a measurement (every unit of the model keeps them).
    if (f.has_inf()) {
      const std::vector<std::uint64_t>& inf = out->back();
      const bool kept = inf.size() == 2 && inf[0] == model::pack(f, false, f.inf_magnitude()) &&
                        inf[1] == model::pack(f, true, f.inf_magnitude());
      finding.parameters["infinities"] = kept ? "preserve" : "other";
      finding.verdict += kept ? "; infinities: kept" : "; infinities: altered";
    }
    return finding;
  }
};

// The operations that change nothing, as the probe runs them: x * 1 and x + (-0).
struct NeutralOp {
  Node node;
  model::FlushOp flush;
  const char* name;
  const char* key;
};
constexpr NeutralOp neutral_ops[] = {{Node::mul, model::FlushOp::mul, "x*1", "mul_one"},
                                     {Node::add, model::FlushOp::add, "x+(-0)", "add_minus_zero"}};

// What x*1 and x+(-0) do to subnormals and NaNs, from the unit's parameters: a subnormal is lost
// (a zero of its sign, or +0 + -0) when the load flushes it, when the operation flushes its input or
// its (subnormal) output, unless the registers hold f's subnormals as normal numbers (then only the
// transfer flushes); a NaN operand comes out quieted (model/rounding.hpp), or canonical. A
// signalling NaN quieted on transfer comes out quieted either way. Per operation of neutral_ops,
// for the classes of values f has (none: f has no such values).
struct NeutralAnswer {
  std::optional<bool> subnormals_flushed;
  std::optional<bool> nans_canonical;
};
struct OperationAnswer {
  std::array<NeutralAnswer, std::size(neutral_ops)> ops;
};

nlohmann::json answer_fields(const OperationAnswer& a) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < std::size(neutral_ops); ++i) {
    const NeutralAnswer& n = a.ops[i];
    nlohmann::json o = nlohmann::json::object();
    if (n.subnormals_flushed) o["subnormals"] = subnormals_key(*n.subnormals_flushed);
    if (n.nans_canonical) o["nan"] = *n.nans_canonical ? "canonical" : "quiet";
    j[neutral_ops[i].key] = o;
  }
  return j;
}

OperationAnswer operation_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  const bool wide = u.format != &f && u.format->emin() <= f.quantum_min();
  OperationAnswer a;
  for (std::size_t i = 0; i < std::size(neutral_ops); ++i) {
    if (f.has_subnormals() && f.man_bits > 0) {
      const model::OpFlush x = wide ? model::OpFlush{} : model::flushing(u, neutral_ops[i].flush);
      a.ops[i].subnormals_flushed = u.subnormals.flush_transfer || x.flush_input || x.flush_output;
    }
    if (f.has_nan() && f.nan == model::NanStyle::ieee && f.man_bits >= 2) a.ops[i].nans_canonical = u.nan.canonical;
  }
  return a;
}

std::string say_operation(const OperationAnswer& a) {
  std::vector<std::string> ops;
  for (std::size_t i = 0; i < std::size(neutral_ops); ++i) {
    const NeutralAnswer& n = a.ops[i];
    std::vector<std::string> parts;
    if (n.subnormals_flushed)
      parts.push_back(*n.subnormals_flushed ? "subnormals: flushed to zero" : "subnormals: kept");
    if (n.nans_canonical)
      parts.push_back(*n.nans_canonical ? "NaNs: made canonical" : "NaNs: kept, signalling ones quieted");
    ops.push_back(
        fmt::format("{}: {}", neutral_ops[i].name, parts.empty() ? std::string("normal numbers only") : join(parts)));
  }
  return join(ops, "; ");
}

class OperationProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.storage.operation"; }
  std::string_view title() const override { return "Subnormals, NaNs and infinities through x*1 and x+(-0)"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  // The profile keys are the flushing and NaN probes' (scalar.subnormals.flush, scalar.nan.*):
  // this probe restates them through two operations.
  const UnitQuestion& question() const override {
    static const UnitQuestion q{
        {"OPERATIONS THAT CHANGE NOTHING", "what x*1 and x+(-0) do to special values", audit::typed(say_operation)},
        [](const model::ScalarUnit& u) { return audit::Answer(operation_answer(u)); }};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    std::vector<Group> groups;
    std::vector<std::pair<const NeutralOp*, std::size_t>> infinities;  // the op and its group of infinities
    for (const NeutralOp& op : neutral_ops) {
      const Expr expr = backends::binary(op.node, f);
      for (Category& c : categories(f, {op.node == Node::mul ? one(f) : model::zero(f, true).bits})) {
        if (c.name == "infinities") infinities.push_back({&op, groups.size()});
        groups.push_back({expr, std::move(c.cases)});
      }
    }
    // The candidates: transfers, x*1 and x+(-0) flushing or not, NaN results canonical or not, an
    // adder rounding down (+0 + -0 is -0) or not, each with the device's multipliers (a correction
    // constant may alter x*1), in registers of f or wider.
    const SpaceOf space = [](const Format& r) {
      Space s;
      s.adders = {{model::UnitRounding::ieee(model::Rounding::rne), std::nullopt, false},
                  {model::UnitRounding::ieee(model::Rounding::rd), std::nullopt, false}};
      for (bool transfer : {false, true}) s.subnormals.push_back({false, false, transfer});
      if (r.has_subnormals()) s.op_flushes = add_and_mul_flushes();
      s.nans = one_operand_nan_policies(r);
      return s;
    };
    auto units = with_reproducing_multipliers(
        device, candidates(device, f, space, {model::UnitRounding::ieee(model::Rounding::rne)}), ctx);
    if (!units) return audit::failed(units.error());
    if (units->empty()) units->push_back(model::ieee_unit(f));  // no multiplier fits: nothing reproduces, said so
    audit::Finding finding;
    auto out = conclude(device, groups, *units, question(), finding);
    if (!out) return audit::failed(out.error());
    // Infinities: a measurement (every unit of the model keeps them).
    for (const auto& [op, g] : infinities) {
      const std::vector<std::uint64_t>& inf = (*out)[g];
      const bool kept = inf.size() == 2 && inf[0] == model::pack(f, false, f.inf_magnitude()) &&
                        inf[1] == model::pack(f, true, f.inf_magnitude());
      finding.parameters["infinities"][op->key] = kept ? "preserve" : "other";
      finding.verdict += fmt::format("; {} infinities: {}", op->name, kept ? "kept" : "altered");
    }
    return finding;
  }
};

}  // namespace

void add_storage_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const TransferProbe transfer;
  static const OperationProbe operation;
  out.push_back(&transfer);
  out.push_back(&operation);
}

}  // namespace gp::scalar

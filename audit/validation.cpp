#include "audit/validation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <random>

#include "backends/reference/profile.hpp"
#include "backends/reference/reference_backend.hpp"

namespace gp::audit {

using backends::Expr;
using backends::Node;
using nlohmann::json;

void normalise_scalar_profile(backends::ScalarProfile& p) {
  using backends::UnitOp;
  // Roundings no probe told apart (<op>.equivalent_roundings, tests_scalar/probe_support.hpp): the
  // representative stays, but for the adder's class a fused fma chooses (below).
  for (std::size_t i = 0; i < backends::kUnitOps; ++i)
    if (auto& o = p.ops[i]; o && UnitOp(i) != UnitOp::add) o->equivalent_roundings.reset();
  // Adders that differ only in their tie-breaking (add.equivalent_roundings, from the guard-bits
  // probe): a fused fma rounds with the adder's mode and sees every rest, so its mode decides.
  if (auto& add = p.op(UnitOp::add); add && add->equivalent_roundings) {
    const std::vector<std::string> modes = *std::exchange(add->equivalent_roundings, std::nullopt);
    const auto& fma = p.op(UnitOp::fma);
    if (fma && fma->fused.value_or(false) && fma->rounding &&
        std::find(modes.begin(), modes.end(), model::name(*fma->rounding)) != modes.end())
      add->rounding = fma->rounding;
  }
  // A unit that truncates (guard bits, truncated columns) and rounds toward zero chops.
  const auto chop_if = [](std::optional<backends::ScalarProfile::Operation>& o, bool truncates) {
    if (o && truncates && o->rounding == model::UnitRounding::ieee(model::Rounding::rz))
      o->rounding = model::UnitRounding::chopped();
  };
  for (const UnitOp op : {UnitOp::add, UnitOp::add_cascaded}) {
    auto& o = p.op(op);
    chop_if(o, o && o->guard_bits && o->guard_bits->has_value());
  }
  auto& mul = p.op(UnitOp::mul);
  chop_if(mul, mul && mul->truncated_columns && mul->truncated_columns->has_value());
}

void assemble_register_profiles(backends::ScalarProfiles& profiles,
                                const std::map<std::string, RegisterReading>& readings,
                                const std::vector<const model::Format*>& formats) {
  for (const model::Format* f : formats) {
    const auto reading = readings.find(std::string(f->name));
    if (reading == readings.end() || reading->second.bits <= f->precision()) continue;
    const auto [bits, wider_range] = reading->second;
    const model::Format* reg = nullptr;
    for (const model::Format* g : formats)
      if (g != f && g->precision() == bits && g->exp_bits >= f->exp_bits && (g->emax() > f->emax()) == wider_range)
        reg = g;
    if (!reg || !profiles.contains(reg->name)) continue;
    backends::ScalarProfile& p = profiles[std::string(f->name)];
    const backends::ScalarProfile r = profiles[std::string(reg->name)];
    for (std::size_t i = 0; i < backends::kUnitOps; ++i)
      if (backends::kUnitOperationKeys[i].arithmetic) p.ops[i] = r.ops[i];
    // The flushing of operations is the registers' unit's; of transfers, the storage's.
    const std::optional<bool> in = r.subnormals ? r.subnormals->flush_input : std::nullopt,
                              out = r.subnormals ? r.subnormals->flush_output : std::nullopt;
    if (in || out || p.subnormals) {
      backends::ScalarProfile::Subnormals& s = backends::engaged(p.subnormals);
      s.flush_input = in;
      s.flush_output = out;
    }
    if (r.nan && r.nan->canonical) backends::engaged(p.nan).canonical = r.nan->canonical;
    p.registers = reg;
  }
}

namespace {

// Operands that meet every path: uniform bit patterns (specials and subnormals included) and values
// of nearby exponents (cancellation, carries, ties of the narrow formats).
std::uint64_t operand(std::mt19937_64& rng, const model::Format& f) {
  if (rng() % 2) return (rng() & f.storage_mask()) & ~((std::uint64_t{1} << f.pad_bits) - 1);
  const std::uint64_t field = std::uint64_t(f.bias) + rng() % 7 - 3;
  return model::pack(f, rng() & 1, ((field << f.man_bits) | (rng() & f.man_mask())) & f.magnitude_mask());
}

struct Op {
  Node node;
  const char* name;
};
constexpr Op ops[] = {{Node::add, "add"},   {Node::sub, "sub"}, {Node::mul, "mul"}, {Node::div, "div"},
                      {Node::sqrt, "sqrt"}, {Node::fma, "fma"}, {Node::mad, "mad"}, {Node::input, "transfer"}};

Expr expression(Node n, const model::Format& f) {
  switch (n) {
    case Node::input: return backends::transfer(f);
    case Node::sqrt: return backends::unary(n, f);
    case Node::fma:
    case Node::mad: return backends::ternary(n, f);
    default: return backends::binary(n, f);
  }
}

// The model's operation of a division or square root node (the operations that may be approximate).
std::optional<model::Op> model_op(Node n) {
  if (n == Node::div) return model::Op::div;
  if (n == Node::sqrt) return model::Op::sqrt;
  return std::nullopt;
}

using NotValidated = std::map<std::string, std::string>;  // operation -> why

// Whether a unit's key names an operation the validation runs.
bool validated_op(std::string_view key) {
  return std::any_of(std::begin(ops), std::end(ops), [&](const Op& op) { return key == op.name; });
}

// The unit the profile describes. An operation whose keys the model cannot take (the error's key)
// is left out, said in the error's words with key paths from the unit ("div.rounding: ..."), and
// the rest is read again; an error, with the profile's own key paths, when what is left is no unit.
Expected<model::ScalarUnit> unit_left(const model::Format& f, backends::ScalarProfile& keys,
                                      NotValidated& not_validated) {
  auto unit = backends::unit_of(f, keys, "");
  while (!unit) {
    const std::string op = unit.error().key;
    const auto o = backends::find_unit_op(op);
    if (!validated_op(op) || !o || !keys.op(*o))
      return Error(backends::unit_of(f, keys, fmt::format("profile.scalar.{}", f.name)).error());
    not_validated[op] = unit.error().message;
    keys.op(*o).reset();
    unit = backends::unit_of(f, keys, "");
  }
  return unit;
}

// Left out too: an operation no probe described (its finding was unexplained or inconclusive, so
// the profile has no key of it: the model's default would be a guess, not a finding), and what runs
// on a left-out operation's hardware: an unfused MAD or FMA on the multiplier and the adder, a
// division by reciprocal on the multiplier, subtraction on the adder.
void leave_out_unstated(const model::ScalarUnit& unit, const backends::ScalarProfile& keys,
                        NotValidated& not_validated) {
  for (std::size_t i = 0; i < backends::kUnitOps; ++i)
    if (const std::string key(backends::kUnitOperationKeys[i].key);
        backends::kUnitOperationKeys[i].stated && !keys.ops[i] && !not_validated.contains(key))
      not_validated[key] = "no probe stated its parameters";
  const auto out_with = [&](const char* op, const char* on, bool uses) {
    if (uses && not_validated.contains(on) && !not_validated.contains(op))
      not_validated[op] = fmt::format("runs on the {} left out", on);
  };
  for (const char* on : {"add", "mul"}) {
    // A fused MAD or FMA rounds in the adder's mode (model/scalar_unit.hpp): it runs on the adder too.
    const bool adder = std::string_view(on) == "add";
    out_with("mad", on, !unit.mad_fused || adder);
    // An fma that returns the product for a zero addend runs on the multiplier too.
    out_with("fma", on, !unit.fma_fused || adder || unit.fma_zero_addend == model::ZeroAddend::product);
  }
  out_with("sub", "add", true);
  out_with("div", "mul", unit.div.method == model::DivMethod::reciprocal);
}

// The device beside the model on `per_op` random operands of one operation: the mismatches, the
// first eight kept as observations of `out`.
Expected<std::uint64_t> mismatches_on(const Op& op, backends::Device& device, backends::Device& model_device,
                                      const model::ScalarUnit& unit, const model::Format& f, std::uint64_t per_op,
                                      std::mt19937_64& rng, Finding& out) {
  const Expr e = expression(op.node, f);
  std::vector<std::uint64_t> x(per_op * std::size_t(e.inputs));
  for (auto& v : x) v = operand(rng, f);
  auto got = device.scalar({&e, x});
  if (!got) return got.error().retold(fmt::format("{}: {}", op.name, got.error().message));
  auto predicted = model_device.scalar({&e, x});
  if (!predicted) return predicted.error().retold(fmt::format("{}: the model: {}", op.name, predicted.error().message));
  std::uint64_t bad = 0;
  for (std::size_t i = 0; i < per_op; ++i) {
    const std::uint64_t* xi = &x[i * std::size_t(e.inputs)];
    const std::uint64_t want = (*predicted)[i];
    if ((*got)[i] == want) continue;
    // NaNs of either sign and payload count alike unless the profile claims canonical NaNs.
    const bool both_nan = model::is_nan(model::classify(f, want)) && model::is_nan(model::classify(f, (*got)[i]));
    if (both_nan && !unit.nan.canonical) continue;
    // An approximate division or square root is checked against its bound, not the stand-in's bits.
    if (const auto mop = model_op(op.node);
        mop && model::approximate(unit, *mop) &&
        model::unit_accepts(unit, *mop, std::span(xi, std::size_t(e.inputs)), (*got)[i], f))
      continue;
    if (++bad <= 8) {
      Observation o;
      o.inputs.assign(xi, xi + e.inputs);
      o.output = (*got)[i];
      o.predictions = {{"profile", want}};
      o.input_bits = o.output_bits = f.storage_bits;
      o.note = op.name;
      out.observations.push_back(std::move(o));
    }
  }
  return bad;
}

}  // namespace

Finding validate_scalar_profile(backends::Device& device, const model::Format& f, backends::ScalarProfile& profile,
                                const ProbeContext& ctx) {
  Finding out;
  out.probe = "scalar.profile.validation";
  out.format = f.name;
  out.title = kValidationTitle;
  out.source = "MMA-Sim (Xie et al. 2025), section V: random differential validation";
  backends::ScalarProfile keys = profile;
  keys.validation.reset();
  NotValidated not_validated;
  const auto unit = unit_left(f, keys, not_validated);
  if (!unit) {
    out.status = Status::unsupported;
    out.message = "the probes did not describe a complete unit: " + unit.error().message;
    return out;
  }
  for (const auto& [op, why] : not_validated)
    if (const auto o = backends::find_unit_op(op)) keys.op(*o).reset();
  leave_out_unstated(*unit, keys, not_validated);
  // The unit's predictions come from the one interpreter, the reference device's.
  backends::Profile model_profile;
  model_profile.name = "profile";
  model_profile.units = {*unit};
  backends::ReferenceDevice model_device(std::move(model_profile));
  // A sharded campaign's run validates its share, from a seed of its own (audit::Shard).
  const std::uint64_t per_op = std::max<std::uint64_t>(
      1, ctx.shard.share((ctx.validation_cases ? ctx.validation_cases : ctx.cases(10000, 100000, 1000000)) /
                         std::size(ops)));
  std::mt19937_64 rng(ctx.shard.seed(ctx.seed ^ 0x5eed5eedULL));
  std::uint64_t cases = 0, mismatches = 0;
  json per = json::object();
  for (const Op& op : ops) {
    if (not_validated.contains(op.name)) continue;
    const auto bad = mismatches_on(op, device, model_device, *unit, f, per_op, rng, out);
    if (!bad) {
      out.status = status_of(bad.error());
      out.message = bad.error().message;
      return out;
    }
    per[op.name] = {{"cases", per_op}, {"mismatches", *bad}};
    cases += per_op;
    mismatches += *bad;
  }
  profile.validation = {cases, mismatches, not_validated};
  out.parameters = {{"cases", cases}, {"mismatches", mismatches}, {"per_operation", per}};
  out.verdict = validation_verdict(*profile.validation);
  if (!not_validated.empty()) out.parameters["not_validated"] = not_validated;
  return out;
}

std::string validation_verdict(const backends::ScalarProfile::Validation& v) {
  std::string s = v.mismatches == 0 ? fmt::format("PROFILE: predicts all {} random cases bit for bit", v.cases)
                                    : fmt::format("PROFILE: {} of {} random cases differ from the inferred profile",
                                                  v.mismatches, v.cases);
  if (v.not_validated.empty()) return s;
  std::vector<std::string> what;
  for (const auto& [op, why] : v.not_validated) what.push_back(fmt::format("{} ({})", op, why));
  return s + fmt::format("; not validated: {}", fmt::join(what, "; "));
}

}  // namespace gp::audit

#include "backends/reference/unit_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <variant>

#include "input/json_input.hpp"

namespace gp::backends {

using nlohmann::json;

namespace {

json rounding_json(const model::UnitRounding& r) { return std::string(model::name(r)); }
std::string flush_name(bool flush) { return flush ? "flush" : "preserve"; }

// Reads keys of one object with checks; every error names the key path (relative to the unit when
// `where` is empty) and, as Error::key, the unit's key it is under.
class Reader {
 public:
  Reader(const json& j, std::string where, std::string key = "")
      : j_(j), where_(std::move(where)), key_(std::move(key)) {}
  // The reader of `key`'s value v, under this reader's unit key or else under `key`.
  Reader child(const json& v, const char* key) const { return Reader(v, at(key), key_.empty() ? key : key_); }
  Error fail(std::string message) const { return Error{std::move(message), ErrorKind::invalid, key_}; }
  // An error of the object itself.
  Error fail_here(std::string_view what) const {
    return fail(where_.empty() ? std::string(what) : fmt::format("{}: {}", where_, what));
  }
  Expected<bool> check_object() const {
    if (!j_.is_object()) return fail_here("must be a JSON object");
    return true;
  }
  Expected<bool> only(std::initializer_list<std::string_view> keys) const {
    return only(std::vector<std::string_view>(keys));
  }
  Expected<bool> only(const std::vector<std::string_view>& keys) const {
    for (const auto& [k, v] : j_.items()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        std::string known;
        for (std::string_view x : keys) known += (known.empty() ? "" : ", ") + std::string(x);
        Error e = fail(fmt::format("{}: unknown key (known: {})", at(input::key_text(k)), known));
        if (e.key.empty()) e.key = k;  // an unknown key of the unit is the key at fault
        return e;
      }
    }
    return true;
  }
  const json* find(const char* key) const { return j_.contains(key) ? &j_.at(key) : nullptr; }
  std::string at(std::string_view key) const {
    return where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key);
  }
  Expected<bool> boolean(const char* key, std::optional<bool>& out) const {
    if (const json* v = find(key)) {
      if (!v->is_boolean()) return fail(fmt::format("{}: must be true or false", at(key)));
      out = v->get<bool>();
    }
    return true;
  }
  Expected<bool> rounding(const char* key, std::optional<model::UnitRounding>& out) const {
    if (const json* v = find(key)) {
      const auto r = v->is_string() ? model::find_unit_rounding(v->get<std::string>()) : std::nullopt;
      if (!r)
        return fail(
            fmt::format("{}: must be chop or a rounding name (rne rna rnz rnu rnd rno rz ru rd ra ro)", at(key)));
      out = *r;
    }
    return true;
  }
  // "max_ulps": an approximate operation's bound (model/scalar_unit.hpp).
  Expected<bool> ulp_bound(std::optional<model::UlpBound>& out) const {
    if (const json* v = find("max_ulps")) {
      const auto b = v->is_number() ? model::ulp_bound(v->get<double>()) : std::nullopt;
      if (!b) return fail(fmt::format("{}: must be a number of ulps, 0 or more and below 2^23", at("max_ulps")));
      out = *b;
    }
    return true;
  }
  // null (stated: none) or an integer from 0 to 64.
  Expected<bool> optional_int(const char* key, std::optional<std::optional<int>>& out) const {
    if (const json* v = find(key)) {
      if (v->is_null()) {
        out.emplace(std::nullopt);
      } else if (v->is_number_integer() && v->get<long long>() >= 0 && v->get<long long>() <= 64) {
        out = v->get<int>();
      } else {
        return fail(fmt::format("{}: must be null or an integer from 0 to 64", at(key)));
      }
    }
    return true;
  }
  // A string among the names `lookup` knows; `names` lists them for the error.
  template <class T, class Lookup>
  Expected<bool> named(const char* key, Lookup lookup, std::string_view names, std::optional<T>& out) const {
    if (const json* v = find(key)) {
      const std::optional<T> x = v->is_string() ? lookup(v->get<std::string>()) : std::nullopt;
      if (!x) return fail(fmt::format("{}: must be {}, not {}", at(key), names, v->dump()));
      out = *x;
    }
    return true;
  }
  Expected<bool> flush(const char* key, std::optional<bool>& out) const {
    if (const json* v = find(key)) {
      if (!v->is_string() || (*v != "flush" && *v != "preserve"))
        return fail(fmt::format("{}: must be \"flush\" or \"preserve\"", at(key)));
      out = *v == "flush";
    }
    return true;
  }

 private:
  const json& j_;
  std::string where_, key_;
};

// Runs the checks in order, returning the first error.
#define GP_TRY(expr)                \
  do {                              \
    auto gp_r = (expr);             \
    if (!gp_r) return gp_r.error(); \
  } while (0)

template <class T>
void take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

void merge_operation(ScalarProfile::Operation& a, const ScalarProfile::Operation& b) {
  take(a.rounding, b.rounding);
  take(a.guard_bits, b.guard_bits);
  take(a.truncated_columns, b.truncated_columns);
  take(a.sticky, b.sticky);
  take(a.fused, b.fused);
  take(a.correction, b.correction);
  take(a.method, b.method);
  take(a.max_ulps, b.max_ulps);
  take(a.zero_addend, b.zero_addend);
  take(a.equivalent_roundings, b.equivalent_roundings);
  take(a.flush_input, b.flush_input);
  take(a.flush_output, b.flush_output);
}

// The operation of a flushing operation's key (model::flush_op_names).
constexpr UnitOp kFlushUnitOps[model::kFlushOps] = {UnitOp::add, UnitOp::mul, UnitOp::div, UnitOp::sqrt,
                                                    UnitOp::fma, UnitOp::mad, UnitOp::cvt};

const char* key_of(UnitOp o) { return key(o).data(); }

json operation_json(const ScalarProfile::Operation& o) {
  json j = json::object();
  const auto nullable = [](const std::optional<int>& v) { return v ? json(*v) : json(nullptr); };
  if (o.rounding) j["rounding"] = rounding_json(*o.rounding);
  if (o.guard_bits) j["guard_bits"] = nullable(*o.guard_bits);
  if (o.sticky) j["sticky"] = *o.sticky;
  if (o.truncated_columns) j["truncated_columns"] = nullable(*o.truncated_columns);
  if (o.correction) j["correction"] = *o.correction;
  if (o.fused) j["fused"] = *o.fused;
  if (o.method) j["method"] = model::name(*o.method);
  if (o.max_ulps) j["max_ulps"] = model::ulps(*o.max_ulps);
  if (o.zero_addend) j["zero_addend"] = model::name(*o.zero_addend);
  if (o.equivalent_roundings) j["equivalent_roundings"] = *o.equivalent_roundings;
  if (o.flush_input) j["subnormals"]["input"] = flush_name(*o.flush_input);
  if (o.flush_output) j["subnormals"]["output"] = flush_name(*o.flush_output);
  return j;
}

// The keys each operation takes, beside "subnormals" (its own flushing) where it has one.
std::vector<std::string_view> operation_keys(UnitOp o) {
  switch (o) {
    case UnitOp::add:
    case UnitOp::add_cascaded: return {"rounding", "guard_bits", "sticky", "equivalent_roundings", "subnormals"};
    case UnitOp::sub: return {"rounding", "equivalent_roundings"};
    case UnitOp::mul: return {"rounding", "truncated_columns", "correction", "equivalent_roundings", "subnormals"};
    case UnitOp::div: return {"method", "rounding", "max_ulps", "equivalent_roundings", "subnormals"};
    case UnitOp::sqrt: return {"rounding", "max_ulps", "equivalent_roundings", "subnormals"};
    case UnitOp::fma: return {"fused", "rounding", "equivalent_roundings", "subnormals", "zero_addend"};
    case UnitOp::mad: return {"fused", "rounding", "equivalent_roundings", "subnormals"};
    case UnitOp::cvt: return {"rounding", "equivalent_roundings", "subnormals"};
  }
  return {};
}

Expected<bool> read_operation(const Reader& r, UnitOp op, ScalarProfile::Operation& o) {
  GP_TRY(r.check_object());
  GP_TRY(r.only(operation_keys(op)));
  GP_TRY(r.rounding("rounding", o.rounding));
  GP_TRY(r.optional_int("guard_bits", o.guard_bits));
  GP_TRY(r.boolean("sticky", o.sticky));
  GP_TRY(r.optional_int("truncated_columns", o.truncated_columns));
  if (const json* c = r.find("correction")) {
    if (c->is_null()) {
      o.correction = 0;
    } else if (c->is_number_unsigned()) {
      o.correction = c->get<std::uint64_t>();
    } else {
      return r.fail(fmt::format("{}: must be a non-negative integer", r.at("correction")));
    }
  }
  GP_TRY(r.boolean("fused", o.fused));
  if (const json* z = r.find("zero_addend")) {
    const auto za = z->is_string() ? model::find_zero_addend(z->get<std::string>()) : std::nullopt;
    if (!za) return r.fail(fmt::format("{}: must be \"ieee\" or \"product\"", r.at("zero_addend")));
    o.zero_addend = *za;
  }
  if (const json* m = r.find("method")) {
    const auto method = m->is_string() ? model::find_div_method(m->get<std::string>()) : std::nullopt;
    if (!method)
      return r.fail(
          fmt::format("{}: must be \"correctly_rounded\", \"reciprocal\" or \"approximate\"", r.at("method")));
    o.method = *method;
  }
  GP_TRY(r.ulp_bound(o.max_ulps));
  if (const json* e = r.find("equivalent_roundings")) {
    std::vector<std::string> modes;
    for (const json& x : e->is_array() ? *e : json::array({nullptr})) {
      if (!x.is_string() || !model::find_unit_rounding(x.get<std::string>()))
        return r.fail(fmt::format("{}: must be a list of rounding names", r.at("equivalent_roundings")));
      modes.push_back(x.get<std::string>());
    }
    o.equivalent_roundings = std::move(modes);
  }
  if (const json* sv = r.find("subnormals")) {
    const Reader s = r.child(*sv, "subnormals");
    GP_TRY(s.check_object());
    GP_TRY(s.only({"input", "output"}));
    GP_TRY(s.flush("input", o.flush_input));
    GP_TRY(s.flush("output", o.flush_output));
  }
  return true;
}

// The validation a result's profile holds; left unread where it is not one (it describes no unit,
// and the result's checks, audit/report/result_check.hpp, name what is wrong with it).
std::optional<ScalarProfile::Validation> read_validation(const json& v) {
  const auto count = [&](const char* key) { return v.contains(key) && v[key].is_number_unsigned(); };
  if (!v.is_object() || !count("cases") || !count("mismatches")) return std::nullopt;
  ScalarProfile::Validation out{v["cases"].get<std::uint64_t>(), v["mismatches"].get<std::uint64_t>(), {}};
  if (const auto nv = v.find("not_validated"); nv != v.end()) {
    if (!nv->is_object()) return std::nullopt;
    for (const auto& [op, why] : nv->items()) {
      if (!why.is_string()) return std::nullopt;
      out.not_validated[op] = why.get<std::string>();
    }
  }
  return out;
}

void apply_adder(const ScalarProfile::Operation& o, model::AdderParams& a) {
  if (o.rounding) a.rounding = *o.rounding;
  if (o.guard_bits) a.guard_bits = *o.guard_bits;
  if (o.sticky) a.sticky = *o.sticky;
}

}  // namespace

bool ScalarProfile::empty() const {
  return std::none_of(ops.begin(), ops.end(), [](const auto& o) { return o.has_value(); }) && !subnormals && !nan &&
         !registers && !validation;
}

void merge(ScalarProfile& into, const ScalarProfile& from) {
  for (std::size_t i = 0; i < kUnitOps; ++i)
    if (const auto& o = from.ops[i]) merge_operation(engaged(into.ops[i]), *o);
  if (const auto& s = from.subnormals) {
    ScalarProfile::Subnormals& t = engaged(into.subnormals);
    take(t.flush_input, s->flush_input);
    take(t.flush_output, s->flush_output);
    take(t.flush_transfer, s->flush_transfer);
  }
  if (const auto& n = from.nan) {
    ScalarProfile::Nan& t = engaged(into.nan);
    take(t.canonical, n->canonical);
    take(t.quiet_on_transfer, n->quiet_on_transfer);
    take(t.quiet, n->quiet);
    take(t.sub_flips, n->sub_flips);
    take(t.propagation, n->propagation);
    take(t.default_nan, n->default_nan);
    take(t.fma_order, n->fma_order);
  }
  if (from.registers) into.registers = from.registers;
  take(into.validation, from.validation);
}

ScalarProfile profile_of(const model::ScalarUnit& u) {
  ScalarProfile p;
  const auto adder = [](const model::AdderParams& a) {
    ScalarProfile::Operation o;
    o.rounding = a.rounding;
    o.guard_bits = a.guard_bits;
    o.sticky = a.sticky;
    return o;
  };
  p.op(UnitOp::add) = adder(u.add);
  if (u.add_cascaded) p.op(UnitOp::add_cascaded) = adder(*u.add_cascaded);
  ScalarProfile::Operation& mul = p.stated(UnitOp::mul);
  mul.rounding = u.mul.rounding;
  mul.truncated_columns = u.mul.truncated_columns;
  mul.correction = u.mul.correction;
  p.stated(UnitOp::fma).fused = u.fma_fused;
  if (u.fma_zero_addend != model::ZeroAddend::ieee) p.stated(UnitOp::fma).zero_addend = u.fma_zero_addend;
  p.stated(UnitOp::mad).fused = u.mad_fused;
  ScalarProfile::Operation& div = p.stated(UnitOp::div);
  div.method = u.div.method;
  div.rounding = u.div.rounding;
  // An approximate operation's bound (model/scalar_unit.hpp), only where it has one.
  if (u.div.method == model::DivMethod::approximate) div.max_ulps = u.div.max_error;
  p.stated(UnitOp::sqrt).rounding = u.sqrt;
  p.stated(UnitOp::sqrt).max_ulps = u.sqrt_max_error;
  p.stated(UnitOp::cvt).rounding = u.convert;
  p.subnormals = {u.subnormals.flush_input, u.subnormals.flush_output, u.subnormals.flush_transfer};
  // The NaN keys beyond the first two only where they differ from the IEEE unit's.
  const model::NanPolicy ieee;
  ScalarProfile::Nan& nan = p.nan.emplace();
  nan.canonical = u.nan.canonical;
  nan.quiet_on_transfer = u.nan.quiet_on_transfer;
  if (u.nan.propagation != ieee.propagation) nan.propagation = u.nan.propagation;
  if (u.nan.quiet != ieee.quiet) nan.quiet = u.nan.quiet;
  if (u.nan.sub_flips != ieee.sub_flips) nan.sub_flips = u.nan.sub_flips;
  if (u.nan.default_nan != ieee.default_nan) nan.default_nan = u.nan.default_nan;
  nan.fma_order = u.nan.fma_order;
  if (u.storage && u.storage != u.format) p.registers = u.format;
  for (std::size_t i = 0; i < model::kFlushOps; ++i)
    if (const auto& of = u.op_flush[i]) {
      ScalarProfile::Operation& o = p.stated(kFlushUnitOps[i]);
      o.flush_input = of->flush_input;
      o.flush_output = of->flush_output;
    }
  return p;
}

Expected<model::ScalarUnit> unit_of(const model::Format& f, const ScalarProfile& p, const std::string& where) {
  const auto at = [&](std::string_view key) {
    return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
  };
  model::ScalarUnit u = model::ieee_unit(f);
  u.name = "";
  if (const auto& o = p.op(UnitOp::add)) apply_adder(*o, u.add);
  if (const auto& o = p.op(UnitOp::add_cascaded)) {
    // The first of two dependent additions, where it runs on an adder of its own; unset: `add`.
    u.add_cascaded = u.add;
    apply_adder(*o, *u.add_cascaded);
  }
  // `sub`: one adder does both; what the rounding probe saw of subtraction is informational.
  if (const auto& o = p.op(UnitOp::mul)) {
    if (o->rounding) u.mul.rounding = *o->rounding;
    if (o->truncated_columns) u.mul.truncated_columns = *o->truncated_columns;
    if (o->correction) u.mul.correction = *o->correction;
  }
  // An fma's or a MAD's "rounding" is what the rounding probe saw; a unit's fused rounding is its adder's.
  if (const auto& o = p.op(UnitOp::fma)) {
    if (o->fused) u.fma_fused = *o->fused;
    if (o->zero_addend) u.fma_zero_addend = *o->zero_addend;
  }
  if (const auto& o = p.op(UnitOp::mad); o && o->fused) u.mad_fused = *o->fused;
  if (const auto& o = p.op(UnitOp::div)) {
    if (o->rounding) u.div.rounding = *o->rounding;
    if (o->method) u.div.method = *o->method;
    if (o->max_ulps.has_value() != (u.div.method == model::DivMethod::approximate))
      return Error{fmt::format("{}: max_ulps goes with the method \"approximate\", and only there", at("div")),
                   ErrorKind::invalid, "div"};
    if (o->max_ulps) u.div.max_error = *o->max_ulps;
  }
  if (const auto& o = p.op(UnitOp::sqrt)) {
    if (o->rounding) u.sqrt = *o->rounding;
    if (o->max_ulps) u.sqrt_max_error = *o->max_ulps;
  }
  if (const auto& o = p.op(UnitOp::cvt); o && o->rounding) u.convert = *o->rounding;
  if (const auto& s = p.subnormals) {
    u.subnormals.flush_input = s->flush_input.value_or(u.subnormals.flush_input);
    u.subnormals.flush_output = s->flush_output.value_or(u.subnormals.flush_output);
    u.subnormals.flush_transfer = s->flush_transfer.value_or(u.subnormals.flush_transfer);
  }
  // Per-operation flushing, where an operation differs from the unit's; a key left out is the unit's.
  for (std::size_t i = 0; i < model::kFlushOps; ++i) {
    const auto& o = p.op(kFlushUnitOps[i]);
    if (!o || (!o->flush_input && !o->flush_output)) continue;
    const model::OpFlush of{o->flush_input.value_or(u.subnormals.flush_input),
                            o->flush_output.value_or(u.subnormals.flush_output)};
    if (of != model::flushing(u, model::FlushOp(i))) u.op_flush[i] = of;
  }
  if (const auto& n = p.nan) {
    u.nan.canonical = n->canonical.value_or(u.nan.canonical);
    u.nan.quiet_on_transfer = n->quiet_on_transfer.value_or(u.nan.quiet_on_transfer);
    u.nan.quiet = n->quiet.value_or(u.nan.quiet);
    u.nan.sub_flips = n->sub_flips.value_or(u.nan.sub_flips);
    u.nan.propagation = n->propagation.value_or(u.nan.propagation);
    u.nan.default_nan = n->default_nan.value_or(u.nan.default_nan);
    if (n->fma_order) u.nan.fma_order = n->fma_order;
  }
  if (p.registers) {
    u.storage = &f;
    u.format = p.registers;
  }
  if (const std::string why = model::check(u); !why.empty())
    return Error{where.empty() ? why : fmt::format("{}: {}", where, why), ErrorKind::invalid};
  return u;
}

json to_json(const ScalarProfile& p) {
  json j = json::object();
  for (std::size_t i = 0; i < kUnitOps; ++i)
    if (const auto& o = p.ops[i]) j[std::string(kUnitOperationKeys[i].key)] = operation_json(*o);
  if (const auto& s = p.subnormals) {
    json& js = j["subnormals"] = json::object();
    if (s->flush_input) js["input"] = flush_name(*s->flush_input);
    if (s->flush_output) js["output"] = flush_name(*s->flush_output);
    if (s->flush_transfer) js["transfer"] = flush_name(*s->flush_transfer);
  }
  if (const auto& n = p.nan) {
    json& jn = j["nan"] = json::object();
    if (n->canonical) jn["canonical"] = *n->canonical;
    if (n->quiet_on_transfer) jn["quiet_on_transfer"] = *n->quiet_on_transfer;
    if (n->propagation) jn["propagation"] = model::name(*n->propagation);
    if (n->quiet) jn["quiet"] = *n->quiet;
    if (n->sub_flips) jn["sub_flips"] = *n->sub_flips;
    if (n->default_nan) jn["default"] = model::name(*n->default_nan);
    if (n->fma_order) jn["fma_order"] = model::name(*n->fma_order);
  }
  if (p.registers) j["registers"] = p.registers->name;
  if (const auto& v = p.validation) {
    j["validation"] = {{"cases", v->cases}, {"mismatches", v->mismatches}};
    if (!v->not_validated.empty()) j["validation"]["not_validated"] = v->not_validated;
  }
  return j;
}

Expected<ScalarProfile> read_scalar_profile(const json& j, const std::string& where) {
  ScalarProfile p;
  const Reader top(j, where);
  GP_TRY(top.check_object());
  std::vector<std::string_view> keys;
  for (const UnitOperationKey& op : kUnitOperationKeys) keys.push_back(op.key);
  keys.insert(keys.end(), {"subnormals", "nan", "registers", "validation"});
  GP_TRY(top.only(keys));
  for (std::size_t i = 0; i < kUnitOps; ++i) {
    const UnitOp op = UnitOp(i);
    if (const json* v = top.find(key_of(op))) GP_TRY(read_operation(top.child(*v, key_of(op)), op, p.stated(op)));
  }
  if (const json* v = top.find("subnormals")) {
    const Reader r = top.child(*v, "subnormals");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"input", "output", "transfer"}));
    ScalarProfile::Subnormals& s = p.subnormals.emplace();
    GP_TRY(r.flush("input", s.flush_input));
    GP_TRY(r.flush("output", s.flush_output));
    GP_TRY(r.flush("transfer", s.flush_transfer));
  }
  if (const json* v = top.find("nan")) {
    const Reader r = top.child(*v, "nan");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"canonical", "quiet_on_transfer", "propagation", "quiet", "sub_flips", "default", "fma_order"}));
    ScalarProfile::Nan& n = p.nan.emplace();
    GP_TRY(r.boolean("canonical", n.canonical));
    GP_TRY(r.boolean("quiet_on_transfer", n.quiet_on_transfer));
    GP_TRY(r.boolean("quiet", n.quiet));
    GP_TRY(r.boolean("sub_flips", n.sub_flips));
    GP_TRY(r.named("propagation", model::find_nan_propagation, "\"first\", \"last\" or \"larger_payload\"",
                   n.propagation));
    GP_TRY(r.named("default", model::find_default_nan,
                   "\"quiet\", \"negative_quiet\", \"all_ones\" or \"negative_all_ones\"", n.default_nan));
    GP_TRY(r.named("fma_order", model::find_fma_nan_order,
                   "a permutation of a, b, c (\"abc\", \"acb\", \"bac\", \"bca\", \"cab\" or \"cba\")", n.fma_order));
  }
  if (const json* v = top.find("registers")) {
    const auto rf = v->is_string() ? model::find_format(v->get<std::string>()) : std::nullopt;
    if (!rf) return top.child(*v, "registers").fail(fmt::format("{}: must be a format name", top.at("registers")));
    p.registers = *rf;
  }
  if (const json* v = top.find("validation")) p.validation = read_validation(*v);
  return p;
}

json unit_to_json(const model::ScalarUnit& u) { return to_json(profile_of(u)); }

Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const json& j, const std::string& where) {
  auto p = read_scalar_profile(j, where);
  if (!p) return p.error();
  return unit_of(f, *p, where);
}

}  // namespace gp::backends

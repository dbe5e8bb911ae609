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
  Expected<bool> boolean(const char* key, bool& out) const {
    if (const json* v = find(key)) {
      if (!v->is_boolean()) return fail(fmt::format("{}: must be true or false", at(key)));
      out = v->get<bool>();
    }
    return true;
  }
  Expected<bool> rounding(const char* key, model::UnitRounding& out) const {
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
  Expected<bool> optional_int(const char* key, std::optional<int>& out) const {
    if (const json* v = find(key)) {
      if (v->is_null()) {
        out.reset();
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
  Expected<bool> named(const char* key, Lookup lookup, std::string_view names, T& out) const {
    if (const json* v = find(key)) {
      const std::optional<T> x = v->is_string() ? lookup(v->get<std::string>()) : std::nullopt;
      if (!x) return fail(fmt::format("{}: must be {}, not {}", at(key), names, v->dump()));
      out = *x;
    }
    return true;
  }
  Expected<bool> flush(const char* key, bool& out) const {
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

}  // namespace

json adder_json(const model::AdderParams& a) {
  return {{"rounding", rounding_json(a.rounding)},
          {"guard_bits", a.guard_bits ? json(*a.guard_bits) : json(nullptr)},
          {"sticky", a.sticky}};
}

namespace {

Expected<bool> read_adder(const Reader& r, model::AdderParams& a) {
  GP_TRY(r.check_object());
  GP_TRY(r.only({"rounding", "guard_bits", "sticky", "subnormals"}));
  GP_TRY(r.rounding("rounding", a.rounding));
  GP_TRY(r.optional_int("guard_bits", a.guard_bits));
  GP_TRY(r.boolean("sticky", a.sticky));
  return true;
}

}  // namespace

json unit_to_json(const model::ScalarUnit& u) {
  json j = {{"add", adder_json(u.add)},
            {"mul",
             {{"rounding", rounding_json(u.mul.rounding)},
              {"truncated_columns", u.mul.truncated_columns ? json(*u.mul.truncated_columns) : json(nullptr)},
              {"correction", u.mul.correction}}},
            {"fma", {{"fused", u.fma_fused}}},
            {"mad", {{"fused", u.mad_fused}}},
            {"div", {{"method", model::name(u.div.method)}, {"rounding", rounding_json(u.div.rounding)}}},
            {"sqrt", {{"rounding", rounding_json(u.sqrt)}}},
            {"cvt", {{"rounding", rounding_json(u.convert)}}},
            {"subnormals",
             {{"input", flush_name(u.subnormals.flush_input)},
              {"output", flush_name(u.subnormals.flush_output)},
              {"transfer", flush_name(u.subnormals.flush_transfer)}}},
            {"nan", {{"canonical", u.nan.canonical}, {"quiet_on_transfer", u.nan.quiet_on_transfer}}}};
  // An approximate operation's bound (model/scalar_unit.hpp), only where it has one.
  if (u.div.method == model::DivMethod::approximate) j["div"]["max_ulps"] = model::ulps(u.div.max_error);
  if (u.sqrt_max_error) j["sqrt"]["max_ulps"] = model::ulps(*u.sqrt_max_error);
  // The NaN keys beyond those two only where they differ from the IEEE unit's.
  const model::NanPolicy ieee_nan;
  json& nan = j["nan"];
  if (u.nan.propagation != ieee_nan.propagation) nan["propagation"] = model::name(u.nan.propagation);
  if (u.nan.quiet != ieee_nan.quiet) nan["quiet"] = u.nan.quiet;
  if (u.nan.sub_flips != ieee_nan.sub_flips) nan["sub_flips"] = u.nan.sub_flips;
  if (u.nan.default_nan != ieee_nan.default_nan) nan["default"] = model::name(u.nan.default_nan);
  if (u.nan.fma_order) nan["fma_order"] = model::name(*u.nan.fma_order);
  if (u.storage && u.storage != u.format) j["registers"] = u.format->name;
  if (u.add_cascaded) j["add_cascaded"] = adder_json(*u.add_cascaded);
  if (u.fma_zero_addend != model::ZeroAddend::ieee) j["fma"]["zero_addend"] = model::name(u.fma_zero_addend);
  for (std::size_t i = 0; i < model::kFlushOps; ++i)
    if (const auto& of = u.op_flush[i])
      j[std::string(model::flush_op_names[i])]["subnormals"] = {{"input", flush_name(of->flush_input)},
                                                                {"output", flush_name(of->flush_output)}};
  return j;
}

Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const json& j, const std::string& where) {
  model::ScalarUnit u = model::ieee_unit(f);
  u.name = "";
  const Reader top(j, where);
  GP_TRY(top.check_object());
  std::vector<std::string_view> keys;
  for (const UnitOperationKey& op : kUnitOperationKeys) keys.push_back(op.key);
  keys.insert(keys.end(), {"subnormals", "nan", "registers", "validation"});
  GP_TRY(top.only(keys));
  if (const json* v = top.find("add")) GP_TRY(read_adder(top.child(*v, "add"), u.add));
  if (const json* v = top.find("add_cascaded")) {
    // The first of two dependent additions, where it runs on an adder of its own; unset: `add`.
    u.add_cascaded = u.add;
    GP_TRY(read_adder(top.child(*v, "add_cascaded"), *u.add_cascaded));
  }
  if (const json* v = top.find("sub")) {
    // One adder does both; what the rounding probe saw of subtraction is informational.
    const Reader r = top.child(*v, "sub");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"rounding"}));
  }
  if (const json* v = top.find("mul")) {
    const Reader r = top.child(*v, "mul");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"rounding", "truncated_columns", "correction", "subnormals"}));
    GP_TRY(r.rounding("rounding", u.mul.rounding));
    GP_TRY(r.optional_int("truncated_columns", u.mul.truncated_columns));
    if (const json* c = r.find("correction")) {
      if (c->is_null()) {
        u.mul.correction = 0;
      } else if (c->is_number_unsigned()) {
        u.mul.correction = c->get<std::uint64_t>();
      } else {
        return r.fail(fmt::format("{}: must be a non-negative integer", r.at("correction")));
      }
    }
  }
  for (const char* key : {"fma", "mad"}) {
    if (const json* v = top.find(key)) {
      const Reader r = top.child(*v, key);
      GP_TRY(r.check_object());
      // "rounding" is what the rounding probe saw; a unit's fused rounding is its adder's.
      const bool fma = std::string_view(key) == "fma";
      GP_TRY(fma ? r.only({"fused", "rounding", "subnormals", "zero_addend"})
                 : r.only({"fused", "rounding", "subnormals"}));
      GP_TRY(r.boolean("fused", fma ? u.fma_fused : u.mad_fused));
      if (const json* z = fma ? r.find("zero_addend") : nullptr) {
        const auto za = z->is_string() ? model::find_zero_addend(z->get<std::string>()) : std::nullopt;
        if (!za) return r.fail(fmt::format("{}: must be \"ieee\" or \"product\"", r.at("zero_addend")));
        u.fma_zero_addend = *za;
      }
    }
  }
  if (const json* v = top.find("div")) {
    const Reader r = top.child(*v, "div");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"method", "rounding", "max_ulps", "subnormals"}));
    GP_TRY(r.rounding("rounding", u.div.rounding));
    if (const json* m = r.find("method")) {
      const auto method = m->is_string() ? model::find_div_method(m->get<std::string>()) : std::nullopt;
      if (!method)
        return r.fail(
            fmt::format("{}: must be \"correctly_rounded\", \"reciprocal\" or \"approximate\"", r.at("method")));
      u.div.method = *method;
    }
    std::optional<model::UlpBound> bound;
    GP_TRY(r.ulp_bound(bound));
    if (bound.has_value() != (u.div.method == model::DivMethod::approximate))
      return r.fail(fmt::format("{}: max_ulps goes with the method \"approximate\", and only there", top.at("div")));
    if (bound) u.div.max_error = *bound;
  }
  for (const char* key : {"sqrt", "cvt"}) {
    if (const json* v = top.find(key)) {
      const Reader r = top.child(*v, key);
      const bool is_sqrt = std::string_view(key) == "sqrt";
      GP_TRY(r.check_object());
      GP_TRY(is_sqrt ? r.only({"rounding", "max_ulps", "subnormals"}) : r.only({"rounding", "subnormals"}));
      GP_TRY(r.rounding("rounding", is_sqrt ? u.sqrt : u.convert));
      if (is_sqrt) GP_TRY(r.ulp_bound(u.sqrt_max_error));
    }
  }
  if (const json* v = top.find("subnormals")) {
    const Reader r = top.child(*v, "subnormals");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"input", "output", "transfer"}));
    GP_TRY(r.flush("input", u.subnormals.flush_input));
    GP_TRY(r.flush("output", u.subnormals.flush_output));
    GP_TRY(r.flush("transfer", u.subnormals.flush_transfer));
  }
  // Per-operation flushing, where an operation differs from the unit's: "fma": {"subnormals":
  // {"input": "flush", "output": "preserve"}}; a key left out is the unit's.
  for (std::size_t i = 0; i < model::kFlushOps; ++i) {
    const std::string op(model::flush_op_names[i]);
    const json* v = top.find(op.c_str());
    const json* sv = v && v->is_object() && v->contains("subnormals") ? &(*v)["subnormals"] : nullptr;
    if (!sv) continue;
    const Reader r = top.child(*v, op.c_str()).child(*sv, "subnormals");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"input", "output"}));
    model::OpFlush of{u.subnormals.flush_input, u.subnormals.flush_output};
    GP_TRY(r.flush("input", of.flush_input));
    GP_TRY(r.flush("output", of.flush_output));
    if (of != model::flushing(u, model::FlushOp(i))) u.op_flush[i] = of;
  }
  if (const json* v = top.find("nan")) {
    const Reader r = top.child(*v, "nan");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"canonical", "quiet_on_transfer", "propagation", "quiet", "sub_flips", "default", "fma_order"}));
    GP_TRY(r.boolean("canonical", u.nan.canonical));
    GP_TRY(r.boolean("quiet_on_transfer", u.nan.quiet_on_transfer));
    GP_TRY(r.boolean("quiet", u.nan.quiet));
    GP_TRY(r.boolean("sub_flips", u.nan.sub_flips));
    GP_TRY(r.named("propagation", model::find_nan_propagation, "\"first\", \"last\" or \"larger_payload\"",
                   u.nan.propagation));
    GP_TRY(r.named("default", model::find_default_nan,
                   "\"quiet\", \"negative_quiet\", \"all_ones\" or \"negative_all_ones\"", u.nan.default_nan));
    if (r.find("fma_order")) {
      model::FmaNanOrder order{};
      GP_TRY(r.named("fma_order", model::find_fma_nan_order,
                     "a permutation of a, b, c (\"abc\", \"acb\", \"bac\", \"bca\", \"cab\" or \"cba\")", order));
      u.nan.fma_order = order;
    }
  }
  if (const json* v = top.find("registers")) {
    const auto rf = v->is_string() ? model::find_format(v->get<std::string>()) : std::nullopt;
    if (!rf) return top.child(*v, "registers").fail(fmt::format("{}: must be a format name", top.at("registers")));
    u.storage = &f;
    u.format = *rf;
  }
  if (const std::string why = model::check(u); !why.empty()) return top.fail_here(why);
  return u;
}

}  // namespace gp::backends

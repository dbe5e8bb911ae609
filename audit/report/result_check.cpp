#include "audit/report/result_check.hpp"

#include <string>
#include <vector>

#include "input/json_input.hpp"

namespace gp::audit {

using nlohmann::json;

namespace {

enum class Kind { any, string, number, count, count_or_null, boolean, object, array };

// The expected shape of a value: its kind and, for objects, the known keys (a key "*" stands for
// every key) or, for arrays, the shape of each element.
struct Shape {
  struct Key;
  Kind kind = Kind::any;
  std::vector<Key> keys;
  std::vector<Shape> element;  // arrays: one shape, or none
  bool required = false;
};
struct Shape::Key {
  std::string name;
  Shape shape;
};

Shape of(Kind k) { return {k, {}, {}, false}; }
Shape object(std::vector<Shape::Key> keys) { return {Kind::object, std::move(keys), {}, false}; }
Shape array(Shape element) { return {Kind::array, {}, {std::move(element)}, false}; }
Shape required(Shape s) {
  s.required = true;
  return s;
}

const char* described(Kind k) {
  switch (k) {
    case Kind::any: return "any value";
    case Kind::string: return "a string";
    case Kind::number: return "a number";
    case Kind::count: return "a non-negative integer";
    case Kind::count_or_null: return "null or a non-negative integer";
    case Kind::boolean: return "true or false";
    case Kind::object: return "an object";
    case Kind::array: return "an array";
  }
  return "";
}

bool fits(const json& v, Kind k) {
  switch (k) {
    case Kind::any: return true;
    case Kind::string: return v.is_string();
    case Kind::number: return v.is_number();
    case Kind::count: return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
    case Kind::count_or_null: return v.is_null() || fits(v, Kind::count);
    case Kind::boolean: return v.is_boolean();
    case Kind::object: return v.is_object();
    case Kind::array: return v.is_array();
  }
  return false;
}

// Section 7's keys with the types the readers rely on.
const Shape& result_shape() {
  static const Shape rounding = object({{"rounding", of(Kind::string)}});
  static const Shape bounded = object({{"rounding", of(Kind::string)}, {"max_ulps", of(Kind::number)}});
  static const Shape unit = object({
      {"add",
       object(
           {{"rounding", of(Kind::string)}, {"guard_bits", of(Kind::count_or_null)}, {"sticky", of(Kind::boolean)}})},
      {"sub", rounding},
      {"mul", object({{"rounding", of(Kind::string)},
                      {"truncated_columns", of(Kind::count_or_null)},
                      {"correction", of(Kind::count_or_null)}})},
      {"div", object({{"method", of(Kind::string)}, {"rounding", of(Kind::string)}, {"max_ulps", of(Kind::number)}})},
      {"sqrt", bounded},
      {"cvt", rounding},
      {"fma", object({{"fused", of(Kind::boolean)}, {"rounding", of(Kind::string)}})},
      {"mad", object({{"fused", of(Kind::boolean)}, {"rounding", of(Kind::string)}})},
      {"subnormals",
       object({{"input", of(Kind::string)}, {"output", of(Kind::string)}, {"transfer", of(Kind::string)}})},
      {"nan", object({{"canonical", of(Kind::boolean)},
                      {"quiet_on_transfer", of(Kind::boolean)},
                      {"propagation", of(Kind::string)},
                      {"quiet", of(Kind::boolean)},
                      {"sub_flips", of(Kind::boolean)},
                      {"default", of(Kind::string)},
                      {"fma_order", of(Kind::string)}})},
      {"registers", of(Kind::string)},
      {"validation", object({{"cases", of(Kind::count)}, {"mismatches", of(Kind::count)}})},
  });
  static const Shape finding = object({
      {"probe", of(Kind::string)},
      {"format", of(Kind::string)},
      {"config", of(Kind::string)},
      {"title", of(Kind::string)},
      {"source", of(Kind::string)},
      {"status", of(Kind::string)},
      {"verdict", of(Kind::string)},
      {"message", of(Kind::string)},
      {"published", of(Kind::string)},
      {"parameters", of(Kind::object)},
      {"duration_s", of(Kind::number)},
      {"observations", of(Kind::array)},
  });
  static const Shape mma = object({
      {"config", of(Kind::string)},
      {"algorithm", of(Kind::string)},
      {"parameters", of(Kind::object)},
      {"validation", object({{"tiles", of(Kind::count)}, {"mismatches", of(Kind::count)}})},
  });
  static const Shape doc = object({
      {"schema", of(Kind::string)},
      {"tool", object({{"version", of(Kind::string)}})},
      {"started", of(Kind::string)},
      {"duration_s", of(Kind::number)},
      {"device", object({{"id", of(Kind::string)},
                         {"backend", of(Kind::string)},
                         {"name", of(Kind::string)},
                         {"driver", of(Kind::string)},
                         {"api", of(Kind::string)},
                         {"vendor", of(Kind::string)},
                         {"description", of(Kind::string)},
                         {"capabilities", of(Kind::object)},
                         {"code", of(Kind::string)}})},
      {"findings", required(array(finding))},
      {"profile", object({{"scalar", object({{"*", unit}})}, {"mma", array(mma)}})},
  });
  return doc;
}

// The shape is finite: the walk goes no deeper than it, whatever the document.
std::optional<input::InputError> check(const json& v, const Shape& s, const std::string& path) {
  const auto wrong = [&](std::string what) { return input::InputError{"", 0, path, std::move(what)}; };
  if (!fits(v, s.kind)) return wrong(std::string("must be ") + described(s.kind));
  if (s.kind == Kind::object) {
    for (const Shape::Key& k : s.keys) {
      if (k.name == "*") {
        for (const auto& [name, x] : v.items())
          if (auto e = check(x, k.shape, (path.empty() ? "" : path + ".") + input::key_text(name))) return e;
        continue;
      }
      const std::string at = path.empty() ? k.name : path + "." + k.name;
      const auto it = v.find(k.name);
      if (it == v.end()) {
        if (k.shape.required) return input::InputError{"", 0, at, "missing"};
        continue;
      }
      if (auto e = check(*it, k.shape, at)) return e;
    }
  }
  if (s.kind == Kind::array && !s.element.empty()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (auto e = check(v[i], s.element.front(), path + "[" + std::to_string(i) + "]")) return e;
  }
  return std::nullopt;
}

}  // namespace

std::optional<input::InputError> check_result(const json& doc) {
  if (!doc.is_object())
    return input::InputError{"", 0, "", "not a gpuparanoia result (a JSON object with \"findings\")"};
  return check(doc, result_shape(), "");
}

std::optional<json> read_result(const std::string& path, input::InputError& err) {
  auto doc = input::read_json_file(path, err);
  if (!doc) return std::nullopt;
  if (auto bad = check_result(*doc)) {
    err = *bad;
    err.source = path;
    return std::nullopt;
  }
  return doc;
}

}  // namespace gp::audit

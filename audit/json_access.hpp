// Checked reads of a JSON document of any shape (a result read from a file): a missing key or a
// value of another type gives the fallback, never an exception or an out-of-bounds read (the
// const operator[] of nlohmann::json on a missing key is undefined behaviour).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "input/input_error.hpp"

namespace gp::audit {

inline const nlohmann::json& null_json() {
  static const nlohmann::json null;
  return null;
}

inline const nlohmann::json& empty_object() {
  static const nlohmann::json empty = nlohmann::json::object();
  return empty;
}

// j[key] when j is an object that has it, else `otherwise` (which must outlive the result: a
// temporary would dangle).
inline const nlohmann::json& member(const nlohmann::json& j, std::string_view key,
                                    const nlohmann::json& otherwise = null_json()) {
  if (!j.is_object()) return otherwise;
  const auto it = j.find(key);
  return it != j.end() ? *it : otherwise;
}

// j[key] when it is a string, else `otherwise`; as a report shows it (input::escaped: a document
// from elsewhere may hold newlines or terminal escape sequences).
inline std::string string_member(const nlohmann::json& j, std::string_view key, std::string otherwise = "") {
  const nlohmann::json& v = member(j, key);
  return v.is_string() ? input::escaped(v.get_ref<const std::string&>(), false) : otherwise;
}

// j[key] when it is an integer, else `otherwise`.
inline std::int64_t integer_member(const nlohmann::json& j, std::string_view key, std::int64_t otherwise = 0) {
  const nlohmann::json& v = member(j, key);
  return v.is_number_integer() ? v.get<std::int64_t>() : otherwise;
}

// j[key] when it is a number, else `otherwise`.
inline double number_member(const nlohmann::json& j, std::string_view key, double otherwise = 0) {
  const nlohmann::json& v = member(j, key);
  return v.is_number() ? v.get<double>() : otherwise;
}

// A value as JSON text; strings that are not UTF-8 (a document built in memory) are not an error.
inline std::string dump(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gp::audit

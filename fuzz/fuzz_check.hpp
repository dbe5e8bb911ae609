// What every fuzz target asserts beyond "no crash": a rejection is one line that names where.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "input/json_input.hpp"

namespace gp::fuzz {

// Stops the fuzzer with the reason (libFuzzer then saves the input as a crash).
inline void require(bool ok, std::string_view what, std::string_view detail = {}) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n%.*s\n", int(what.size()), what.data(), int(detail.size()),
               detail.data());
  std::abort();
}

// One error line of the program: "gpuparanoia: <where>: <what>\n", no other newline.
inline void require_one_line(std::string_view err, std::string_view where) {
  require(err.starts_with("gpuparanoia: ") && err.substr(13).starts_with(where), "error names its input", err);
  require(err.find('\n') == err.size() - 1, "error is one line", err);
}

// The fuzzer's bytes as a JSON document named fuzz.json, or nothing after checking that the
// rejection is one line naming it.
inline std::optional<nlohmann::json> json_or_one_line(const std::uint8_t* data, std::size_t size) {
  input::InputError err;
  auto doc = input::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", err);
  if (!doc) require_one_line("gpuparanoia: " + err.text() + "\n", "fuzz.json");
  return doc;
}

}  // namespace gp::fuzz

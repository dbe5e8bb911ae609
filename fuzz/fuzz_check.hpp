// What every fuzz target asserts beyond "no crash": a rejection is one line that names where.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "input/json_input.hpp"

namespace gp::fuzz {

// Stops the fuzzer with the reason (libFuzzer then saves the input as a crash).
inline void require(bool ok, std::string_view what, std::string_view detail = {}) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n%s\n", std::string(what).c_str(), std::string(detail).c_str());
  std::abort();
}

// What a command printed on an error: one line naming where, holding no control character but
// its newline (a key holding a newline or an escape sequence is echoed escaped).
inline void require_printed_line(std::string_view err, std::string_view where) {
  require(err.starts_with("gpuparanoia: ") && err.substr(13).starts_with(where), "error names its input", err);
  require(err.find('\n') == err.size() - 1, "error is one line", err);
  require(std::none_of(err.begin(), err.end() - 1, [](char c) { return (c >= 0 && c < ' ') || c == 0x7f; }),
          "error holds no control character", err);
}

// A reader's error message as every command prints it (input::error_line).
inline void require_one_line(std::string_view message, std::string_view where) {
  require_printed_line(input::error_line(message), where);
}

// The fuzzer's bytes as a JSON document named fuzz.json, or nothing after checking that the
// rejection is one line naming it.
inline std::optional<nlohmann::json> json_or_one_line(const std::uint8_t* data, std::size_t size) {
  input::InputError err;
  auto doc = input::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", err);
  if (!doc) require_one_line(err.text(), "fuzz.json");
  return doc;
}

}  // namespace gp::fuzz

// One error of a reader of outside input, rendered as one line: "<source>:<line>: <field>: <what>"
// (the line where the reader knows it; the field is a JSON key path such as
// scalar.binary32.add.guard_bits, or "field 3" of a batch line).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace gp::input {

// The name standard input has in messages.
inline constexpr const char* kStdinName = "<stdin>";

struct InputError {
  std::string source;  // file name, or kStdinName
  long line = 0;       // 1-based; 0 when not known
  std::string field;   // empty when the error is about the whole input
  std::string what;

  std::string text() const {
    std::string s = source;
    if (line > 0) s += ":" + std::to_string(line);
    if (!field.empty()) s += (s.empty() ? "" : ": ") + field;
    return s + (s.empty() ? "" : ": ") + what;
  }
};

// A piece of the input as a message shows it: quoted when short and printable, a lone byte in hex,
// else "text" (a message is one line, whatever the input holds).
inline std::string quoted(std::string_view s) {
  const bool printable = std::all_of(s.begin(), s.end(), [](char c) { return c >= ' ' && c <= '~'; });
  if (printable && s.size() <= 80) return "'" + std::string(s) + "'";
  if (s.size() != 1) return "text";
  static constexpr char hex[] = "0123456789abcdef";
  const auto b = static_cast<unsigned char>(s[0]);
  return std::string("byte 0x") + hex[b >> 4] + hex[b & 15];
}

// A key of the input in a key path: as it is when short and printable, else as quoted() shows it.
inline std::string key_text(std::string_view key) {
  const std::string q = quoted(key);
  return q.front() == '\'' ? std::string(key) : "<" + q + ">";
}

}  // namespace gp::input

// One error of a reader of outside input, rendered as one line: "<source>:<line>: <field>: <what>"
// (the line where the reader knows it; the field is a JSON key path such as
// scalar.binary32.add.guard_bits, or "field 3" of a batch line).
#pragma once

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

// `s` as one line of a terminal: each control character (C0, DEL, C1) written as \n, \t, \r, \xNN or
// \uNNNN, each byte of an invalid UTF-8 sequence as \xNN, and with `backslash` a backslash as \\ (so
// that a piece of the input reads back unambiguously). A key or value of the input echoed raw could
// break the one-line error contract or send escape sequences to the user's terminal.
std::string escaped(std::string_view s, bool backslash = true);

// A message of the program as it is printed: "gpuparanoia: <message>\n", the message escaped
// (without doubling backslashes, which a quoted piece already escaped) so that it is one line.
std::string error_line(std::string_view message);

// A piece of the input as a message shows it: quoted when short (escaped where not printable), a
// lone byte in hex, else "text" (a message is one line, whatever the input holds).
std::string quoted(std::string_view s);

// A key of the input in a key path: as it is when short and printable, escaped when short, else
// "<text>".
std::string key_text(std::string_view key);

}  // namespace gp::input

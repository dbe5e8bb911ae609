#include "input/input_error.hpp"

#include <algorithm>

namespace gp::input {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void hex_byte(std::string& out, const char* prefix, unsigned b) {
  out += prefix;
  out += kHex[(b >> 4) & 15];
  out += kHex[b & 15];
}

bool printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= ' ' && c <= '~'; });
}

// The length of the valid UTF-8 sequence of 2 to 4 bytes at s[i], or 0 (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t j) { return j < s.size() ? static_cast<unsigned char>(s[j]) : 0u; };
  const unsigned b = at(i);
  const auto cont = [&](std::size_t j, unsigned lo = 0x80, unsigned hi = 0xbf) { return at(j) >= lo && at(j) <= hi; };
  if (b >= 0xc2 && b <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const unsigned lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const unsigned lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::string escaped(std::string_view s, bool backslash) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b >= 0x80) {
      const std::size_t n = utf8_length(s, i);
      if (n == 0) {
        hex_byte(out, "\\x", b);
      } else if (n == 2 && b == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {
        hex_byte(out, "\\u00", static_cast<unsigned char>(s[i + 1]));  // a C1 control, U+0080..U+009F
      } else {
        out.append(s.substr(i, n));
      }
      i += n == 0 ? 1 : n;
      continue;
    }
    if (b == '\n')
      out += "\\n";
    else if (b == '\t')
      out += "\\t";
    else if (b == '\r')
      out += "\\r";
    else if (b < 0x20 || b == 0x7f)
      hex_byte(out, "\\x", b);
    else if (b == '\\' && backslash)
      out += "\\\\";
    else
      out += char(b);
    ++i;
  }
  return out;
}

std::string error_line(std::string_view message) { return "gpuparanoia: " + escaped(message, false) + "\n"; }

std::string quoted(std::string_view s) {
  if (s.size() == 1 && !printable_ascii(s)) {
    std::string out = "byte ";
    hex_byte(out, "0x", static_cast<unsigned char>(s[0]));
    return out;
  }
  if (s.size() > 80) return "text";
  return "'" + escaped(s) + "'";
}

std::string key_text(std::string_view key) {
  if (printable_ascii(key) && key.size() <= 80) return std::string(key);
  return key.size() <= 80 ? escaped(key) : "<text>";
}

}  // namespace gp::input

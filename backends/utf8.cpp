#include "backends/utf8.hpp"

#include <fmt/format.h>

namespace gp::backends {

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (RFC 3629), or 0.
std::size_t sequence_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b = byte(0);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (b >= 0xc2 && b <= 0xdf)
    n = 2;
  else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    if (b == 0xe0) low = 0xa0;   // overlong
    if (b == 0xed) high = 0x9f;  // surrogates
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    if (b == 0xf0) low = 0x90;   // overlong
    if (b == 0xf4) high = 0x8f;  // past U+10FFFF
  } else
    return 0;
  if (s.size() < n || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  return n;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    if (const std::size_t n = sequence_length(s)) {
      out.append(s.substr(0, n));
      s.remove_prefix(n);
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s.front()));
      s.remove_prefix(1);
    }
  }
  return out;
}

}  // namespace gp::backends

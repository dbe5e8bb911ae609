#include "cli/batch.hpp"

#include <fmt/format.h>

namespace gp::cli {

namespace {
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
}  // namespace

bool parse_hex_line(std::string_view line, int line_no, std::span<const int> bits, std::size_t expected_fields,
                    std::vector<std::uint64_t>& out, ParseError& err) {
  out.clear();
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    const std::string_view field = line.substr(start, i - start);
    const std::size_t n = out.size() + 1;
    const int width = bits[std::min(out.size(), bits.size() - 1)];
    if (n > expected_fields) {
      err.message = fmt::format("line {}, field {}: expected {} field{}, found more", line_no, n, expected_fields,
                                expected_fields == 1 ? "" : "s");
      return false;
    }
    std::uint64_t v = 0;
    for (char c : field) {
      if (hex_digit(c) < 0) {
        err.message = fmt::format("line {}, field {}: '{}' is not a hex bit pattern", line_no, n, field);
        return false;
      }
    }
    const std::string_view digits = field.substr(std::min(field.find_first_not_of('0'), field.size()));
    for (char c : digits) v = (v << 4) | std::uint64_t(hex_digit(c));
    if (digits.size() > 16 || (width < 64 && (v >> width) != 0)) {
      err.message = fmt::format("line {}, field {}: '{}' does not fit in {} bits", line_no, n, field, width);
      return false;
    }
    out.push_back(v);
  }
  if (out.size() != expected_fields) {
    err.message = fmt::format("line {}: expected {} field{}, found {}", line_no, expected_fields,
                              expected_fields == 1 ? "" : "s", out.size());
    return false;
  }
  return true;
}

std::string format_hex(std::uint64_t value, int bits) { return fmt::format("{:0{}x}", value, (bits + 3) / 4); }

}  // namespace gp::cli

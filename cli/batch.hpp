// Batch lines of the command line (README, Command line): whitespace-separated raw bit patterns in
// hex without 0x, one case per line. Parse errors name the line and field at fault.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gp::cli {

struct ParseError {
  std::string message;  // "line 3, field 2: ..."
};

// Splits one line into hex fields of at most `bits` bits each (one width per field, or the last
// width repeated). Returns false and fills err when the line is malformed.
bool parse_hex_line(std::string_view line, int line_no, std::span<const int> bits, std::size_t expected_fields,
                    std::vector<std::uint64_t>& out, ParseError& err);

// Lower-case hex of the given storage width, zero padded (binary32 -> 8 digits).
std::string format_hex(std::uint64_t value, int bits);

}  // namespace gp::cli

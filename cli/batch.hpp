// Batch lines of the command line (README, Command line): whitespace-separated raw bit patterns in
// hex without 0x, one case per line. A field is 1 to the storage width's hex digits ((bits + 3) / 4:
// 8 for binary32, 6 for fp24, 2 for e2m1), upper or lower case, and its value fits the format: no bit
// set above its encoding (e2m1 takes 0 to f, e2m3 0 to 3f; tf32's 13 ignored low bits are its own).
// A line is at most input::kMaxLineBytes long. Errors name the line and field at fault.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "input/input_error.hpp"
#include "model/format.hpp"

namespace gp::cli {

enum class LineRead { line, end, too_long };
// The next line of `in` without its '\n' (a last line may lack it). A line longer than
// kMaxLineBytes is not read further: too_long.
LineRead read_line(std::istream& in, std::string& line);

// Whether standard input can be read as lines: a directory (`< dir`) reads as an empty batch, so it
// is an error (its one-line message), checked before the batch starts.
std::optional<std::string> stdin_unreadable();

// Splits one line into hex fields, each a bit pattern of its format (one format per field, or the
// last one repeated). Returns false and fills err's line, field and what when the line is malformed.
bool parse_hex_line(std::string_view line, long line_no, std::span<const model::Format* const> formats,
                    std::size_t expected_fields, std::vector<std::uint64_t>& out, input::InputError& err);

// Number of whitespace-separated fields of a line.
std::size_t count_fields(std::string_view line);

// The model's format names, space separated, for messages ("binary64 binary32 ...").
std::string format_names();

// Lower-case hex of the given storage width, zero padded (binary32 -> 8 digits).
std::string format_hex(std::uint64_t value, int bits);

}  // namespace gp::cli

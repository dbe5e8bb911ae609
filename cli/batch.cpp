#include "cli/batch.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "input/input_error.hpp"
#include "input/limits.hpp"

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

LineRead read_line(std::istream& in, std::string& line) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  bool any = false;
  for (int c = sb->sbumpc(); c != std::char_traits<char>::eof(); c = sb->sbumpc()) {
    if (c == '\n') return LineRead::line;
    if (line.size() == input::kMaxLineBytes) return LineRead::too_long;
    line.push_back(char(c));
    any = true;
  }
  in.setstate(std::ios::eofbit);
  return any ? LineRead::line : LineRead::end;
}

std::optional<std::string> stdin_unreadable() {
  struct stat st {};
  if (fstat(STDIN_FILENO, &st) == 0 && S_ISDIR(st.st_mode))
    return input::error_line(input::InputError{input::kStdinName, 0, "", "is a directory, not a file"}.text());
  return std::nullopt;
}

bool parse_hex_line(std::string_view line, long line_no, std::span<const model::Format* const> formats,
                    std::size_t expected_fields, std::vector<std::uint64_t>& out, input::InputError& err) {
  out.clear();
  err.line = line_no;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    const std::string_view field = line.substr(start, i - start);
    const std::size_t n = out.size() + 1;
    err.field = fmt::format("field {}", n);
    if (n > expected_fields) {
      err.what = fmt::format("expected {} field{}, found more", expected_fields, expected_fields == 1 ? "" : "s");
      return false;
    }
    if (!std::all_of(field.begin(), field.end(), [](char c) { return hex_digit(c) >= 0; })) {
      err.what = fmt::format("{} is not a hex bit pattern", input::quoted(field));
      return false;
    }
    const model::Format& f = *formats[std::min(out.size(), formats.size() - 1)];
    const std::size_t digits = std::size_t(f.storage_bits + 3) / 4;
    const int width = f.pad_bits + f.value_bits();  // the encoding, without the container's spare bits
    std::uint64_t v = 0;
    for (char c : field.substr(0, 16)) v = (v << 4) | std::uint64_t(hex_digit(c));
    if (field.size() > digits || (width < 64 && (v >> width) != 0)) {
      err.what = fmt::format("{} is not a {} bit pattern ({} bits, {} hex digits at most)", input::quoted(field),
                             f.name, width, digits);
      return false;
    }
    out.push_back(v);
  }
  if (out.size() != expected_fields) {
    err.field.clear();
    err.what =
        fmt::format("expected {} field{}, found {}", expected_fields, expected_fields == 1 ? "" : "s", out.size());
    return false;
  }
  return true;
}

std::size_t count_fields(std::string_view line) {
  std::size_t n = 0;
  bool in_field = false;
  for (char c : line) {
    const bool space = is_space(c);
    if (!space && !in_field) ++n;
    in_field = !space;
  }
  return n;
}

std::string format_names() {
  std::string s;
  for (const model::Format* f : model::all_formats()) s += (s.empty() ? "" : " ") + std::string(f->name);
  return s;
}

std::string format_hex(std::uint64_t value, int bits) { return fmt::format("{:0{}x}", value, (bits + 3) / 4); }

}  // namespace gp::cli

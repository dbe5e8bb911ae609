#include "input/json_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "input/limits.hpp"

namespace gp::input {

using nlohmann::json;

namespace {

// Thrown from the parser's callback: stops the parse before a too deep document is built.
struct TooDeep {};

// Where the parser is: one frame per open array or object, with its current element.
struct Frame {
  bool array = false;
  std::size_t index = 0;  // arrays: the element being read
  std::string key;        // objects: the key of the value being read
};

std::string path_of(const std::vector<Frame>& frames) {
  std::string s;
  for (const Frame& f : frames) {
    if (f.array)
      s += "[" + std::to_string(f.index) + "]";
    else if (!f.key.empty())
      s += (s.empty() ? "" : ".") + key_text(f.key);
  }
  return s;
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1, column
// 2: " prefix: the line is given apart, the column means little to a reader.
std::string reason(const json::exception& e) {
  std::string s = e.what();
  if (const auto close = s.find("] "); close != std::string::npos) s = s.substr(close + 2);
  if (s.starts_with("parse error")) {
    if (const auto colon = s.find(": "); colon != std::string::npos) s = s.substr(colon + 2);
  }
  return s;
}

// "cannot be opened (No such file or directory)"
std::string with_errno(const char* what) { return std::string(what) + " (" + std::strerror(errno) + ")"; }

}  // namespace

std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes, InputError& err) {
  err = {path.string(), 0, "", ""};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    err.what = "is a directory, not a file";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err.what = with_errno("cannot be opened");
    return std::nullopt;
  }
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, std::size_t(in.gcount()));
    if (text.size() > max_bytes) {
      err.what = "larger than " + std::to_string(max_bytes) + " bytes";
      return std::nullopt;
    }
  }
  if (in.bad()) {
    err.what = with_errno("cannot be read");
    return std::nullopt;
  }
  return text;
}

std::optional<json> parse_json(std::string_view text, const std::string& source, InputError& err) {
  std::vector<Frame> frames;
  const json::parser_callback_t track = [&frames](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth) throw TooDeep{};
        frames.push_back({event == json::parse_event_t::array_start, 0, {}});
        break;
      case json::parse_event_t::key: frames.back().key = parsed.get<std::string>(); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: frames.pop_back(); [[fallthrough]];
      case json::parse_event_t::value:
        if (!frames.empty() && frames.back().array) ++frames.back().index;
        break;
    }
    return true;
  };
  err = {source, 0, "", ""};
  try {
    return json::parse(text.begin(), text.end(), track);
  } catch (const TooDeep&) {
    err.what = "nested deeper than " + std::to_string(kMaxJsonDepth) + " arrays or objects";
  } catch (const json::parse_error& e) {
    const std::size_t at = std::min<std::size_t>(e.byte ? e.byte - 1 : 0, text.size());
    err.line = 1 + long(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n'));
    err.what = reason(e);
  } catch (const json::exception& e) {  // out_of_range: a number beyond binary64
    err.what = reason(e);
  }
  err.field = path_of(frames);
  return std::nullopt;
}

std::optional<json> read_json_file(const std::filesystem::path& path, InputError& err) {
  const auto text = read_file(path, kMaxJsonBytes, err);
  if (!text) return std::nullopt;
  return parse_json(*text, path.string(), err);
}

}  // namespace gp::input

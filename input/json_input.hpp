// JSON from outside (result documents, profile files), read within the limits of input/limits.hpp:
// every failure is an InputError naming the file, the line where known, and the key path.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "input/input_error.hpp"

namespace gp::input {

// A whole file of at most max_bytes. A directory, a missing, unreadable or larger file is an error.
[[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes,
                                                   InputError& err);

// Parses text read from `source`. Syntax errors, numbers beyond binary64 (1e400) and nesting
// deeper than kMaxJsonDepth are errors naming the line (syntax errors) and the key path.
[[nodiscard]] std::optional<nlohmann::json> parse_json(std::string_view text, const std::string& source,
                                                       InputError& err);

// read_file (at most kMaxJsonBytes), then parse_json.
[[nodiscard]] std::optional<nlohmann::json> read_json_file(const std::filesystem::path& path, InputError& err);

}  // namespace gp::input

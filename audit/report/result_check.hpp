// The shape of a result document read from a file (docs/ARCHITECTURE.md, the result document), checked once on reading:
// the keys that `compare`, `table` and the reports read must have their types. Other keys are
// free (a document may add keys); the reports read any shape safely, this check is for the user:
// one error naming the key.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "input/input_error.hpp"

namespace gp::audit {

// The first key of the wrong type or range, as an InputError with its field and what (the caller
// names the source); nullopt for a well-formed document.
[[nodiscard]] std::optional<input::InputError> check_result(const nlohmann::json& doc);

// read_json_file, then check_result: the one way `compare` and `table` read a document.
[[nodiscard]] std::optional<nlohmann::json> read_result(const std::string& path, input::InputError& err);

}  // namespace gp::audit

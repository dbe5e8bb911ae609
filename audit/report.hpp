// Human-readable reports rendered from a result document (so that a stored JSON renders the same):
// a text report in Paranoia's voice, and Markdown for results/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gp::audit {

std::string text_report(const nlohmann::json& doc);
std::string markdown_report(const nlohmann::json& doc);

}  // namespace gp::audit

// `gpuparanoia error`: what a unit's arithmetic costs (README, Error analysis). The unit is stated as
// `model dot` states it (--instruction, or --algorithm with its formats and parameters), or as a
// profile's MMA configuration (--profile, --config); model/error_analysis.hpp computes, this file
// parses, writes the text table, the JSON (schema gpuparanoia-error/1) and the CSV, and draws the
// plots with python/gpuparanoia/plot.py (embedded at build time) where matplotlib is installed.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "model/error_analysis.hpp"

namespace CLI {
class App;
}

namespace gp::cli {

void add_error_command(CLI::App& app, int& exit_code);

// The report as the JSON document (schema gpuparanoia-error/1), the CSV and the text table.
nlohmann::json error_json(const model::ErrorUnit& u, const model::ErrorReport& r);
std::string error_csv(const model::ErrorReport& r);
std::string error_text(const model::ErrorUnit& u, const model::ErrorReport& r);

}  // namespace gp::cli

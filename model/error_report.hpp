// The reports of an error analysis (model/error_analysis.hpp): the JSON document (schema
// gpuparanoia-error/1, which plots and the results site read: its keys are a contract), the CSV and
// the text table. The command line (`gpuparanoia error`) and the Python module write the same.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/error_analysis.hpp"

namespace gp::model {

nlohmann::json error_json(const ErrorUnit& u, const ErrorReport& r);
std::string error_csv(const ErrorReport& r);
std::string error_text(const ErrorUnit& u, const ErrorReport& r);
std::string_view distribution_name(ErrorDistribution d);

}  // namespace gp::model

// How the Python functions state a unit (instruction=, profile= with config=, algorithm= with its
// formats and **parameters): one way for matmul and error_analysis, defined in
// gpuparanoia_module.cpp.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "model/dot_parameters.hpp"

namespace gp::python {

// What evaluates one output element over `k` products; longer K chains it.
struct Unit {
  model::DotConfig cfg;
  int k = 0;         // products per evaluation (the instruction's K); 0: the whole K at once
  std::string name;  // for messages: the instruction, or the algorithm
};

// A keyword argument of the parameters as a model::DotParameterValue; TypeError otherwise.
model::DotParameterValue parameter_value(const std::string& key, const pybind11::handle& v);

// The unit the arguments state, for K products where the algorithm's defaults depend on K;
// ValueError or TypeError naming the argument at fault.
Unit resolve_unit(const pybind11::object& instruction, const pybind11::object& profile, const pybind11::object& config,
                  const pybind11::object& algorithm, const pybind11::object& a_format, const pybind11::object& b_format,
                  const pybind11::object& c_format, const pybind11::object& d_format,
                  const pybind11::kwargs& parameters, int k);

// Registers error_analysis and error_inputs (python/error_binding.cpp).
void register_error_analysis(pybind11::module_& m);

}  // namespace gp::python

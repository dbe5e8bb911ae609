// An MMA algorithm's parameters by name: the one interpreter of the keys that profiles' MMA
// entries write (backends/reference/profile.cpp), `model dot --algorithm` takes as options
// (cli/model_dot.cpp) and the Python module takes as keywords (python/).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/mma_algorithms.hpp"

namespace gp::model {

// null (JSON null, Python None), a boolean, an integer, a string, a list of strings (flush), or a
// number that is no integer (always refused, but named in the message as it was written).
using DotParameterValue =
    std::variant<std::monostate, bool, std::int64_t, std::string, std::vector<std::string>, double>;
using DotParameters = std::map<std::string, DotParameterValue, std::less<>>;

// The keys, in the order of the list below:
//   F, block, group, out_fraction_bits    integers
//   align_floor                           an integer, or null (no floor)
//   out_rounding                          a rounding (rne rz ru rd ...)
//   nan                                   "nvidia" or "format"
//   round_down_alignment                  a boolean (the fdrda family)
//   carry_bits                            an integer (fda, cofda; 0: every carry kept)
//   flush_inputs                          a boolean (ocfda: subnormal a and b read as zeros)
//   scale_format, scale_block             "ue8m0" or "ue4m3", products per scale factor (default 32 / 16)
//   tree, sums, products, rounding, flush the tree algorithm (model/summation_tree.hpp); sfma takes
//                                         rounding "rne", the rounding of its FMA chain
// A key that the algorithm does not read is an error rather than ignored.
std::span<const std::string_view> dot_parameter_names();

// How errors write a key: as the JSON and Python do ("out_rounding") or as the command line
// ("--out-rounding").
enum class ParameterSpelling : std::uint8_t { key, option };
std::string spell(std::string_view key, ParameterSpelling s);

struct DotConfigOrError {
  std::optional<DotConfig> config;
  std::string error;  // names the key and the value at fault
  std::string key;    // the key at fault, empty when none is
};

// The configuration of `alg` over these formats for K products: default_dot_config(), then the
// parameters, then check(). For the tree algorithm K <= 0 takes the tree's own K.
DotConfigOrError dot_config_from_parameters(MmaAlgorithm alg, const Format& a, const Format& b, const Format& c,
                                            const Format& d, int k, const DotParameters& parameters,
                                            ParameterSpelling spelling = ParameterSpelling::key);

}  // namespace gp::model

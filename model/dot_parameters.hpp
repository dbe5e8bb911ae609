// An MMA algorithm's parameters by name: the one interpreter of the keys that profiles' MMA
// entries write (backends/reference/mma_entry.cpp), `model dot --algorithm` takes as options
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

// How a parameter is written: the JSON and Python value it takes.
enum class DotParameterType : std::uint8_t {
  integer,          // an integer in min..max
  integer_or_null,  // an integer in min..max, or null (align_floor: no floor)
  boolean,
  text,  // a string: a rounding (rne rz ru rd ...), a format's name, a choice, a tree
  list,  // a list of strings (the tree's flush)
};

// One parameter of DotConfig by name, in the spirit of LLVM's fltSemantics: the one description
// the interpreter below, the profiles' writer, `model dot`'s options, the candidate search and the
// Python keywords read.
struct DotParameter {
  std::string_view name;  // the JSON key and Python keyword ("out_rounding"; --out-rounding)
  DotParameterType type;
  int min = 0, max = 0;          // integers: the values check() accepts
  int fdrda_max = 0;             // where not 0, the fdrda family's lower max (F)
  std::uint16_t algorithms = 0;  // one bit per MmaAlgorithm: those that take it (others refuse it)
  std::string_view doc;          // one line, `model dot`'s help
  // The value a configuration of K products writes (the profiles' MMA entries), or none where it
  // writes nothing: the interpreter reads it back to the same configuration.
  std::optional<DotParameterValue> (*value)(const DotConfig& c, int k) = nullptr;
  // The field an integer or a boolean sets, where the interpreter sets it as it stands.
  int DotConfig::*integer = nullptr;
  bool DotConfig::*boolean = nullptr;

  bool taken_by(MmaAlgorithm a) const { return (algorithms >> unsigned(a) & 1u) != 0; }
  // Whether some fused algorithm (is_fused) takes it.
  bool taken_by_fused() const;
  int max_for(MmaAlgorithm a) const { return fdrda_max != 0 && is_fdrda_family(a) ? fdrda_max : max; }
};

// Every parameter, in this order:
//   F, block, group, out_fraction_bits    integers
//   align_floor                           an integer, or null (no floor)
//   out_rounding                          a rounding (rne rz ru rd ...)
//   nan                                   "nvidia" or "format"
//   round_down_alignment                  a boolean (the fdrda family)
//   carry_bits                            an integer (fda, cofda; 0: every carry kept)
//   scale_format, scale_block             "ue8m0" or "ue4m3", products per scale factor (default 32 / 16)
//   tree, sums, products, rounding, flush the tree algorithm (model/summation_tree.hpp); sfma takes
//                                         rounding "rne", the rounding of its FMA chain
//   flush_inputs                          a boolean (ocfda: subnormal a and b read as zeros)
// A key that the algorithm does not read is an error rather than ignored.
std::span<const DotParameter> dot_parameters();
// The entry of a name of the table; nullptr when none.
const DotParameter* find_dot_parameter(std::string_view name);
std::span<const std::string_view> dot_parameter_names();

// The parameters a configuration of K products is written with (the table's values).
DotParameters dot_config_parameters(const DotConfig& c, int k);

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

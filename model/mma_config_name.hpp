// The one reader of MMA configuration names, "MxNxK:a,b,c,d" ("16x8x16:binary16,binary16,binary32,
// binary32"), as backends::MmaConfig::name() writes them: profiles' entries, results' findings and
// `fit --config` read them back here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/format.hpp"

namespace gp::model {

// Largest M and N of a configuration: the widest tile of the instruction tables. With K at most
// kMaxDotK (model/mma_algorithms.hpp), a name cannot make the probes allocate without bound.
inline constexpr int kMaxMmaTile = 256;

struct MmaShape {
  int m = 0, n = 0, k = 0;
};

// Reads "MxNxK" (positive decimal integers, no sign) at the start of `text`, whatever follows:
// the characters read, 0 when there is none.
std::size_t read_mma_shape(std::string_view text, MmaShape& shape);

// Why a text is not a configuration name: the first fault, in this order.
enum class MmaNameFault : std::uint8_t {
  none,
  shape,           // the text before the first ':' is not "MxNxK"
  size,            // M or N beyond kMaxMmaTile, or K beyond kMaxDotK
  format_count,    // not four comma-separated names after the ':'
  unknown_format,  // one of them names no format (bad: which)
};

struct MmaConfigName {
  MmaNameFault fault = MmaNameFault::none;
  MmaShape shape;                             // read unless the fault is shape
  std::array<std::string_view, 4> names;      // a, b, c and d as written (fault none, unknown_format)
  std::array<const Format*, 4> formats = {};  // their formats (fault none)
  int bad = -1;                               // unknown_format: the first operand at fault, 0..3
};

MmaConfigName parse_mma_config_name(std::string_view text);

}  // namespace gp::model

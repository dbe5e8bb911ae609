// The captured tensor-core sets of tests_mma/golden/nvidia-tensor-cores (its README): folder, file
// tags and the instruction of the table that models each. Read by the model's golden test and by
// `fit`'s.
#pragma once

#include <ostream>

namespace gp {

struct GoldenSet {
  const char* gpu;
  const char* input;   // folder and file tag: fp16, bf16, tf32, E4M3
  const char* output;  // fp32 or fp16
  const char* instruction;
  bool c_is_zero;  // H100 E4M3: captured with c = 0, no c file
};

inline constexpr GoldenSet kGoldenSets[] = {
    {"V100", "fp16", "fp32", "volta:HMMA.884.F32.F32", false},
    {"V100", "fp16", "fp16", "volta:HMMA.884.F16.F16", false},
    {"A100", "fp16", "fp32", "ampere:HMMA.16816.F32", false},
    {"A100", "fp16", "fp16", "ampere:HMMA.16816.F16", false},
    {"A100", "bf16", "fp32", "ampere:HMMA.16816.F32.BF16", false},
    {"A100", "tf32", "fp32", "ampere:HMMA.1688.F32.TF32", false},
    {"H100", "fp16", "fp32", "hopper:HMMA.16816.F32", false},
    {"H100", "fp16", "fp16", "hopper:HMMA.16816.F16", false},
    {"H100", "bf16", "fp32", "hopper:HMMA.16816.F32.BF16", false},
    {"H100", "tf32", "fp32", "hopper:HMMA.1688.F32.TF32", false},
    {"H100", "E4M3", "fp32", "hopper:QGMMA.64x8x32.F32.E4M3.E4M3", true},
};

inline void PrintTo(const GoldenSet& s, std::ostream* os) {
  *os << s.gpu << " " << s.input << " -> " << s.output << " as " << s.instruction;
}

}  // namespace gp

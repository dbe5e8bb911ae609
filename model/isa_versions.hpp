// Code compiled for several x86-64 levels in one portable build (a wheel, the GPU kit), the
// processor choosing at run time. A build for its own machine (-march=native, or any target with
// AVX2) runs its own code alone. GCC lowers vector code per function, so each version is a whole
// region under `#pragma GCC target`, in its own internal namespace, so that no function of one is
// shared with another; the helpers it inlines from headers keep the baseline target (they are
// defined before the pragma) and are inlined into the versioned code, or called as baseline code.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
#define GPUPARANOIA_ISA_VERSIONS 1
#else
#define GPUPARANOIA_ISA_VERSIONS 0
#endif

namespace gp::model {

#if GPUPARANOIA_ISA_VERSIONS
// Whether this processor runs code for x86-64-v3 (AVX2, FMA, BMI2 and their companions the compiler
// may use) and for x86-64-v4 (AVX-512 F, BW, DQ, VL, CD and v3's); asked once, kept.
inline bool has_x86_64_v3() {
  static const bool v3 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  }();
  return v3;
}
inline bool has_x86_64_v4() {
  static const bool v4 = has_x86_64_v3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("avx512cd");
  return v4;
}
#endif

}  // namespace gp::model

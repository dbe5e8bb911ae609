// A whole matrix product D = C + A B on raw bits, as a GEMM kernel computes it with an MMA
// instruction: every output element is Dot chained over K, `kstep` products per evaluation, each
// evaluation's d the next one's c (c's format for the first evaluation, d's for the later ones).
// The FDA fast-path configurations (fda_fast::with_format) run a kernel that decodes A and B once
// and evaluates 16 output columns at a time; everything else evaluates Dot element by element.
// Either way the bits are Dot's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "model/mma_algorithms.hpp"

namespace gp::model {

struct GemmOperands {
  std::size_t m = 0, n = 0, k = 0;
  int kstep = 0;                      // products per evaluation; K must be a multiple of it (0: K)
  std::span<const std::uint64_t> a;   // M x K, row-major, cfg.a
  std::span<const std::uint64_t> bt;  // b transposed: N x K, row j holding column j of b, cfg.b
  std::span<const std::uint64_t> c;   // M x N, row-major, cfg.c
  // With cfg.scale: a's (M x S, S = scale_count(cfg, kstep) * K / kstep) and b's transposed (N x S)
  // scale factors; both empty: none, as Dot takes them (a device's batch carries none).
  std::span<const std::uint64_t> sa;
  std::span<const std::uint64_t> sbt;
};

// The instruction sets the FDA kernel is compiled for in a portable x86-64 build with GCC (a build
// for its machine, or another compiler or processor: the build's own only), the best one the
// processor has being chosen at run time.
enum class GemmKernel { best, avx2, baseline };

// d (M x N, row-major, cfg.d) = c + a b. cfg must pass check(). Rows are split among at most
// `threads` worker threads (no more than M); a problem of fewer than 4096 products, or threads <= 1,
// runs on the calling thread. `kernel` caps the FDA kernel's instruction set (for the tests, which
// check every version the processor can run).
void gemm(const DotConfig& cfg, const GemmOperands& g, std::span<std::uint64_t> d, unsigned threads,
          GemmKernel kernel = GemmKernel::best);

}  // namespace gp::model

#include "model/gemm.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "model/fda_fast.hpp"
#include "model/isa_versions.hpp"

namespace gp::model {

namespace {

// Runs part(p0, p1, w) over [0, count), split among at most `threads` worker threads (w: the
// worker's index); a problem of fewer than 4096 products runs on the calling thread.
template <class Part>
void split(std::size_t count, const GemmOperands& g, unsigned threads, const Part& part) {
  const auto t = unsigned(std::min<std::size_t>(threads, std::max<std::size_t>(1, count)));
  if (t <= 1 || g.m * g.n * g.k < 4096) {
    part(0, count, 0u);
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < t; ++w) pool.emplace_back(part, count * w / t, count * (w + 1) / t, w);
  for (std::thread& th : pool) th.join();
}

// Runs rows(r0, r1) over [0, M), split among the worker threads.
template <class Rows>
void split_rows(const GemmOperands& g, unsigned threads, const Rows& rows) {
  split(g.m, g, threads, [&](std::size_t r0, std::size_t r1, unsigned) { rows(r0, r1); });
}

// Any configuration: Dot element by element, the first evaluation with c's format, later ones
// with d's. Dot reads 64-bit patterns: B's columns (and b's scale factors) are copied so once,
// each row of A as it is evaluated.
void gemm_dot(const DotConfig& cfg, const GemmOperands& g, int kstep, const OutBitMatrix& d, unsigned threads) {
  DotConfig next_cfg = cfg;
  next_cfg.c = cfg.d;
  const Dot first(cfg), next(next_cfg);
  const auto uk = std::size_t(kstep);
  const auto per_step = std::size_t(scale_count(cfg, kstep));
  const std::size_t S = per_step * (g.k / uk);
  const bool scaled = cfg.scale && !g.sa.empty();
  std::vector<std::uint64_t> bt(g.n * g.k), sbt(scaled ? g.n * S : 0);
  for (std::size_t j = 0; j < g.n; ++j) {
    g.b.get(0, j, g.k, true, &bt[j * g.k]);
    if (scaled) g.sb.get(0, j, S, true, &sbt[j * S]);
  }
  split_rows(g, threads, [&](std::size_t r0, std::size_t r1) {
    std::vector<std::uint64_t> a(g.k), sa(scaled ? S : 0);
    for (std::size_t i = r0; i < r1; ++i) {
      g.a.get(i, 0, g.k, false, a.data());
      if (scaled) g.sa.get(i, 0, S, false, sa.data());
      for (std::size_t j = 0; j < g.n; ++j) {
        std::uint64_t acc = g.c.empty() ? 0 : g.c(i, j);
        for (std::size_t t = 0; t < g.k / uk; ++t) {
          std::span<const std::uint64_t> sat, sbt_t;
          if (scaled) {
            sat = std::span(sa).subspan(t * per_step, per_step);
            sbt_t = std::span(sbt).subspan(j * S + t * per_step, per_step);
          }
          acc = (t == 0 ? first : next)(acc, std::span(a).subspan(t * uk, uk),
                                        std::span(bt).subspan(j * g.k + t * uk, uk), sat, sbt_t);
        }
        d.put(i, j, 1, &acc);
      }
    }
  });
}

// The smallest and largest exponent (ilogb) of a set of nonzero finite values.
struct ExponentRange {
  int lo = INT_MAX, hi = INT_MIN;
  void add(const ExponentRange& r) {
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
  }
};

// In a portable build (model/isa_versions.hpp), the kernel compiled for x86-64-v4 (AVX-512) and
// x86-64-v3 (AVX2) beside the baseline: its vectors are 16 lanes wide, which the baseline splits
// into SSE2 quarters, emulating what SSE2 lacks (per-lane shifts, 32-bit maxima, unsigned
// conversions).
#if GPUPARANOIA_ISA_VERSIONS
namespace v4 {
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
#include "model/fda_gemm_kernel.inc"
#pragma GCC pop_options
}  // namespace v4
namespace v3 {
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
#include "model/fda_gemm_kernel.inc"
#pragma GCC pop_options
}  // namespace v3
#endif
namespace base {
#include "model/fda_gemm_kernel.inc"
}  // namespace base

// Runs the kernel of format F for this processor: B decoded once, A's rows split among threads.
template <const Format& F>
void fda_gemm(const DotConfig& cfg, const GemmOperands& g, int kstep, const OutBitMatrix& d, unsigned threads,
              GemmKernel version) {
  const auto run = [&]<class Kernel>(const Kernel* /*tag*/) {
    const Kernel kernel(cfg, g, kstep, threads);
    split_rows(g, threads, [&](std::size_t r0, std::size_t r1) { kernel.rows(r0, r1, d); });
  };
#if GPUPARANOIA_ISA_VERSIONS
  if (version == GemmKernel::best && has_x86_64_v4()) return run(static_cast<const v4::FdaGemm<F>*>(nullptr));
  if (version != GemmKernel::baseline && has_x86_64_v3()) return run(static_cast<const v3::FdaGemm<F>*>(nullptr));
#else
  (void)version;
#endif
  run(static_cast<const base::FdaGemm<F>*>(nullptr));
}

}  // namespace

void gemm(const DotConfig& cfg, const GemmOperands& g, const OutBitMatrix& d, unsigned threads, GemmKernel kernel) {
  const int kstep = g.kstep > 0 ? g.kstep : int(g.k);
  const bool fast = g.k > 0 && fda_fast::with_format(
                                   cfg, [&]<const Format & F>() { fda_gemm<F>(cfg, g, kstep, d, threads, kernel); });
  if (!fast) gemm_dot(cfg, g, kstep, d, threads);
}

}  // namespace gp::model

// What a unit's arithmetic costs (README, Error analysis): a unit's dot products chained over K as
// a GEMM kernel chains its instruction (model/gemm.hpp), on random inputs of a few distributions,
// against the exact result (model/exact_sum.hpp), beside binary32 FMA chains and numpy's pairwise
// binary32 sums of the same inputs, with the deterministic block-FMA bound (Blanchard, Higham,
// Lopez, Mary, Pranesh 2020) and the probabilistic one (Higham and Mary 2019) of each.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/dot_parameters.hpp"
#include "model/mma_algorithms.hpp"

namespace gp::model {

enum class ErrorDistribution : std::uint8_t { normal, uniform_positive, cancellation, ml, large_products };
struct ErrorDistributionInfo {
  ErrorDistribution id;
  std::string_view name;         // "uniform-positive"
  std::string_view description;  // what the inputs are, exactly
};
// Every distribution; those of a run by default: all but large-products (MMA-Sim's bias experiment).
std::span<const ErrorDistributionInfo> error_distributions();
bool default_distribution(ErrorDistribution d);
const ErrorDistributionInfo* find_error_distribution(std::string_view name);

// The unit: its configuration for a variant (the what-if's parameters over the unit's own, empty
// for the unit itself) and the products each call takes (`kstep`, the instruction's K; 0: one
// call takes all K, as `model dot --algorithm` does).
struct ErrorUnit {
  std::string label;    // "hopper:HMMA.16816.F32"
  std::string command;  // the `gpuparanoia model dot ...` line of the unit
  DotConfig config;     // the unit as it stands (for K = k_min where its defaults depend on K)
  int kstep = 0;
  int k_min = 16;  // the smallest K of the default list: the instruction's K
  std::function<DotConfigOrError(int k, const DotParameters& what_if)> variant;
};

// The unit of an instruction, of a profile's configuration (its DotConfig and K), or of an
// algorithm's formats and parameters (the parameters of `model dot --algorithm`; k_min the tree's K,
// else the block, else 16).
ErrorUnit instruction_error_unit(std::string_view id, const DotConfig& cfg, int k);
ErrorUnit algorithm_error_unit(MmaAlgorithm alg, const Format& a, const Format& b, const Format& c, const Format& d,
                               const DotParameters& parameters);

struct WhatIf {
  std::string label;  // "out_rounding=rne"
  DotParameters parameters;
};
// "KEY=VALUE[,KEY=VALUE...]" as a what-if, values read as the table types them (flush takes a
// list: "flush=inputs,c"). An error message instead where malformed or unknown.
std::optional<WhatIf> parse_what_if(std::string_view text, std::string& error);

struct ErrorRequest {
  std::vector<int> ks;
  std::vector<ErrorDistribution> distributions;
  int trials = 20;
  std::uint64_t seed = 1;
  double lambda = 6.0;   // the probabilistic bound's lambda
  unsigned threads = 0;  // 0: every core
  std::vector<WhatIf> what_ifs;
};
// Why a request cannot run for this unit (a K that is no multiple of its kstep, a what-if the model
// refuses), or "".
std::string check(const ErrorUnit& u, const ErrorRequest& r);

// The statistics of one series (unit, what-if or binary32 reference) on one distribution, one
// entry per K; NaN where not computed (a bound that does not apply) or not finite.
struct ErrorSeries {
  std::string label, kind;  // kind: unit, what-if, float32-fma-chain, float32-pairwise
  DotParameters what_if;
  ErrorDistribution distribution = ErrorDistribution::normal;
  std::vector<double> max_rel, mean_rel, mean_signed_rel, correctly_rounded;
  // max over trials of |d - exact| / (|c| + sum |a_i b_i|): the quantity the bounds bound.
  std::vector<double> max_normwise;
  std::vector<double> bound_deterministic, bound_probabilistic;
  // Per trial (ks.size() x trials, row by K): d (its value; NaN where not finite), (d - exact) /
  // |exact|, and |d - exact| / (|c| + sum |a_i b_i|).
  std::vector<double> trial_d, trial_rel, trial_normwise;
  // Per trial: the exact result rounded to nearest even into binary64.
  std::vector<double> trial_exact;
};

struct ErrorReport {
  std::vector<int> ks;
  int trials = 0;
  std::uint64_t seed = 0;
  double lambda = 0;
  std::vector<ErrorDistribution> distributions;
  std::vector<ErrorSeries> series;                       // by distribution: unit, what-ifs, float32 FMA chain, pairwise
  std::string deterministic_bound, probabilistic_bound;  // the formulas, as the report states them
};

// progress(done, total) is called from the calling thread between tasks.
ErrorReport analyse_error(const ErrorUnit& u, const ErrorRequest& r,
                          const std::function<void(long, long)>& progress = {});

// The inputs of one trial: c, then a and b (K each), raw bits of the unit's formats, and the scale
// factors (1.0) where the unit takes them.
struct ErrorInputs {
  std::uint64_t c = 0;
  std::vector<std::uint64_t> a, b, scale_a, scale_b;
};
ErrorInputs error_inputs(const DotConfig& cfg, int kstep, ErrorDistribution dist, int k, int trial, std::uint64_t seed);

// numpy's float32 pairwise sum (np.add.reduce's inner loop, pairwise_sum in
// numpy/core/src/umath/loops_utils.h.src), in its order exactly: below 8 elements sequential from
// 0, up to 128 eight accumulators combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) then the rest in
// order, above that halves split at a multiple of 8.
float numpy_pairwise_sum(const float* x, long n);
// np.add.reduce(x) of a contiguous float32 array (numpy 1.24, as measured): its iterator hands the
// sum its buffer's 8192 elements at a time, each chunk's pairwise sum added in turn to 0.
inline constexpr long kNumpyBuffer = 8192;
float numpy_add_reduce(const float* x, long n);
// The most roundings one summand of numpy_pairwise_sum(n), numpy_add_reduce(n) goes through.
int numpy_pairwise_depth(long n);
int numpy_add_reduce_depth(long n);

// The bounds on |d - exact| / (|c| + sum |a_i b_i|) of the unit over K products, K a multiple of
// kstep (0: one call), lambda the probabilistic bound's; NaN where no bound applies.
struct ErrorBounds {
  double deterministic = 0, probabilistic = 0;
};
ErrorBounds unit_error_bounds(const DotConfig& cfg, int kstep, long k, double lambda);

}  // namespace gp::model

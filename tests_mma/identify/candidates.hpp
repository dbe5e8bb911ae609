// The model's candidates for an MMA unit and their check against observed dot products: the search
// the identification runs on a device (identify.cpp) and `gpuparanoia fit` runs on captured lines.
//
// The candidates are the nine algorithms with their parameters free: F 0..40 (fdrda family
// 0..31), fused blocks of every power of two up to K, GPS and GDFS group sizes, the final rounding
// (all eleven modes) at 0..p(d)-1 fraction bits, the NaN encoding, rounding down or toward zero in
// the FDRDA alignment, and the alignment floor; beside them summation trees (model/summation_tree.hpp)
// of a bounded family of shapes (full_space), each with its sums in d's, c's, binary32, binary16,
// bfloat16 or tf32 format, products exact or rounded to the sums' or a's format, every rounding mode, and
// subnormals flushed or kept in the inputs, c and the sums; and AMD's one's-complement dot unit
// (ocfda: grid bits 16..32, blocks, roundings, subnormal inputs flushed or kept). A candidate is
// kept only if it predicts each output bit for bit (any NaN for units whose NaN payloads are not
// modelled).
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tests_mma/support.hpp"

namespace gp::mma {

// Observations: inputs and the unit's output, with block scale factors where the unit has them.
struct Pool {
  std::size_t K = 0;
  const Format* scale = nullptr;  // the scale factors' format, or none
  int scale_block = 32;
  std::size_t S = 0;  // scale factors of each operand per dot product
  std::vector<std::uint64_t> c, a, b, sa, sb, out;
  std::vector<char> safe;  // no alignment floor at or below emin(d) can matter
  std::size_t size() const { return c.size(); }
  std::span<const std::uint64_t> A(std::size_t i) const { return {&a[i * K], K}; }
  std::span<const std::uint64_t> B(std::size_t i) const { return {&b[i * K], K}; }
  std::span<const std::uint64_t> SA(std::size_t i) const { return {sa.data() + i * S, S}; }
  std::span<const std::uint64_t> SB(std::size_t i) const { return {sb.data() + i * S, S}; }
  DotCase at(std::size_t i) const;
  std::uint64_t predict(const model::Dot& dot, std::size_t i) const { return dot(c[i], A(i), B(i), SA(i), SB(i)); }
};
// A pool for the configuration's K (scale: the unit's scale factors, or none).
Pool make_pool(const MmaConfig& cfg, const Format* scale = nullptr, int scale_block = 32);
void add_to(Pool& p, const MmaConfig& cfg, const DotCase& x, std::uint64_t out);

// Checks candidates against (part of) a pool; an observation that rejects a candidate moves to
// the front, so that the next ones meet the most selective observations first.
class Checker {
 public:
  Checker(const Pool& pool, bool safe_only, std::size_t from = 0);
  bool fits(const DotConfig& cfg);
  // The observations a candidate mispredicts, counting no further than limit + 1, and the first
  // of them (in pool order) among those counted.
  struct Misses {
    std::size_t count = 0;
    std::size_t first = SIZE_MAX;
  };
  Misses misses(const DotConfig& cfg, std::size_t limit);
  std::uint64_t checked() const { return checked_; }

 private:
  const Pool& pool_;
  std::vector<std::size_t> order_;
  std::uint64_t checked_ = 0;
};

// The candidate space.
struct Space {
  bool sfma = true;
  std::vector<int> gps_groups, fda_F, fdrda_F, gdfs_F, blocks, gdfs_groups, out_bits;
  std::vector<model::Rounding> roundings;
  std::vector<model::MmaNan> nans;
  // Summation trees (beside the nine): shapes, each with every rounding above and every variant
  // (sums' format, products' rounding, flushing).
  std::vector<model::SummationTree> shapes;
  // Carry-out bits of FDA's fixed-point sum (0: every carry kept); a value that cannot wrap a
  // block's sum (carry_bits >= bit_width(block)) is the same as 0 and is skipped.
  std::vector<int> carries = {0};
  // ocfda (AMD's one's-complement dot unit): grid bits F, each with the blocks, every rounding
  // above at d's own fraction bits, the format's NaN, subnormal inputs flushed or kept.
  std::vector<int> ocfda_F;
  const Format* scale = nullptr;  // block scale factors of every candidate
  int scale_block = 32;
};

// Every candidate of the model for the configuration: `run` and `fit` search the same space. Trees:
// the shape the summation-tree probe measured ("" when none: `fit` has no probe), the two plain
// chains (from the first product with c last, from c), the blocked pairwise trees (blocks of every
// power of two, summed pairwise, the blocks accumulated in order from c or with c last) and the
// chains of fused groups (each group of every power of two summed exactly with the running sum from c).
Space full_space(const MmaConfig& cfg, const std::string& measured_tree = "");

// Calls fn for every candidate of the space (alignment floor: none).
void for_each_candidate(const MmaConfig& cfg, const Space& s, const std::function<void(const DotConfig&)>& fn);

// Floors that can matter: above the lowest exponent a summand (or a partial result) can have,
// up to emin(d). Lower floors never bind: they are the same as none.
std::vector<int> floor_range(const MmaConfig& cfg);
// FDA's carry-out bits that can matter for K products, 0 (every carry kept) first: a sum of K
// products and c wraps only in fewer than bit_width(K) bits above its largest term.
std::vector<int> carry_range(int K);

// The candidates of the space that predict every observation of the pool: first against the
// observations no floor can affect, then against all of them with every floor that can matter.
// Where none does, the FDA candidates that wrap their sums (carry_bits, Valpey et al.) are searched
// the same way: a unit that drops carries fits nothing else, and every other unit is searched as
// fast as before. `checked` counts the candidates evaluated.
//
// Bounds of a search, for captures that are few or a time that is short: a deadline, and the most
// survivors kept (a single line leaves millions). Each flag says that its bound cut the search short.
// `threads`: workers of the second pass (0: one per core).
struct Bounds {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::size_t max_survivors = SIZE_MAX;
  unsigned threads = 0;
  bool out_of_time = false, too_many = false;
};
std::vector<DotConfig> survivors_of(const MmaConfig& cfg, const Space& space, const Pool& pool, std::uint64_t& checked,
                                    Bounds* bounds = nullptr);
// Where no candidate fits: at most `n` that mispredict the fewest observations of the pool, fewest
// first (then by rank_less), with their counts. The 16 (at least n) best are ranked on a sample of
// 256 observations with growing bounds, 4 then 16 misses (a candidate is dropped at its first miss
// beyond the bound, so most cost a few observations; the first bound some candidate meets gives the
// closest), else on 32 of the sample, then counted on the whole pool; `threads` workers (0: one per
// core), the same answer for any number.
struct Near {
  std::size_t misses;
  DotConfig c;
};
std::vector<Near> closest_candidates(const MmaConfig& cfg, const Space& space, const Pool& pool, std::size_t n,
                                     unsigned threads = 0);
// Where some candidates reproduce the pool's outputs bit for bit (NaN payloads included), drops
// those that only match them up to the NaN encoding (the pool's NaN outputs are the only place the
// survivors of a search can differ from them).
void keep_nan_exact(const MmaConfig& cfg, const Pool& pool, std::vector<DotConfig>& survivors);
// The candidates that fit the observations of the pool from index `from` on.
std::vector<DotConfig> fitting(const Pool& pool, const std::vector<DotConfig>& s, std::size_t from);
// Completes the candidates with their neighbours along every parameter (two steps) that fit the
// pool: the space's ranges and the neighbours' agree, but a first pass may have kept a subset.
void expand(const MmaConfig& cfg, const Pool& pool, std::vector<DotConfig>& s, std::uint64_t& checked);

// The canonical order among candidates no input separates: the plainest algorithm, one fused
// block, the smallest F (the claim "at least F bits"), rz then rne, d's own fraction bits, no
// floor (else the floor emin(d) - (F - 18) of the published models, else the lowest), NVIDIA's
// NaN when it matched bit for bit, rounding down in the FDRDA alignment.
bool rank_less(const MmaConfig& cfg, const DotConfig& x, const DotConfig& y);
// Candidates equal in every parameter that can matter (block and group at most K) share a key.
std::array<int, 10> key_of(const DotConfig& c, int K);

// A candidate in words: "FDA (F = 25, one fused block of 16 products, ...)".
std::string describe(const MmaConfig& cfg, const DotConfig& c);

// What equivalent candidates leave open: for each parameter on which they differ, its values
// ("F": "24..26", "align_floor": "none, -140..-133"); empty when they agree on every one.
nlohmann::json ambiguity(int K, const std::vector<DotConfig>& candidates);

// `per_gen` dot products of K products from every generator in turn, noted "<what> (<generator>)".
std::vector<DotCase> draw_inputs(RandomInputs& gen, int K, int per_gen, std::string_view what,
                                 std::span<const Gen> gens = all_gens);

// The behaviour classes of candidates on inputs: candidates that give the same bits on every
// input share a class (compared by a 64-bit hash of their outputs, so that memory stays one word
// per candidate). `rep` lists the first candidate of each class, `pred[i]` the outputs of candidate
// i where it is a class's first (empty otherwise); `splitting` the inputs that separate the classes:
// for each class one where it differs from the first class (up to max_first), then any where two
// classes differ (up to max_total).
struct Classes {
  std::vector<std::size_t> rep, class_of;
  std::vector<std::vector<std::uint64_t>> pred;
  std::vector<std::size_t> splitting;
};
Classes behaviour_classes(const std::vector<DotConfig>& s, const std::vector<DotCase>& inputs,
                          std::size_t max_first = 256, std::size_t max_total = 64, unsigned threads = 0);

}  // namespace gp::mma

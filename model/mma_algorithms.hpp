// The MMA arithmetic algorithms of MMA-Sim (Xie et al., section IV): what one tensor-core or
// matrix-core instruction computes for one output element, d = c + sum_k a_k * b_k, on raw bits.
//
//   sfma      sequential IEEE FMA in the output format (DMMA; AMD f32/f64 MFMA)
//   gps       CDNA2 16-bit MFMA: FP32 products and pairwise sums over groups of G, subnormals flushed
//   fda       fused dot-add: exact products, alignment to the largest exponent keeping F fraction
//             bits (shifted-out bits dropped: truncation, Valpey et al. 4.2), exact fixed-point
//             sum, one final rounding (NVIDIA HMMA, QMMA, HGMMA, QGMMA, UTCHMMA, UTCQMMMA)
//   cofda     a chain of FDA blocks of K/2 products, each partial result the next block's c
//   gdfs      group-dot-fused-sum (NVIDIA fp4 OMMA, UTCOMMA): exact 16-product group sums, scaled,
//             then aligned with c at F = 35
//   fdrda     CDNA3 TF32/FP16/BF16: products may overflow, F = 24 product alignment, then c and
//             the dot product aligned rounding down (31 / 24 fraction bits), final RNE
//   cofdrda   a chain of FDRDA blocks
//   gfdrda    CDNA3 FP8: even and odd products aligned separately, then as FDRDA; c rounded to
//             zero instead of down when far below the dot product
//   cogfdrda  a chain of GFDRDA blocks of 16
//
// Beside them, `ocfda` (not MMA-Sim's): the one's-complement fused dot-add of AMD's consumer dot
// and WMMA units (RDNA 3 to 4), a sign-magnitude adder that negates a summand opposing c's sign
// by inverting its bits without adding one (model/mma_algorithms.cpp, ocfda_block); and `tree`:
// any summation tree over the products and c, each node rounded once to its own format
// (model/summation_tree.hpp), for units that follow none of the nine.
//
// Everything is integer arithmetic on the decoded significands: no host floating point. The
// parameters MMA-Sim leaves open (block size, alignment floor, NaN encoding) are fields of
// DotConfig, and the instruction table (model/mma_instructions.hpp) sets them per instruction.
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/format.hpp"
#include "model/rounding.hpp"
#include "model/summation_tree.hpp"

namespace gp::model {

enum class MmaAlgorithm : std::uint8_t { sfma, gps, fda, cofda, gdfs, fdrda, cofdrda, gfdrda, cogfdrda, tree, ocfda };
// MMA-Sim's nine (the tree and ocfda families apart).
inline constexpr MmaAlgorithm all_mma_algorithms[] = {
    MmaAlgorithm::sfma,  MmaAlgorithm::gps,     MmaAlgorithm::fda,    MmaAlgorithm::cofda,   MmaAlgorithm::gdfs,
    MmaAlgorithm::fdrda, MmaAlgorithm::cofdrda, MmaAlgorithm::gfdrda, MmaAlgorithm::cogfdrda};
std::string_view name(MmaAlgorithm a);
std::optional<MmaAlgorithm> find_mma_algorithm(std::string_view name);
// Kinds of algorithm: fused (one fixed-point sum per block, one rounding: every one but sfma, gps
// and tree), the fdrda family, and the plain algorithm of a chained one (the chain is its block).
bool is_fused(MmaAlgorithm a);
bool is_fdrda_family(MmaAlgorithm a);
MmaAlgorithm unchained(MmaAlgorithm a);

// The NaN a fused algorithm delivers (sfma and gps follow the scalar operations' NaN rules).
enum class MmaNan : std::uint8_t {
  nvidia,  // NVIDIA's canonical NaN: every magnitude bit set, sign clear (0x7FFFFFFF, 0x7FFF)
  format,  // the output format's canonical quiet NaN (0x7FC00000, 0x7E00); AMD payloads are unknown
};

// "No lower bound" for DotConfig::align_floor.
inline constexpr int kNoAlignFloor = INT_MIN / 4;
// Largest F, block and K the fixed-point sums are sized for (64-bit accumulators).
inline constexpr int kMaxF = 40;
inline constexpr int kMaxDotK = 1024;
// The fdrda family aligns the dot product at this many fraction bits (MMA-Sim, FDRDA step 5): the
// product alignment's F cannot keep more.
inline constexpr int kFdrdaDotBits = 31;
// Most carry-out bits of FDA's fixed-point sum (DotConfig::carry_bits).
inline constexpr int kMaxCarryBits = 16;

struct DotConfig {
  MmaAlgorithm algorithm = MmaAlgorithm::fda;
  const Format* a = &binary16;
  const Format* b = &binary16;
  const Format* c = &binary32;  // c of the first block; later blocks take the previous block's d
  const Format* d = &binary32;
  // Fraction bits kept below the alignment exponent (fda, gdfs: F; fdrda family: the product F).
  int F = 24;
  // Products fused before a partial result is rounded; K larger than a block chains blocks, the
  // partial result (in d's format) becoming the next block's c. 0: one block of all K products.
  int block = 0;
  // gps: G, the products summed pairwise before joining the sequential sum. gdfs: products per
  // fixed-point group (16 on Blackwell).
  int group = 0;
  // Final rounding of the fused algorithms: mode and fraction bits kept (d->man_bits, or 13 for
  // Ada QMMA and Hopper QGMMA with binary32 output). A magnitude of 2^(emax+1) or more is infinite.
  Rounding out_rounding = Rounding::rz;
  int out_fraction_bits = 23;
  // Lowest exponent the terms are aligned to: the alignment exponent is max(align_floor, the
  // exponents of the nonzero terms). Zero terms take no part in the maximum.
  int align_floor = kNoAlignFloor;
  // fdrda family: the dot product and c are aligned rounding down (true, CDNA3) or truncated
  // toward zero (false: the hypothetical RZ instruction of MMA-Sim section VI-C).
  bool round_down_alignment = true;
  // Block scale factors (MX: ue8m0 every 32 products; NVFP4: ue4m3 every 16), or none.
  const Format* scale = nullptr;
  int scale_block = 32;
  MmaNan nan = MmaNan::nvidia;
  // fda, cofda: integer bits of the fixed-point accumulator above the leading bit of its largest
  // term, as Valpey et al. count them (section 4.3, "carry-out bits"): a sum of magnitude 2^(E +
  // carry_bits + 1) or more, E the largest exponent of the nonzero exact terms' leading bits, wraps
  // around as a two's-complement sum of that width does. 0: every carry kept (the exact sum).
  int carry_bits = 0;
  // The tree algorithm's shape, formats and roundings (the fields above do not apply to it).
  std::shared_ptr<const SummationTree> tree;
  // ocfda: subnormal a and b read as zeros of their sign (RDNA 3.5 flushes bf16 inputs, keeps f16).
  bool flush_inputs = false;
};

// The parameters MMA-Sim gives an algorithm when nothing else is said: F (fda 24, gdfs 35,
// fdrda family 24), block (all K; cofda/cofdrda: K/2 when k > 0; gfdrda family: 16), group (gps 4,
// gdfs 16), final rounding (RNE for gps/sfma/fdrda family and binary16 output, otherwise RZ at
// d's fraction bits), NaN (nvidia for fda/cofda/gdfs). ocfda: F 24, blocks of 2 (the dot2 unit),
// RNE, the format's NaN, subnormal inputs flushed when a or b is bfloat16 (RDNA 3.5).
DotConfig default_dot_config(MmaAlgorithm alg, const Format& a, const Format& b, const Format& c, const Format& d,
                             int k = 0);

// Why a configuration cannot be evaluated, or an empty string.
[[nodiscard]] std::string check(const DotConfig& cfg);

// Number of scale factors each of a and b needs for K products (0 without scale factors).
int scale_count(const DotConfig& cfg, int k);

// An evaluator for one configuration: construct once, call for every dot product. Thread-safe
// (const, no state between calls) and allocation-free per call.
class Dot {
 public:
  // cfg must pass check().
  explicit Dot(const DotConfig& cfg);

  // d = c + sum_k a[k] * b[k] in raw bits of the configured formats (K = a.size() = b.size();
  // a fused block never holds more than kMaxDotK products: longer ones are chained). With scale
  // factors, sa and sb hold scale_count(cfg, K) raw scale values each; product k uses
  // sa[k / scale_block] and sb[k / scale_block].
  std::uint64_t operator()(std::uint64_t c, std::span<const std::uint64_t> a, std::span<const std::uint64_t> b,
                           std::span<const std::uint64_t> sa = {}, std::span<const std::uint64_t> sb = {}) const;

  const DotConfig& config() const { return cfg_; }

  // Evaluation of one block: implementation detail, public for the kernels' sake.
  using BlockFn = std::uint64_t (*)(const Dot&, const Format& cf, std::uint64_t c, const std::uint64_t* a,
                                    const std::uint64_t* b, int n, const std::uint64_t* sa, const std::uint64_t* sb,
                                    int k0);
  // One fused block: d = c + sum of the n products a[k] * b[k], c in format cf (cfg.c for the first
  // block of a chain, d's format after it), product k taking scale factor (k0 + k) / scale_block.
  std::uint64_t block(const Format& cf, std::uint64_t c, const std::uint64_t* a, const std::uint64_t* b, int n,
                      const std::uint64_t* sa = nullptr, const std::uint64_t* sb = nullptr, int k0 = 0) const {
    return block_fn_(*this, cf, c, a, b, n, sa, sb, k0);
  }
  // The final rounding of the fused algorithms: (-1)^neg * mag * 2^exp to d.
  std::uint64_t round_out(bool neg, std::uint64_t mag, int exp) const;
  std::uint64_t nan_bits() const;
  std::uint64_t inf_bits(bool neg) const;

 private:
  DotConfig cfg_;
  Format narrow_;  // d with out_fraction_bits fraction bits, when fewer than d's own
  bool use_narrow_ = false;
  BlockFn block_fn_ = nullptr;
};

// The products one fused block holds for K products (K itself when block is 0 or K or more).
int effective_block(const DotConfig& c, int k);

// One-shot convenience: Dot(cfg)(c, a, b, sa, sb).
std::uint64_t dot(const DotConfig& cfg, std::uint64_t c, std::span<const std::uint64_t> a,
                  std::span<const std::uint64_t> b, std::span<const std::uint64_t> sa = {},
                  std::span<const std::uint64_t> sb = {});

}  // namespace gp::model

// What the MMA probes share: exact values and their encodings in any
// format, dot-product cases placed one per output element of a tile, running them through
// Device::mma in one call, the model's predictions, the references a probe reads its outputs
// against, and the random inputs that the identification and the validation draw.
//
// A probe places its summands (the K products a_k * b_k and c) anywhere: each output element
// d_ij is the independent dot product of row i of A and column j of B plus c_ij, so a tile holds
// min(M, N) cases on a (shifted) diagonal. Every construction is made for the configuration's
// formats and K: products are factored into a in A's format and b in B's format, preferring normal
// factors, and a case that the formats cannot express is reported as such, never approximated.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "audit/probe.hpp"
#include "model/exact.hpp"
#include "model/mma_algorithms.hpp"

namespace gp::mma {

using backends::MmaConfig;
using model::DotConfig;
using model::Exact;
using model::Format;
using model::MmaAlgorithm;

// Summands are exact values (model/exact.hpp) of at most 63 significant bits, never sticky.
inline Exact pow2(int e, bool neg = false) { return {neg, 1, e}; }
inline Exact neg(Exact v) { return {!v.neg, v.sig, v.exp}; }
// sig * 2^exp with a signed sig.
inline Exact val(std::int64_t sig, int exp) {
  return {sig < 0, sig < 0 ? std::uint64_t(-sig) : std::uint64_t(sig), exp};
}
// Exact sum of two values (a sum wider than 63 bits keeps its leading 63: probes never build one).
Exact add(Exact x, Exact y);
using model::lead;
// "1 + 2^-23", "-3 * 2^-25", "2^-24", "-0".
std::string show(Exact v);

// The bits of v in f when v is exactly representable and finite there.
std::optional<std::uint64_t> encode(const Format& f, Exact v);
// The exact value of finite bits.
Exact decode(const Format& f, std::uint64_t bits);
// A raw output rendered for a verdict: its value, or inf / NaN with its bits.
std::string show(const Format& f, std::uint64_t bits);
bool is_nan(const Format& f, std::uint64_t bits);

// a * b = v with a in fa and b in fb: both normal where possible, and one of them a power of two
// where possible (so that the product's alignment exponent is that of its leading bit).
std::optional<std::pair<std::uint64_t, std::uint64_t>> factor(const Format& fa, const Format& fb, Exact v);

// v rounded to d with `bits` fraction bits (d's exponent range) in mode r: a fused sum's final
// rounding (MMA-Sim IV-C step 5; 13 bits for Ada QMMA and Hopper QGMMA).
std::uint64_t round_to(const Format& d, int bits, model::Rounding r, Exact v);
// The terms added one after the other with IEEE additions in d, each partial sum rounded and
// normalized (each term first rounded to d): the "normalized after each addition" reference.
std::uint64_t ieee_sum(const Format& d, model::Rounding r, const std::vector<Exact>& terms);

// The lowest exponent a summand (a product, c) can have: an alignment floor at or below it never
// binds, and is the same as none.
int lowest_summand_exponent(const MmaConfig& cfg);

// The formats of a configuration are floating-point formats the model knows.
bool usable(const MmaConfig& cfg);

// One dot product d = c + sum_k a_k b_k in raw bits (K = config.k).
struct DotCase {
  std::uint64_t c = 0;
  std::vector<std::uint64_t> a, b;
  std::vector<std::uint64_t> sa, sb;  // block scale factors of a and b, for units that have them
  std::string note;
};

// Builds one case: every summand +0 until set. Summand k < K is product k, summand K is c.
class CaseBuilder {
 public:
  explicit CaseBuilder(const MmaConfig& cfg);
  int summands() const { return k_ + 1; }
  // Sets summand s (product s, or c for s == K) to v; false (and the builder spoiled) when the
  // formats cannot hold it exactly.
  bool set(int s, Exact v);
  bool product(int k, Exact v) { return set(k, v); }
  bool c(Exact v) { return set(k_, v); }
  void raw(int k, std::uint64_t a, std::uint64_t b);
  void raw_c(std::uint64_t c);
  bool ok() const { return ok_; }
  DotCase done(std::string note) const;

 private:
  const MmaConfig* cfg_;
  int k_;
  DotCase case_;
  bool ok_ = true;
};

// Runs the cases on the device, one output element each, min(M, N) per tile, in one Device::mma
// call; every other element of C is +0.
Expected<std::vector<std::uint64_t>> run(backends::Device& device, const MmaConfig& cfg,
                                         const std::vector<DotCase>& cases);

// An observation: inputs c, a_0..a_{K-1}, b_0..b_{K-1} (the order of `gpuparanoia model dot`).
audit::Observation observation(const MmaConfig& cfg, const DotCase& c, std::uint64_t output,
                               std::vector<std::pair<std::string, std::uint64_t>> predictions = {});
// The case an observation holds, when it holds one of this configuration.
std::optional<DotCase> case_of(const MmaConfig& cfg, const audit::Observation& o);

// A model configuration for the config's formats: MMA-Sim's default parameters for the algorithm.
DotConfig base_config(const MmaConfig& cfg, MmaAlgorithm alg);
std::uint64_t predict(const model::Dot& dot, const DotCase& c);
// The case as a `gpuparanoia model dot` input line: c a0..aK-1 b0..bK-1 [scales of a, of b], hex
// of each format's storage width (scale: the unit's scale format, when it has one).
std::string dot_line(const MmaConfig& cfg, const Format* scale, const DotCase& c);

// Whether an output agrees with a prediction: the same bits, or both NaN where the prediction's
// NaN encoding is not modelled (sfma, gps and MmaNan::format: payloads of AMD units and IEEE
// FMA chains are unknown, MMA-Sim section V).
bool nan_free(const DotConfig& cfg);
bool agrees(const DotConfig& cfg, std::uint64_t predicted, std::uint64_t output);

// Runs the cases and records each as an observation of the finding; the identification's judged
// models give the observations their predictions (tests_mma/questions.hpp). Returns the outputs.
Expected<std::vector<std::uint64_t>> observe(backends::Device& device, const MmaConfig& cfg,
                                             const std::vector<DotCase>& cases, audit::Finding& finding);

// A probe reads its outputs as measurements, against what arithmetic it names would give (the exact
// sum rounded toward zero, products rounded to d first): a reading, never a verdict, which comes
// from the model's candidates alone.
struct Reference {
  std::string name;
  std::vector<std::uint64_t> outputs;  // one per case
};
// The names of the references that give every output bit for bit.
std::vector<std::string> matching(const std::vector<std::uint64_t>& outputs, const std::vector<Reference>& references);

// "a", "b or c" ...
std::string join(const std::vector<std::string>& v, std::string_view sep = ", ", std::string_view last = " and ");

// The largest power-of-two product magnitude the formats can make with normal factors, and the
// smallest (with any factors); the range of exponents usable for product summands.
struct ProductRange {
  int max_exp, min_exp;
};
ProductRange product_range(const MmaConfig& cfg);

// The fraction bits kept below the largest summand, measured as MMA-Sim section III-D does for a
// fused sum: X + (-X) + 2^(e(X) - t) for t = 0, 1, ...; the result is the largest t whose small
// summand comes back. Uses one Device::mma call. nullopt when the small summand is never lost
// in the range the formats allow (an exact or non-fused sum), or when the formats cannot express
// the cases; `observations` receives what was run.
struct Calibration {
  std::optional<int> F;  // kept fraction bits
  int tested_up_to = 0;  // the largest t tried
  bool exact = false;    // every small summand came back
};
Expected<Calibration> measure_kept_bits(backends::Device& device, const MmaConfig& cfg,
                                        std::vector<audit::Observation>* observations = nullptr);

// Random inputs for the identification and the validation.
enum class Gen : std::uint8_t {
  bits,      // uniform random bit patterns (every encoding, specials included)
  normal,    // random normal values, exponents near 1, both signs, some zeros
  wide,      // random finite values over the whole range, subnormals included
  cancel,    // X and -X among random smaller summands: the kept bits and the truncation
  tiny,      // every summand near the bottom of the range: subnormals and alignment floors
  tie,       // exact sums near a rounding boundary of d
  overflow,  // summands near the top of d's range
  special,   // zeros, infinities, NaNs and extremes mixed with ordinary values
  carry,     // summands of one sign and nearly one exponent, every fraction bit random: long sums
  deep,      // tiny, from as far below d's range as products reach: where only a floor decides
  full,      // every summand just below the top of one binade, one sign: sums that need every carry
};
// The generators of every draw; `deep` and `full` are drawn where alignment floors or carry-out
// bits are left to split (the identification's challenge), and among fit's inputs (every_gen).
inline constexpr Gen all_gens[] = {Gen::bits, Gen::normal,   Gen::wide,    Gen::cancel, Gen::tiny,
                                   Gen::tie,  Gen::overflow, Gen::special, Gen::carry};
inline constexpr Gen every_gen[] = {Gen::bits,     Gen::normal,  Gen::wide,  Gen::cancel, Gen::tiny, Gen::tie,
                                    Gen::overflow, Gen::special, Gen::carry, Gen::deep,   Gen::full};
std::string_view name(Gen g);

class RandomInputs {
 public:
  RandomInputs(const MmaConfig& cfg, std::uint64_t seed);
  // One dot product's inputs into c, a[0..K), b[0..K).
  void draw(Gen g, std::uint64_t& c, std::uint64_t* a, std::uint64_t* b);
  std::uint64_t next() { return rng_(); }
  // Block scale factors for a unit that has them (none otherwise): n per operand, a few binades
  // around 1 (2^-4..2^4 in ue8m0; 16 codes either side of 1 in other scale formats).
  void draw_scales(const Format* scale, std::size_t n, DotCase& c);

 private:
  std::uint64_t random_finite(const Format& f, int lo, int hi, bool allow_sub);
  std::uint64_t normal_value(const Format& f, int spread);
  const MmaConfig* cfg_;
  std::mt19937_64 rng_;
};

}  // namespace gp::mma

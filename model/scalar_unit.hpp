// Parametric scalar unit models: what a shader ALU computes, IEEE or not.
// A ScalarUnit names an adder, a multiplier, MAD/FMA fusion, division, square root, conversion,
// subnormal and NaN policies, and its register and storage formats; the unit_* functions are pure
// (unit, operand bits) -> (result bits, flags), integer arithmetic only, like model/ops.hpp. A unit
// whose parameters are all IEEE (correctly rounded adder and multiplier, fused fma, correctly
// rounded division and square root, nothing flushed) gives exactly model/ops.hpp's results.
//
// [DGD] below is Daumas, da Graca and Defour, "Caracteristiques arithmetiques des processeurs
// graphiques", SympA 2006 (hal-00069622); "App. A" is its appendix A,
// the GPU Paranoia log of the NVIDIA 7800GTX by Hillesland and Lastra.
//
// Parameter semantics (exact definitions; the keys of a result's profile.scalar in brackets):
//
// Rounding of a unit [rounding]: a mode of model/rounding.hpp, or chop. Chop is truncation toward
// zero of the bits the unit kept; it rounds as rz does, and is a separate name because "rz" says a
// correctly rounded unit's mode while "chop" says bits beyond the unit's width were dropped first.
//
// Adder [add: rounding, guard_bits, sticky]. guard_bits null: the exact sum rounded once (IEEE).
// guard_bits = g: let L be the operand with the larger exponent (the exponent field; subnormals
// count as the smallest normal exponent) and q the weight of L's last significand bit, so that L
// is an integer number of q. The other operand is aligned to L: its bits of weight q * 2^-g and
// above are kept, the bits below are dropped, or with `sticky` ORed into one more bit of weight
// q * 2^-(g+1). The two are added or subtracted exactly in that width (carry-out included), and
// that exact register value is normalised and rounded to the format with the unit's rounding. So
// the rounding sees only the guard bits (and the sticky bit): a dropped bit never makes a result
// inexact, a tie or "above half". With p = 24, g = 2 and chop, 1.5 - 2^-i == 1.5 exactly when
// i >= 26 ([DGD] 2.3, NVIDIA); g = 1 gives i >= 25 (ATI's cascaded adder), g = 0 gives i >= 24.
// With g >= 2 and sticky the adder is correctly rounded in every mode (the guard, round and sticky
// bits of Coonen's argument). At most max_guard_bits guard bits.
//
// Multiplier [mul: rounding, truncated_columns, correction]. truncated_columns null: the exact
// product rounded once. truncated_columns = t: the operands' significands are normalised to p bits
// (integers A, B in [2^(p-1), 2^p)); partial-product bit a_i * b_j lies in column i + j (column 0
// is the product's least significant column, 2p - 2 the most). Column p - 1 is the result's LSB
// when A * B < 2^(2p-1) (no carry-out); columns p - 2, p - 3, ... are the 1st, 2nd, ... columns
// below it, fixed in the array whatever the carry-out. The array generates the partial-product
// bits of columns p - 1 - t and above ("up to the t-th column": [DGD] 2.2 finds t = 6 on NVIDIA,
// 9 on ATI) and none below; it adds the correction constant `correction` in units of its lowest
// generated column (weight 2^(p-1-t) in the array, that is 2^-t of the no-carry result's ulp), and
// that exact sum is normalised and rounded to the format with the unit's rounding. t >= p - 1
// generates every column (the correction is then in units of column 0). This is Schulte and
// Swartzlander's truncated multiplier with correction constant, cited by [DGD] 2.2. The product's
// sign is computed apart (sign-magnitude), so A*B == (-A)*(-B) == -(A*(-B)) ([DGD] 2.2).
// What [DGD] 2.2's tests see (unittests/scalar_unit_test.cpp): (2^23+1)(2i+1) gives the constant's
// value, correction * 2^-t ulp ((t, c) and (t+1, 2c) agree there); the column test (2^23+3 times
// y1 = 1, y2i = y2i-1 + 1, y2i+1 = 4 y2i-1 + 2) separates t, in pairs {2k-1, 2k}, only while the
// correction is below one unit of the lowest column; random products separate t = 3..11 at the
// G70's constant value.
//
// MAD [mad: fused] and FMA [fma: fused]. A fused MAD or FMA is a * b + c computed exactly and
// rounded once with the adder's rounding (chop: rz), as model::fma. An unfused MAD is the unit's
// multiplier, then the unit's adder. An unfused FMA (fma() of a unit that has none) is the unit's MAD.
// [fma: zero_addend] "ieee" (the default): as above. "product": an fma whose addend c is zero after
// input flushing (the fma's, or the adder's when unfused), and whose a and b are finite, returns the
// unit's product a * b (its multiplier and the multiplier's flushing, on a and b read with the
// fma's input flushing): a subnormal product survives an fma that flushes its outputs, and a zero
// product keeps its sign (fma(-1, +0, +0) = -0, IEEE +0). Any other operands: the fma as above.
// This is libclc's software fma (__clc_sw_fma), which rusticl uses on devices without subnormals.
//
// Division [div: method, rounding, max_ulps]: correctly rounded with its rounding, or x * r with
// r = 1/y correctly rounded with that rounding, then the unit's multiplier ([DGD] 1.3: "division
// seems to be the dividend times an approximation of the divisor's inverse"), or approximate. Special
// operands (NaN, infinities, zeros, after input flushing) give the IEEE results of model::div in
// every case. Square root [sqrt: rounding, max_ulps]: correctly rounded with its rounding, or
// approximate.
//
// Approximate within b ulps (division's method "approximate", or a square root's max_ulps): what a
// compiler's reciprocal or inverse-square-root sequence computes (the x/y and sqrt that OpenCL,
// Vulkan and OpenGL allow 2.5 or 3 ulp off), known only by a bound: where the correctly rounded
// operation (its rounding and flushing) gives a finite nonzero result, the result is any finite
// value within b ulps of the exact result (model/ulp_error.hpp) whose subnormals the operation's
// output flushing would keep; otherwise it is the correctly rounded result. A bound predicts no bits:
// unit_accepts checks a result against it. unit_div and unit_sqrt need bits and return a stand-in
// that keeps the bound and is not correctly rounded: an inexact correctly rounded result moved by a
// pseudo-random number of ulps (a hash of the operands), toward it until within the bound (exact
// results stay, as a reciprocal sequence's quotients of powers of two do).
//
// Subnormals [subnormals: input, output]: flush on input reads subnormal operands as zeros of the
// same sign, flush on output turns tiny results into zeros of the same sign (model/rounding.hpp's
// ftz_in and ftz_out); flush on transfer replaces subnormals by zeros of the same sign in loads and
// stores ([DGD] 2.1). NaNs: an arithmetic result with a NaN operand is the first NaN operand,
// quieted (model/rounding.hpp); `canonical` makes every NaN result the canonical NaN; transfers
// keep signalling NaNs as they are, or quiet them with `quiet_on_transfer` ([DGD] 2.1: ATI).
// Other hardware [nan: propagation, quiet, sub_flips, default]: the last NaN operand, or the one
// with the larger fraction field (x87), comes out; signalling NaNs come out unquieted; a - NaN is
// the NaN with its sign flipped (as if b's sign were flipped before the addition); invalid
// operations and canonical results give another default NaN (x86's negative quiet NaN, NVIDIA's
// all-ones pattern). Conversions propagate their operand's NaN with the same quieting.
// [nan.fma_order] An fma may take its NaN operands in an order of its own, a permutation of a, b,
// c (rusticl's and lavapipe's fma: b, a, c while their add and mul take the first): the result of an
// fma with a NaN operand is the first NaN of that order ("bac": b's NaN if b is one, else a's, else
// c's) in place of the one `propagation` picks, larger_payload included. Everything else is as for
// any NaN result: quieted unless `quiet` is false, the canonical NaN with `canonical` (the order is
// then moot), invalid raised for a signalling operand wherever it lies in the order (and for
// 0 * inf + NaN); sub_flips does not apply, an fma subtracting nothing. The order is the fma
// operation's, fused or not: an unfused fma with a NaN operand returns the fused fma's result
// (lavapipe's binary16 fma is unfused and has an order of its own); a fused MAD takes it too, an
// unfused MAD being its multiplier then its adder with their rule. Null (the default): the fma
// applies `propagation` to (a, b, c) as the other operations do; first amounts to "abc" and last
// to "cba" (fma_order_of).
//
// Register precision and range: the unit computes in `format` (its registers) and loads and stores
// `storage`; a register format wider than the storage (a Format descriptor with more exponent or
// fraction bits) models extended registers, and a narrower storage models results stored in a
// smaller format (stores round with `convert`). [DGD] 2.1 found no extended registers on the GPUs
// it tested: every built-in unit but nvidia_g70_binary16 has storage == format.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/ops.hpp"

namespace gp::model {

// The rounding a unit applies to what it kept: a mode, or chop (see above).
struct UnitRounding {
  Rounding mode = Rounding::rne;  // ignored when chop
  bool chop = false;

  static constexpr UnitRounding ieee(Rounding r) { return {r, false}; }
  static constexpr UnitRounding chopped() { return {Rounding::rz, true}; }
  // The mode the arithmetic uses.
  constexpr Rounding effective() const { return chop ? Rounding::rz : mode; }
  friend constexpr bool operator==(const UnitRounding& a, const UnitRounding& b) {
    return a.chop == b.chop && (a.chop || a.mode == b.mode);
  }
};
// "chop" or the mode's name (model::name(Rounding)); find_unit_rounding is its inverse.
std::string_view name(const UnitRounding& r);
std::optional<UnitRounding> find_unit_rounding(std::string_view name);

inline constexpr int max_guard_bits = 60;

struct AdderParams {
  UnitRounding rounding;
  std::optional<int> guard_bits;  // null: correctly rounded; else 0..max_guard_bits
  bool sticky = false;
  friend constexpr bool operator==(const AdderParams&, const AdderParams&) = default;
};

struct MultiplierParams {
  UnitRounding rounding;
  std::optional<int> truncated_columns;  // null: exact product; else columns kept below the LSB, >= 0
  std::uint64_t correction = 0;          // in units of the lowest generated column
  friend constexpr bool operator==(const MultiplierParams&, const MultiplierParams&) = default;
};

// Schulte and Swartzlander's constant for the dropped columns alone: the expected value of the
// partial-product bits below the lowest generated column (each bit 1 with probability 1/4), in
// units of that column, rounded to nearest. p = precision, t = truncated_columns.
constexpr std::uint64_t expected_dropped_correction(int p, int t) {
  const int c = p - 1 - t;  // lowest generated column; columns 0..c-1 (c < p) hold 1..c bits
  if (c <= 0) return 0;
  // sum_{k<c} (k+1) 2^k / 4 = ((c-1) 2^c + 1) / 4; over 2^c, (c-1)/4 + 2^-(c+2), whose nearest
  // integer (never a tie) is floor((c+1)/4).
  return std::uint64_t(c + 1) / 4;
}

// An error bound in ulps, in units of 2^-8 ulp so that the bounds profiles write (2.5) are exact.
struct UlpBound {
  static constexpr int frac_bits = 8;
  std::uint32_t units = 0;
  friend constexpr bool operator==(const UlpBound&, const UlpBound&) = default;
};
// The bound in ulps, for reports and profiles (exact: a binary64 holds every bound).
constexpr double ulps(const UlpBound& b) { return double(b.units) / double(1u << UlpBound::frac_bits); }
// "2.5": the bound's exact decimal.
std::string to_string(const UlpBound& b);
// The bound of a profile's number: rounded up to the grid (a bound never shrinks), nullopt below 0
// or at 2^23 ulps and above.
std::optional<UlpBound> ulp_bound(double ulps);

enum class DivMethod : std::uint8_t {
  correctly_rounded,
  reciprocal,   // x * (1/y rounded), the product by the unit's multiplier
  approximate,  // within max_ulps of the exact quotient (see above)
};
inline constexpr std::string_view div_method_names[] = {"correctly_rounded", "reciprocal", "approximate"};
std::string_view name(DivMethod m);
std::optional<DivMethod> find_div_method(std::string_view name);
struct DivParams {
  DivMethod method = DivMethod::correctly_rounded;
  UnitRounding rounding;  // of the quotient, or of the reciprocal; approximate: of its special results
  UlpBound max_error;     // approximate only
  friend constexpr bool operator==(const DivParams&, const DivParams&) = default;
};

struct SubnormalPolicy {
  bool flush_input = false;     // [subnormals.input] "flush"
  bool flush_output = false;    // [subnormals.output] "flush"
  bool flush_transfer = false;  // loads and stores
  friend constexpr bool operator==(const SubnormalPolicy&, const SubnormalPolicy&) = default;
};

// Operations whose flushing may differ from the unit's input and output flushing
// [<op>.subnormals: input, output]: rusticl's fma reads subnormal operands as zeros and keeps
// subnormal results while its add and mul keep both. `add` covers sub; an unfused fma or mad is its
// multiplier and adder, and takes their flushing.
enum class FlushOp : std::uint8_t { add, mul, div, sqrt, fma, mad, cvt };
inline constexpr std::size_t kFlushOps = 7;
inline constexpr std::string_view flush_op_names[kFlushOps] = {"add", "mul", "div", "sqrt", "fma", "mad", "cvt"};
struct OpFlush {
  bool flush_input = false;
  bool flush_output = false;
  friend constexpr bool operator==(const OpFlush&, const OpFlush&) = default;
};

// What an fma returns for a zero addend (see above) [fma.zero_addend].
enum class ZeroAddend : std::uint8_t { ieee, product };
inline constexpr std::string_view zero_addend_names[] = {"ieee", "product"};
std::string_view name(ZeroAddend z);
std::optional<ZeroAddend> find_zero_addend(std::string_view name);

struct NanPolicy {
  bool canonical = false;          // every arithmetic NaN result is the canonical NaN
  bool quiet_on_transfer = false;  // loads and stores quiet signalling NaNs
  // Arithmetic with NaN operands, unless canonical [nan: propagation, quiet, sub_flips]: which
  // NaN operand comes out, whether a signalling one comes out quiet, whether a - NaN flips its sign.
  NanPropagation propagation = NanPropagation::first;
  bool quiet = true;
  bool sub_flips = false;
  // The NaN of invalid operations, and the canonical NaN [nan.default].
  DefaultNan default_nan = DefaultNan::quiet;
  // The fma's own order of its NaN operands (see above) [nan.fma_order]; null: `propagation`.
  std::optional<FmaNanOrder> fma_order = std::nullopt;
  friend constexpr bool operator==(const NanPolicy&, const NanPolicy&) = default;
};
// The fma order a propagation rule amounts to: abc for first, cba for last, none for larger_payload.
constexpr std::optional<FmaNanOrder> fma_order_of(NanPropagation p) {
  if (p == NanPropagation::first) return FmaNanOrder::abc;
  if (p == NanPropagation::last) return FmaNanOrder::cba;
  return std::nullopt;
}
// Profile names: "first", "last", "larger_payload"; "quiet", "negative_quiet", "all_ones",
// "negative_all_ones"; "abc", "acb", "bac", "bca", "cab", "cba". The find_ functions are their inverses.
std::string_view name(NanPropagation p);
std::optional<NanPropagation> find_nan_propagation(std::string_view name);
std::string_view name(DefaultNan d);
std::optional<DefaultNan> find_default_nan(std::string_view name);
std::string_view name(FmaNanOrder o);
std::optional<FmaNanOrder> find_fma_nan_order(std::string_view name);
// "b, a, c" for bac: the order in words.
std::string words(FmaNanOrder o);

struct ScalarUnit {
  std::string_view name;            // the built-in units use their ref:<profile> names
  const Format* format = nullptr;   // registers: the format every operation computes in
  const Format* storage = nullptr;  // memory format of loads and stores; null: the same as format
  AdderParams add;
  // The adder of the first of two dependent additions issued together, where it differs from
  // `add` (ATI R520 pixel shaders, [DGD] 2.3); null: `add`. Selected by Adder::cascaded_first.
  std::optional<AdderParams> add_cascaded;
  MultiplierParams mul;
  bool mad_fused = false;
  bool fma_fused = true;
  ZeroAddend fma_zero_addend = ZeroAddend::ieee;
  DivParams div;
  UnitRounding sqrt;
  std::optional<UlpBound> sqrt_max_error;  // null: correctly rounded; else approximate (see above)
  UnitRounding convert;                    // conversions (cvt) and stores into a narrower storage format
  SubnormalPolicy subnormals;
  // Per-operation input and output flushing where an operation differs from `subnormals`.
  std::array<std::optional<OpFlush>, kFlushOps> op_flush{};
  NanPolicy nan;

  constexpr const Format& storage_format() const { return storage ? *storage : *format; }
  friend constexpr bool operator==(const ScalarUnit&, const ScalarUnit&) = default;
};

// Why a unit is malformed (no format, guard bits or truncated columns out of range), or "".
[[nodiscard]] std::string check(const ScalarUnit& u);

// The input and output flushing of an operation: its own where it has one, else the unit's.
constexpr OpFlush flushing(const ScalarUnit& u, FlushOp op) {
  if (const auto& own = u.op_flush[std::size_t(op)]) return *own;
  return {u.subnormals.flush_input, u.subnormals.flush_output};
}

// The NaN options of a policy (its arithmetic part: transfers are the unit's own).
constexpr void set_nan_options(Options& o, const NanPolicy& p) {
  o.canonical_nan = p.canonical;
  o.nan_propagation = p.propagation;
  o.nan_keep_signaling = !p.quiet;
  o.nan_sub_flips = p.sub_flips;
  o.nan_default = p.default_nan;
  o.nan_fma_order = p.fma_order;
}

// The model::Options an operation of the unit rounds with.
constexpr Options unit_options(const ScalarUnit& u, const UnitRounding& r, FlushOp op) {
  Options o;
  o.rounding = r.effective();
  o.ftz_in = flushing(u, op).flush_input;
  o.ftz_out = flushing(u, op).flush_output;
  set_nan_options(o, u.nan);
  return o;
}
// With the unit's own flushing (no operation's).
constexpr Options unit_options(const ScalarUnit& u, const UnitRounding& r) {
  Options o;
  o.rounding = r.effective();
  o.ftz_in = u.subnormals.flush_input;
  o.ftz_out = u.subnormals.flush_output;
  set_nan_options(o, u.nan);
  return o;
}

// The arithmetic blocks on their own, for hypotheses that vary one parameter: `o` gives the
// flush and NaN options, the parameters give the rounding.
Result adder_add(const Format& f, const AdderParams& p, const Options& o, std::uint64_t a, std::uint64_t b);
Result adder_sub(const Format& f, const AdderParams& p, const Options& o, std::uint64_t a, std::uint64_t b);
Result multiplier_mul(const Format& f, const MultiplierParams& p, const Options& o, std::uint64_t a, std::uint64_t b);

// Which adder an addition runs on (see ScalarUnit::add_cascaded).
enum class Adder : std::uint8_t { single, cascaded_first };

// Operations of a unit on register bits (format *u.format).
Result unit_add(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, Adder which = Adder::single);
Result unit_sub(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, Adder which = Adder::single);
Result unit_mul(const ScalarUnit& u, std::uint64_t a, std::uint64_t b);
Result unit_div(const ScalarUnit& u, std::uint64_t a, std::uint64_t b);
Result unit_sqrt(const ScalarUnit& u, std::uint64_t a);
// fma(a, b, c): fused, or the unit's MAD.
Result unit_fma(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, std::uint64_t c);
// a * b + c as the unit's MAD: fused, or multiplier then adder.
Result unit_mad(const ScalarUnit& u, std::uint64_t a, std::uint64_t b, std::uint64_t c);
// Whether the unit computes op approximately (division or square root within a bound).
bool approximate(const ScalarUnit& u, Op op);
// Whether d is a result the unit may give for op on register operands: unit_evaluate's bits, or for
// an approximate operation any result its bound allows (see above). NaNs compare by their bits.
bool unit_accepts(const ScalarUnit& u, Op op, std::span<const std::uint64_t> operands, std::uint64_t d,
                  const Format& from);
// Conversion of `bits` of format `from` to format `to` with the unit's conversion rounding and
// flushing (input flush on the source, output flush on the result).
Result unit_cvt(const ScalarUnit& u, const Format& to, const Format& from, std::uint64_t bits);
// Transfers: a load converts storage bits into a register, a store a register into storage bits.
// Equal formats copy the bits; subnormals are flushed and signalling NaNs quieted per policy,
// NaN payloads kept (left-aligned), infinities unchanged. No flags for NaNs and flushes.
Result unit_load(const ScalarUnit& u, std::uint64_t storage_bits);
Result unit_store(const ScalarUnit& u, std::uint64_t register_bits);
// model::Op by name, on register operands (operands.size() == arity(op); cvt converts from `from`
// to the unit's format).
Result unit_evaluate(const ScalarUnit& u, Op op, std::span<const std::uint64_t> operands, const Format& from);

// The unit in Paranoia's voice, one line per part: "ADDITION: chopped, 2 guard bits, no sticky bit".
std::string describe(const ScalarUnit& u);

// Built-in units. Every parameter's source is in scalar_unit.cpp, next to its value.
ScalarUnit ieee_unit(const Format& f, Rounding r = Rounding::rne);  // "ieee-<format>"
ScalarUnit nvidia_g70();                                            // "nvidia-g70": GeForce 7800GTX, binary32
ScalarUnit nvidia_g70_binary16();  // "nvidia-g70-binary16": binary16 storage, binary32 registers
ScalarUnit ati_r520();             // "ati-r520": Radeon X1800XL, binary32
ScalarUnit ati_r300();             // "ati-r300": Radeon 9700, fp24
// Every built-in unit (the IEEE ones in binary32, binary16, binary64), and lookup by name.
std::span<const ScalarUnit> builtin_units();
std::optional<ScalarUnit> find_builtin_unit(std::string_view name);

}  // namespace gp::model

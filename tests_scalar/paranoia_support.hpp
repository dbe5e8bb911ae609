// What the Paranoia probes share (Kahan's Paranoia, Karpinski's C version, and the GPU subset of
// Hillesland and Lastra whose 7800GTX log is appendix A of Daumas, da Graca, Defour 2006):
// Paranoia's named values (U1, U2, F9, B9, ...) built exactly for any format, hypotheses that are
// model units (rounding, flushing, fused or unfused fma/mad, an adder that truncates the aligned
// operand to g guard bits without a sticky bit), and a bench that evaluates a mixed table of
// expressions on the device and records every output with each hypothesis' prediction.
//
// Paranoia runs each test as a few dependent operations on the machine. Here every test isolates
// the operation it judges: its operands are built exactly on the host (as the log's "LESS MACs"
// variant does), and only where Paranoia's test is about a chain of operations (radix, digit count,
// cancellation) does the device evaluate the chain, as one expression with separate roundings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit/probe.hpp"
#include "model/ops.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar::paranoia {

using backends::Expr;
using backends::Node;
using model::Format;
using u64 = std::uint64_t;

// Whether the encoding x of f is a NaN.
inline bool is_nan(const Format& f, u64 x) { return model::is_nan(model::classify(f, x)); }

// A device batch that came back as an error; guarded() turns it into the finding of that error
// (audit::failed: `unsupported` where the device lacks something, else `error`).
struct DeviceFailure : std::runtime_error {
  explicit DeviceFailure(Error e) : std::runtime_error(e.message), error(std::move(e)) {}
  explicit DeviceFailure(const std::string& message) : DeviceFailure(Error{message}) {}
  Error error;
};
// Runs a probe body, turning DeviceFailure into audit::failed.
audit::Finding guarded(const std::function<audit::Finding()>& body);

// The formats the Paranoia probes apply to: signed, with zero and gradual underflow, and enough
// fraction bits for 1.5 - 2*U2 and (1/2 + U2) * U2 to be distinct exact values.
bool paranoid_format(const Format& f);

// n * 2^e exactly in f (a probe bug if it is not representable: std::logic_error).
u64 exact(const Format& f, std::int64_t n, int e);

// Paranoia's values for a binary format of precision p (radix 2): U2 = 2^-(p-1), the distance
// from 1 to the next larger value; U1 = 2^-p, from 1 to the next smaller; F9 = 1 - U1;
// B9 = 2 - U2 (the largest value below the radix).
struct Consts {
  explicit Consts(const Format& f);
  const Format& f;
  int P;  // fraction bits: U2 = 2^-P
  u64 zero, one, two, three, half, onehalf, U1, U2, F9, B9, max, minnorm, minsub;
  u64 v(std::int64_t n, int e) const { return exact(f, n, e); }
  u64 one_plus(std::int64_t k) const { return v((std::int64_t{1} << P) + k, -P); }               // 1 + k U2
  u64 onehalf_plus(std::int64_t k) const { return v((std::int64_t{3} << (P - 1)) + k, -P); }     // 1.5 + k U2
  u64 one_minus(std::int64_t k) const { return v((std::int64_t{1} << (P + 1)) - k, -(P + 1)); }  // 1 - k U1
  u64 two_minus(std::int64_t k) const { return v((std::int64_t{1} << (P + 1)) - k, -P); }        // 2 - k U2
  u64 neg(u64 x) const { return x ^ f.sign_mask(); }
};

// A hypothesis about the unit: a name for the reports and the model unit it stands for, whose
// predictions are the reference interpreter's (backends/reference), as every probe's are.
struct Hyp {
  std::string name;
  model::ScalarUnit unit;
};
// The usual pair in f: "ieee" (round to nearest even, gradual underflow, fused fma) and "chopped"
// (every operation rounds toward zero).
std::vector<Hyp> ieee_and_chopped(const Format& f);
// Adders with g = 1..3 guard bits and no sticky bit, chopping or rounding to nearest.
std::vector<Hyp> guard_bit_adders(const Format& f);

// Total order of non-NaN values (+0 == -0): -1, 0, 1.
int compare(const Format& f, u64 a, u64 b);
bool same_value(const Format& f, u64 a, u64 b);  // compare == 0, or both NaN
// "1.5", "-inf", "NaN", with the digits the format needs.
std::string show(const Format& f, u64 x);
// "2^-24" for a power of two, else show().
std::string show_pow2(const Format& f, u64 x);
// The value as a host double, for reports only (exact for every format of the project).
double host_value(const Format& f, u64 x);

// One evaluation: an expression, its operands, and what it is.
struct Item {
  const Expr* expr;
  std::vector<u64> x;
  std::string note;
};

// Evaluates tables of items on the device, one batch per distinct expression, and keeps track of
// which hypotheses predicted every output bit for bit (NaN outputs match any NaN prediction).
class Bench {
 public:
  Bench(backends::Device& device, const Format& f, audit::Finding& finding, std::vector<Hyp> hyps);
  // The outputs in item order; each item becomes an observation when `record` is set. Throws
  // DeviceFailure when the device returns an error.
  std::vector<u64> run(const std::vector<Item>& items, bool record = true);
  u64 run1(const Expr& e, std::vector<u64> x, std::string note);
  // The expressions of single operations in the bench's format.
  const Expr& op(Node n) const;
  // Hypotheses that predicted every output so far.
  std::vector<std::string> consistent() const;
  const std::vector<Hyp>& hyps() const { return hyps_; }
  u64 predict(const std::string& hyp, const Item& item) const;
  const Format& format() const { return f_; }

 private:
  // h's outputs for the items, by the reference interpreter.
  static std::vector<u64> predict(const Hyp& h, const std::vector<Item>& items);

  backends::Device& device_;
  const Format& f_;
  audit::Finding& finding_;
  std::vector<Hyp> hyps_;
  std::vector<bool> alive_;
  std::vector<Expr> ops_;  // indexed by Node
};

// A Paranoia check: what it is, whether it passed.
struct Check {
  std::string what;
  bool pass;
};
nlohmann::json checks_json(const std::vector<Check>& checks);
bool all_pass(const std::vector<Check>& checks);
// "a; b; c" of the failed checks' descriptions.
std::string failures(const std::vector<Check>& checks);

}  // namespace gp::scalar::paranoia

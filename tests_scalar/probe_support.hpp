// What scalar probes share: building values of a format exactly, evaluating an expression on a
// device over a case table, and comparing outputs with the predictions of hypotheses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "audit/probe.hpp"
#include "model/ops.hpp"

namespace gp::scalar {

using backends::Expr;
using backends::Node;
using model::Format;

// (-1)^neg * sig * 2^exp in f, rounded to nearest even if it is not exact (probes build exact values).
std::uint64_t value(const Format& f, bool neg, int exp, std::uint64_t sig);
inline std::uint64_t pow2(const Format& f, int e, bool neg = false) { return value(f, neg, e, 1); }
inline std::uint64_t one(const Format& f) { return pow2(f, 0); }
// 2^-(precision - 1): the distance from 1 to the next larger value (Paranoia's U2 is ulp(1)).
inline int ulp_exp(const Format& f) { return -f.man_bits; }
std::uint64_t negate(const Format& f, std::uint64_t x);
std::uint64_t largest(const Format& f, bool neg = false);
std::uint64_t smallest_normal(const Format& f, bool neg = false);
std::uint64_t smallest_subnormal(const Format& f, bool neg = false);

// One row of a case table: the operands and what each hypothesis predicts.
struct Case {
  std::vector<std::uint64_t> operands;
  std::string note;
};

// Evaluates `expr` on the device for every case. Errors come back as values.
Expected<std::vector<std::uint64_t>> run_cases(backends::Device& device, const Expr& expr,
                                               const std::vector<Case>& cases);

// A hypothesis: a name and the output it predicts for a case.
struct Hypothesis {
  std::string name;
  std::function<std::uint64_t(const Case&)> predict;
};

// Runs the cases and keeps the hypotheses that predict every output bit for bit. Fills the finding's
// observations (inputs, output, every hypothesis' prediction). NaN outputs match any NaN prediction
// of the same format when `nan_equivalent` is set.
struct Selection {
  std::vector<std::string> consistent;
  std::vector<std::uint64_t> outputs;
};
Expected<Selection> select(backends::Device& device, const Expr& expr, const std::vector<Case>& cases,
                           const std::vector<Hypothesis>& hypotheses, audit::Finding& finding,
                           bool nan_equivalent = false);

// Whether the device computes in f: otherwise the probe is unsupported with this reason.
bool computes_in(const backends::Device& device, const Format& f);
audit::Finding no_format(const Format& f);

// "ADDITION", "MULTIPLICATION", ... for verdicts.
std::string_view shout(Node op);

// "a, b, c".
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace gp::scalar

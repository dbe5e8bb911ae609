#include "cli/model_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <array>

#include "backends/expected.hpp"
#include "cli/batch.hpp"
#include "cli/exit_codes.hpp"
#include "input/input_error.hpp"
#include "input/limits.hpp"
#include "cli/model_dot.hpp"
#include "model/ops.hpp"

namespace gp::cli {

namespace {

template <class T>
std::string names_of(const T& list) {
  std::string s;
  for (const auto& x : list) s += (s.empty() ? "" : " ") + std::string(model::name(x));
  return s;
}

// What `model scalar` evaluates: the operation, its formats and options.
struct ScalarRequest {
  const model::Format* f = nullptr;
  const model::Format* from = nullptr;  // cvt's source format; f for the other operations
  model::Op op{};
  model::Options o;
};

// The request the arguments make, or the text that says why they make none.
Expected<ScalarRequest> scalar_request(const ScalarArgs& a) {
  const auto fmt_ = model::find_format(a.format);
  if (!fmt_) return Error{input::error_line(fmt::format("unknown format '{}' (known: {})", a.format, format_names()))};
  const auto op = model::find_op(a.op);
  if (!op) return Error{input::error_line(fmt::format("unknown op '{}' (known: {})", a.op, names_of(model::all_ops)))};
  const auto rounding = model::find_rounding(a.rounding);
  if (!rounding)
    return Error{input::error_line(
        fmt::format("unknown rounding '{}' (known: {})", a.rounding, names_of(model::all_roundings)))};
  ScalarRequest r;
  r.f = *fmt_;
  r.from = r.f;
  r.op = *op;
  if (*op == model::Op::cvt) {
    const auto src = model::find_format(a.from);
    if (!src)
      return Error{input::error_line(
          fmt::format("cvt needs --from with a known format, got '{}' (known: {})", a.from, format_names()))};
    r.from = *src;
  } else if (!a.from.empty()) {
    return Error{"gpuparanoia: --from applies to --op cvt only\n"};
  }
  r.o.rounding = *rounding;
  r.o.saturate = a.saturate;
  r.o.canonical_nan = a.canonical_nan;
  for (const std::string& x : a.ftz) {
    if (x == "in") {
      r.o.ftz_in = true;
    } else if (x == "out") {
      r.o.ftz_out = true;
    } else {
      return Error{input::error_line(fmt::format("--ftz takes in, out or in,out, got '{}'", x))};
    }
  }
  return r;
}

// One result a line of operands, in hex (with the flags where asked), evaluated in batches of lines
// (the model dispatches once per batch) and written in blocks.
int evaluate_scalar_lines(const ScalarRequest& q, bool flags, std::istream& in, std::ostream& out, std::ostream& err) {
  constexpr std::size_t kBatchLines = 4096;
  const model::Format& f = *q.f;
  const int arity = model::arity(q.op);
  const std::array<const model::Format*, 1> widths = {q.from};
  std::vector<std::uint64_t> operands, batch;  // one line's operands; the lines' not yet evaluated
  std::vector<model::Result> results;
  std::string line, buffer;
  input::InputError bad{input::kStdinName, 0, "", ""};
  long line_no = 0;
  const auto evaluate_batch = [&] {
    results.resize(batch.size() / std::size_t(arity));
    model::evaluate(q.op, f, q.o, batch, results, *q.from);
    batch.clear();
    for (const model::Result& r : results) {
      buffer += format_hex(r.bits, f.storage_bits);
      if (flags) buffer += " " + format_hex(r.flags, 8);
      buffer += '\n';
    }
    if (buffer.size() > (1 << 16)) {
      out << buffer;
      buffer.clear();
    }
  };
  // Results before a bad line are written: the error's line number says how many there are.
  const auto reject = [&] {
    evaluate_batch();
    out << buffer;
    out.flush();
    err << input::error_line(bad.text());
    return kExitBadInput;
  };
  for (LineRead got; (got = read_line(in, line)) != LineRead::end;) {
    ++line_no;
    if (got == LineRead::too_long) {
      bad.line = line_no;
      bad.field.clear();
      bad.what = fmt::format("longer than {} bytes", input::kMaxLineBytes);
      return reject();
    }
    if (!parse_hex_line(line, line_no, widths, std::size_t(arity), operands, bad)) return reject();
    batch.insert(batch.end(), operands.begin(), operands.end());
    if (batch.size() == kBatchLines * std::size_t(arity)) evaluate_batch();
  }
  evaluate_batch();
  out << buffer;
  out.flush();
  return kExitOk;
}

}  // namespace

int run_model_scalar(const ScalarArgs& a, std::istream& in, std::ostream& out, std::ostream& err) {
  const auto request = scalar_request(a);
  if (!request) {
    err << request.error().message;
    return kExitUsage;
  }
  return evaluate_scalar_lines(*request, a.flags, in, out, err);
}

void add_model_commands(CLI::App& app, int& exit_code) {
  CLI::App* model = app.add_subcommand("model", "Evaluate the reference model on batches read from stdin");
  model->require_subcommand(1);
  auto args = std::make_shared<ScalarArgs>();
  CLI::App* scalar = model->add_subcommand(
      "scalar", "One correctly rounded operation per line of hex operands: results in hex, one per line");
  scalar->add_option("--format", args->format, "Format of the operation and its result")->required();
  scalar->add_option("--op", args->op, "add sub mul div sqrt fma cvt")->required();
  scalar->add_option("--rounding", args->rounding, "rne rna rnz rnu rnd rno rz ru rd ra ro")->capture_default_str();
  scalar->add_option("--ftz", args->ftz, "Flush subnormals to zero: in, out or in,out")->delimiter(',');
  scalar->add_option("--from", args->from, "Source format of cvt");
  scalar->add_flag("--saturate", args->saturate, "Overflow gives the largest finite value");
  scalar->add_flag("--canonical-nan", args->canonical_nan, "Every NaN result is the canonical NaN");
  scalar->add_flag("--flags", args->flags,
                   "Append the IEEE flags in hex (1 inexact, 2 underflow, 4 overflow, 8 divbyzero, 10 invalid)");
  scalar->callback([args, &exit_code] {
    if (const auto why = stdin_unreadable()) {
      std::cerr << *why;
      exit_code = kExitBadInput;
      return;
    }
    exit_code = run_model_scalar(*args, std::cin, std::cout, std::cerr);
  });
  add_model_dot_command(*model, exit_code);
}

}  // namespace gp::cli

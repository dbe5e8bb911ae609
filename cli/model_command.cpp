#include "cli/model_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <array>

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

}  // namespace

int run_model_scalar(const ScalarArgs& a, std::istream& in, std::ostream& out, std::ostream& err) {
  const auto fmt_ = model::find_format(a.format);
  if (!fmt_) {
    err << input::error_line(fmt::format("unknown format '{}' (known: {})", a.format, format_names()));
    return kExitUsage;
  }
  const auto op = model::find_op(a.op);
  if (!op) {
    err << input::error_line(fmt::format("unknown op '{}' (known: {})", a.op, names_of(model::all_ops)));
    return kExitUsage;
  }
  const auto rounding = model::find_rounding(a.rounding);
  if (!rounding) {
    err << input::error_line(
        fmt::format("unknown rounding '{}' (known: {})", a.rounding, names_of(model::all_roundings)));
    return kExitUsage;
  }
  const model::Format& f = **fmt_;
  const model::Format* from = &f;
  if (*op == model::Op::cvt) {
    const auto src = model::find_format(a.from);
    if (!src) {
      err << input::error_line(
          fmt::format("cvt needs --from with a known format, got '{}' (known: {})", a.from, format_names()));
      return kExitUsage;
    }
    from = *src;
  } else if (!a.from.empty()) {
    err << "gpuparanoia: --from applies to --op cvt only\n";
    return kExitUsage;
  }
  model::Options o;
  o.rounding = *rounding;
  o.saturate = a.saturate;
  o.canonical_nan = a.canonical_nan;
  for (const std::string& x : a.ftz) {
    if (x == "in") {
      o.ftz_in = true;
    } else if (x == "out") {
      o.ftz_out = true;
    } else {
      err << input::error_line(fmt::format("--ftz takes in, out or in,out, got '{}'", x));
      return kExitUsage;
    }
  }

  const int arity = model::arity(*op);
  const std::array<const model::Format*, 1> widths = {from};
  std::vector<std::uint64_t> operands;
  std::string line, buffer;
  input::InputError bad{input::kStdinName, 0, "", ""};
  long line_no = 0;
  // Results before a bad line are written: the error's line number says how many there are.
  const auto reject = [&] {
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
    const model::Result r = model::evaluate(*op, f, o, operands, *from);
    buffer += format_hex(r.bits, f.storage_bits);
    if (a.flags) buffer += " " + format_hex(r.flags, 8);
    buffer += '\n';
    if (buffer.size() > (1 << 16)) {
      out << buffer;
      buffer.clear();
    }
  }
  out << buffer;
  out.flush();
  return kExitOk;
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

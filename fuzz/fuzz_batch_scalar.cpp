// `model scalar` on arbitrary stdin: the first byte picks the format and operation, the rest is
// the batch. Every line is answered, or the first bad one is named with exit 3.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/exit_codes.hpp"
#include "cli/model_command.hpp"
#include "fuzz/fuzz_check.hpp"
#include "model/format.hpp"
#include "model/ops.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gp;
  if (size == 0) return 0;
  const auto formats = model::all_formats();
  gp::cli::ScalarArgs args;
  args.format = std::string(formats[data[0] % formats.size()]->name);
  const model::Op op = model::all_ops[(data[0] / formats.size()) % std::size(model::all_ops)];
  args.op = std::string(model::name(op));
  if (op == model::Op::cvt) args.from = std::string(formats[(data[0] >> 4) % formats.size()]->name);
  args.flags = (data[0] & 0x80) != 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::istringstream in(text);
  std::ostringstream out, err;
  const int rc = cli::run_model_scalar(args, in, out, err);
  if (rc == cli::kExitBadInput) {
    fuzz::require_printed_line(err.str(), "<stdin>:");
  } else {
    fuzz::require(rc == cli::kExitOk && err.str().empty(), "exit 0 without a message", err.str());
  }
  return 0;
}

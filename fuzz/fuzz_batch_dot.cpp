// `model dot` on arbitrary stdin: the first byte picks one of a few configurations (an instruction,
// block-scaled formats, the algorithm form that takes K from each line, a summation tree), the rest
// is the batch. Every line is answered, or the first bad one is named with exit 3.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/exit_codes.hpp"
#include "cli/model_dot.hpp"
#include "fuzz/fuzz_check.hpp"

namespace {

gp::cli::DotArgs configuration(std::uint8_t pick) {
  gp::cli::DotArgs a;
  a.threads = 1;
  const auto algorithm = [&](const char* alg, const char* ab, const char* cd) {
    a.algorithm = alg;
    a.a_format = a.b_format = ab;
    a.c_format = a.d_format = cd;
  };
  switch (pick % 6) {
    case 0: a.instruction = "volta:HMMA.884.F32.F32"; break;
    case 1: a.instruction = "rtx-blackwell:OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X"; break;
    case 2: algorithm("fda", "binary16", "binary32"); break;
    case 3:
      algorithm("gdfs", "e2m1", "binary32");
      a.scale_format = "ue8m0";
      break;
    case 4:
      algorithm("cofdrda", "bfloat16", "binary32");
      a.block = 4;
      break;
    default:
      algorithm("tree", "binary16", "binary16");
      a.tree = "((p0+p1)@binary32:rz+p2)+c";
      break;
  }
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gp;
  if (size == 0) return 0;
  const cli::DotArgs args = configuration(data[0]);
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  std::ostringstream out, err;
  const int rc = cli::run_model_dot(args, in, out, err);
  if (rc == cli::kExitBadInput) {
    fuzz::require_printed_line(err.str(), "<stdin>:");
  } else {
    fuzz::require(rc == cli::kExitOk && err.str().empty(), "exit 0 without a message", err.str());
  }
  return 0;
}

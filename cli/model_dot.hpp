// `gpuparanoia model dot`: the MMA model as a batch filter (README, Command line).
//
//   gpuparanoia model dot (--instruction ARCH:NAME | --algorithm A [--F n] [--block n] [--group n]
//                          --a-format F --b-format F --c-format F --d-format F)
//   fused algorithms: [--out-rounding R] [--out-fraction-bits n] [--align-floor n|none]
//                     [--nan nvidia|format] [--round-down-alignment true|false]
//   --algorithm tree --tree "((p0+p1)+p2)+c" [--sums F] [--products F|exact] [--rounding R]
//                    [--flush inputs,c,sums]   a summation tree (model/summation_tree.hpp)
//
// Reads lines "c a0..aK-1 b0..bK-1" of raw bit patterns in hex (no 0x), writes d in hex of d's
// storage width, one per line. With --instruction, K is the instruction's; with --algorithm, each
// line's field count gives it ((fields - 1) / 2). Instructions with block scale factors (MX,
// NVFP4) take the scale factors of a, then those of b, after the b fields: K/S of each.
// The options are the parameters of profiles and `gpuparanoia fit` (`out_rounding` is
// --out-rounding). Extensions beyond the contract: --scale-format/--scale-block for the --algorithm form,
// --threads, and --list (every instruction with its shape, formats and algorithm).
#pragma once

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/dot_parameters.hpp"
#include "model/mma_instructions.hpp"

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
}

namespace gp::cli {

struct DotArgs {
  std::string instruction;
  std::string algorithm;
  std::optional<int> F, block, group, scale_block, out_fraction_bits, carry_bits;
  std::string out_rounding, align_floor, nan, round_down_alignment, flush_inputs;  // the fused algorithms
  std::string a_format, b_format, c_format, d_format, scale_format;
  std::string tree, sums, products, rounding;  // the tree algorithm
  std::vector<std::string> flush;
  unsigned threads = 0;  // 0: every core
  bool list = false;
};

// The --algorithm form: its formats and parameters (model/dot_parameters.hpp), whose defaults
// depend on K (blocks of cofda, the tree's K).
struct DotAlgorithmForm {
  model::MmaAlgorithm algorithm = model::MmaAlgorithm::fda;
  const model::Format *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  model::DotParameters parameters;
  const model::Format* scale = nullptr;
  int scale_block = 0;
  int tree_k = 0;  // the tree algorithm's K, 0 for the others

  model::DotConfigOrError config(int k) const {
    return model::dot_config_from_parameters(algorithm, *a, *b, *c, *d, k, parameters,
                                             model::ParameterSpelling::option);
  }
};

// The options that state a unit (--instruction, or --algorithm with its formats and parameters),
// for `model dot` and the commands that take a unit as it does (`error`).
void add_dot_unit_options(CLI::App& cmd, DotArgs& args);
// The unit of the --instruction form, or of the --algorithm form (checked for a representative
// K); the exit code (kExitOk: resolved), one error line on `err` otherwise.
int resolve_instruction(const DotArgs& args, const model::MmaInstruction*& ins, std::ostream& err);
int resolve_algorithm(const DotArgs& args, DotAlgorithmForm& form, std::ostream& err);

// Registers `dot` under the `model` command.
void add_model_dot_command(CLI::App& model, int& exit_code);

// Evaluates the batch on `in`, writing results to `out` and one error line to `err`.
// Returns the process exit code (cli/exit_codes.hpp): kExitOk, kExitUsage for bad options,
// kExitBadInput for a bad line (the results before it are written).
int run_model_dot(const DotArgs& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace gp::cli

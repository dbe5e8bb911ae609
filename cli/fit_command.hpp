// `gpuparanoia fit`: the model's algorithms and parameters that reproduce dot products captured on
// a matrix unit, grouped into equivalence classes, and inputs that split the classes left
// (README "Fit a model to your captures").
//
//   gpuparanoia fit [--config MxNxK:a,b,c,d | --a-format F --b-format F --c-format F --d-format F]
//                   [--scale-format ue8m0|ue4m3 [--scale-block n]] [--json FILE] [--discriminate N]
//                   [--max-seconds S] CAPTURES...
//
// A capture line is a `model dot` input line followed by the unit's output: "c a0..aK-1 b0..bK-1
// [scale factors of a, of b] d", hex of each format's storage width. Blank lines and lines starting
// with '#' are skipped; "-" reads standard input. K is --config's, else the first line's.
//
// The candidates are tests_mma/identify/candidates.hpp's (the identification's): every algorithm of the
// model with every parameter free, and summation trees of a bounded family. Candidates that
// reproduce every captured bit are grouped into classes by their outputs on the captured lines and
// on random inputs of every generator drawn to separate them: two candidates in one class give the
// same outputs on every input tried, two classes differ on an input `--discriminate` can write.
//
//   gpuparanoia captures convert --a FILE --b FILE [--c FILE] --d FILE (--config ... | formats)
//
// converts the layout of the MATLAB tensor-core models' model_validation folders (Khattak and
// Mikaitis; tests_mma/golden/nvidia-tensor-cores/README.md) into capture lines on standard output,
// and `--to-matlab DIR` converts capture lines on standard input back into that layout.
#pragma once

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
}

namespace gp::cli {

// The unit's formats: --config or the four format options, and scale factors.
struct ShapeArgs {
  std::string config, a_format, b_format, c_format, d_format, scale_format;
  std::optional<int> scale_block;
};

struct FitArgs {
  ShapeArgs shape;
  std::vector<std::string> captures;
  std::string json;
  std::optional<int> discriminate;
  double max_seconds = 0;  // 0: no limit
};

struct ConvertArgs {
  ShapeArgs shape;
  std::string a, b, c, d, to_matlab;
};

// Registers `fit` and `captures convert`.
void add_fit_commands(CLI::App& app, int& exit_code);

// The commands; each returns the process exit code (cli/exit_codes.hpp). Reports go to `out`
// (`err` with --discriminate, whose lines take `out`), errors to `err` as one line.
int run_fit(const FitArgs& args, std::ostream& out, std::ostream& err);
int run_convert(const ConvertArgs& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace gp::cli

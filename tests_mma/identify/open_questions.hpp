// Questions the papers leave open, as runnable input sets (tests_mma/questions/, README there):
// each names hypotheses, models of one unit that published measurements disagree on, and the
// inputs on which their outputs differ, with every hypothesis's prediction. An owner of the hardware
// runs the inputs and compares (or appends the outputs and runs `gpuparanoia fit`); on a device that
// gpuparanoia drives, the identification decides them anyway, as every hypothesis is one of its
// candidates.
#pragma once

#include <string>
#include <vector>

#include "tests_mma/support.hpp"

namespace gp::mma {

struct Hypothesis {
  std::string name;  // "F = 35 (MMA-Sim)"
  DotConfig config;
};

struct OpenQuestion {
  std::string id;  // the files' stem: tests_mma/questions/<id>.in, <id>.out
  std::string title;
  std::string source;
  MmaConfig cfg;  // formats and K
  std::vector<Hypothesis> hypotheses;
  std::vector<DotCase> inputs;  // drawn at a fixed seed; each splits at least two hypotheses
};

// The questions, their inputs drawn (deterministic: the committed files are this list).
const std::vector<OpenQuestion>& open_questions();

// The files' text: input lines as `model dot` reads them (scale factors after b); one line per
// input of every hypothesis's output, in hypothesis order, after a '#' header naming them.
std::string inputs_text(const OpenQuestion& q);
std::string predictions_text(const OpenQuestion& q);

}  // namespace gp::mma

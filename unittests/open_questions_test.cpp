// The open questions' input sets (tests_mma/questions/): the committed files are what the code
// draws, every input splits at least two hypotheses, and the program's own `model dot` gives the
// predictions of the hypotheses that are rows of the instruction table.
// GPUPARANOIA_WRITE_QUESTIONS=1 writes the files instead of comparing them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests_mma/identify/open_questions.hpp"

namespace gp::mma {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path dir() { return fs::path(GPUPARANOIA_QUESTIONS_DIR); }

TEST(OpenQuestions, CommittedFilesAreTheDrawnInputsAndPredictions) {
  const bool write = std::getenv("GPUPARANOIA_WRITE_QUESTIONS") != nullptr;
  for (const OpenQuestion& q : open_questions()) {
    const fs::path in = dir() / (q.id + ".in"), out = dir() / (q.id + ".out");
    if (write) {
      std::ofstream(in, std::ios::binary) << inputs_text(q);
      std::ofstream(out, std::ios::binary) << predictions_text(q);
    }
    EXPECT_EQ(slurp(in), inputs_text(q)) << in << " (GPUPARANOIA_WRITE_QUESTIONS=1 rewrites it)";
    EXPECT_EQ(slurp(out), predictions_text(q)) << out;
  }
}

TEST(OpenQuestions, EveryInputSplitsTwoHypotheses) {
  for (const OpenQuestion& q : open_questions()) {
    ASSERT_GE(q.hypotheses.size(), 2u) << q.id;
    EXPECT_GE(q.inputs.size(), 8u) << q.id;
    std::set<std::size_t> told_apart;  // hypotheses some input separates from the first
    for (const DotCase& x : q.inputs) {
      std::vector<std::uint64_t> p;
      for (const Hypothesis& h : q.hypotheses) p.push_back(predict(model::Dot(h.config), x));
      EXPECT_GT(std::set<std::uint64_t>(p.begin(), p.end()).size(), 1u) << q.id;
      for (std::size_t i = 1; i < p.size(); ++i)
        if (p[i] != p[0]) told_apart.insert(i);
    }
    EXPECT_EQ(told_apart.size(), q.hypotheses.size() - 1) << q.id << ": a hypothesis no input separates";
  }
}

#ifdef GPUPARANOIA_BINARY
TEST(OpenQuestions, ModelDotGivesTheTableRowsPredictions) {
  const OpenQuestion& q = open_questions().front();  // Volta and Turing: two rows of the table
  const fs::path got = fs::temp_directory_path() / fmt::format("gp_questions_{}.txt", ::getpid());
  std::vector<std::string> columns[2];
  for (int h = 0; h < 2; ++h) {
    const std::string row = q.hypotheses[std::size_t(h)].name.substr(0, q.hypotheses[std::size_t(h)].name.find(' '));
    const std::string cmd = fmt::format("'{}' model dot --instruction {} < '{}' > '{}'", GPUPARANOIA_BINARY, row,
                                        (dir() / (q.id + ".in")).string(), got.string());
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::istringstream lines(slurp(got));
    for (std::string l; std::getline(lines, l);) columns[h].push_back(l);
  }
  std::istringstream table(slurp(dir() / (q.id + ".out")));
  std::string line;
  std::getline(table, line);  // the header
  for (std::size_t i = 0; std::getline(table, line); ++i) {
    ASSERT_LT(i, columns[0].size());
    EXPECT_EQ(line, columns[0][i] + " " + columns[1][i]);
  }
}
#endif

}  // namespace
}  // namespace gp::mma

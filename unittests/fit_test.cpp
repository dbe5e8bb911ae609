// `gpuparanoia fit` and `captures convert` (cli/fit_command.hpp): blind recovery of the instruction
// table's models from lines they generate, every captured hardware set, the `model dot` options
// of a fit checked by the program itself, discriminating inputs that split classes, the MATLAB
// layout both ways, and the errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/reference/profile.hpp"
#include "cli/batch.hpp"
#include "cli/exit_codes.hpp"
#include "cli/fit_command.hpp"
#include "model/mma_instructions.hpp"
#include "tests_mma/candidates.hpp"
#include "tests_mma/support.hpp"
#include "unittests/golden_sets.hpp"

#ifndef GPUPARANOIA_GOLDEN_DIR
#error "GPUPARANOIA_GOLDEN_DIR must name tests_mma/golden"
#endif

namespace gp::cli {
namespace {

namespace fs = std::filesystem;
using model::DotConfig;
using nlohmann::json;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / fmt::format("gp_fit_test_{}", ::getpid());
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

mma::MmaConfig config_of(const model::MmaInstruction& ins) {
  mma::MmaConfig c;
  c.m = c.n = 1;
  c.k = ins.k;
  c.a = ins.config.a;
  c.b = ins.config.b;
  c.c = ins.config.c;
  c.d = ins.config.d;
  return c;
}

ShapeArgs config_text(const mma::MmaConfig& c) {
  ShapeArgs s;
  s.config = fmt::format("1x1x{}:{},{},{},{}", c.k, c.a->name, c.b->name, c.c->name, c.d->name);
  return s;
}

// The formats alone: K comes from the lines.
ShapeArgs formats_of(const mma::MmaConfig& c) {
  ShapeArgs s;
  s.a_format = c.a->name;
  s.b_format = c.b->name;
  s.c_format = c.c->name;
  s.d_format = c.d->name;
  return s;
}

// `n` random inputs of every generator (subnormal-heavy, cancellation-heavy, ties, specials ...),
// with scale factors near 1 where the unit has them.
std::vector<mma::DotCase> draw(const mma::MmaConfig& cfg, const DotConfig& unit, int per_gen, std::uint64_t seed) {
  mma::RandomInputs gen(cfg, seed);
  std::vector<mma::DotCase> v = mma::draw_inputs(gen, cfg.k, per_gen, "");
  if (unit.scale)
    for (mma::DotCase& x : v)
      for (auto* s : {&x.sa, &x.sb}) {
        s->resize(std::size_t(model::scale_count(unit, cfg.k)));
        for (auto& w : *s) w = unit.scale == &model::ue8m0 ? 123 + gen.next() % 9 : 0x30 + gen.next() % 16;
      }
  return v;
}

std::string line_of(const mma::MmaConfig& cfg, const DotConfig& unit, const mma::DotCase& x) {
  std::string s = format_hex(x.c, cfg.c->storage_bits);
  for (auto v : x.a) s += " " + format_hex(v, cfg.a->storage_bits);
  for (auto v : x.b) s += " " + format_hex(v, cfg.b->storage_bits);
  for (const auto* w : {&x.sa, &x.sb})
    for (auto v : *w) s += " " + format_hex(v, unit.scale->storage_bits);
  return s;
}

// Capture lines of the unit on the inputs.
std::string captures(const mma::MmaConfig& cfg, const DotConfig& unit, const std::vector<mma::DotCase>& inputs) {
  const model::Dot dot(unit);
  std::string s;
  for (const mma::DotCase& x : inputs) s += line_of(cfg, unit, x) + " " + format_hex(mma::predict(dot, x), cfg.d->storage_bits) + "\n";
  return s;
}

struct Fit {
  int code;
  json doc;
  std::string out, err;
};

Fit fit(const ShapeArgs& shape, const DotConfig* scaled, const std::vector<std::string>& files,
        std::optional<int> discriminate = std::nullopt) {
  FitArgs a;
  a.shape = shape;
  if (scaled && scaled->scale) {
    a.shape.scale_format = std::string(scaled->scale->name);
    a.shape.scale_block = scaled->scale_block;
  }
  a.captures = files;
  a.json = (temp_dir() / "fit.json").string();
  a.discriminate = discriminate;
  fs::remove(a.json);
  std::ostringstream out, err;
  Fit f{run_fit(a, out, err), json(), out.str(), err.str()};
  if (fs::exists(a.json)) f.doc = json::parse(slurp(a.json));
  return f;
}

// The model of a fit's candidate (its parameters, as a profile holds them).
DotConfig model_of(const mma::MmaConfig& cfg, const DotConfig* scaled, const json& candidate) {
  auto c = backends::config_from_entry(cfg, candidate);
  EXPECT_TRUE(c) << candidate.dump();
  DotConfig d = c ? *c : DotConfig{};
  if (scaled && scaled->scale) {
    d.scale = scaled->scale;
    d.scale_block = scaled->scale_block;
  }
  return d;
}

// Whether two models give the same outputs on fresh inputs of every generator.
bool same_behaviour(const mma::MmaConfig& cfg, const DotConfig& x, const DotConfig& y, std::string* first = nullptr) {
  const model::Dot dx(x), dy(y);
  for (const mma::DotCase& in : draw(cfg, x, 250, 0xC0FFEE)) {
    const auto px = mma::predict(dx, in), py = mma::predict(dy, in);
    if (!mma::agrees(x, px, py) && !mma::agrees(y, py, px)) {
      if (first) *first = fmt::format("{}: {:x} vs {:x}", line_of(cfg, x, in), px, py);
      return false;
    }
  }
  return true;
}

// Blind: lines generated by an instruction's model, fitted without its name. Some class that
// reproduces every line must be the instruction's behaviour.
void expect_recovers(const model::MmaInstruction& ins) {
  const mma::MmaConfig cfg = config_of(ins);
  const fs::path file = temp_dir() / "lines.txt";
  {
    std::ofstream o(file);
    o << captures(cfg, ins.config, draw(cfg, ins.config, 556, 0x5EED ^ std::hash<std::string>{}(ins.id())));
  }
  const Fit f = fit(config_text(cfg), &ins.config, {file.string()});
  ASSERT_EQ(f.code, kExitOk) << ins.id() << "\n" << f.out << f.err;
  EXPECT_EQ(f.doc["lines"], 5004);
  EXPECT_TRUE(f.doc["complete"].get<bool>());
  std::string why;
  bool found = false;
  for (const json& c : f.doc["candidates"]) {
    EXPECT_EQ(c["mismatches"], 0);
    found = found || same_behaviour(cfg, model_of(cfg, &ins.config, c), ins.config, &why);
  }
  EXPECT_TRUE(found) << ins.id() << ": no class behaves as the instruction (last difference " << why << ")\n" << f.out;
}

// One instruction of each kind by default (every algorithm, K, output and scale of the table, on
// every architecture); every one in the long build.
std::vector<const model::MmaInstruction*> instructions_to_fit() {
  std::vector<const model::MmaInstruction*> v;
  std::set<std::string> kinds;
  for (const model::MmaInstruction& i : model::all_mma_instructions()) {
#ifdef GPUPARANOIA_FIT_LONG
    const std::string kind = i.id();
#else
    const DotConfig& c = i.config;
    const std::string kind = fmt::format("{} {} {} {} {} {} {} {}", i.arch, model::name(c.algorithm), i.k, c.F, c.block,
                                         c.d->name, c.scale ? c.scale->name : "-", c.a == c.b);
#endif
    if (kinds.insert(kind).second) v.push_back(&i);
  }
  return v;
}

class FitBlind : public ::testing::TestWithParam<const model::MmaInstruction*> {};

TEST_P(FitBlind, RecoversTheInstruction) { expect_recovers(*GetParam()); }

INSTANTIATE_TEST_SUITE_P(Table, FitBlind, ::testing::ValuesIn(instructions_to_fit()),
                         [](const ::testing::TestParamInfo<const model::MmaInstruction*>& p) {
                           std::string s = p.param->id();
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

// ---------------------------------------------------------------------------------------------
// The captured hardware sets (tests_mma/golden/nvidia-tensor-cores), converted from their layout.

fs::path golden(const GoldenSet& s, const std::string& file) {
  return fs::path(GPUPARANOIA_GOLDEN_DIR) / "nvidia-tensor-cores" / s.gpu / s.input / file;
}

ConvertArgs convert_args(const GoldenSet& s, const ShapeArgs& shape) {
  ConvertArgs a;
  a.shape = shape;
  const std::string tag = std::string(s.gpu) + "_" + s.input;
  a.a = golden(s, "a_" + tag + ".txt").string();
  a.b = golden(s, "b_" + tag + ".txt").string();
  if (!s.c_is_zero) a.c = golden(s, std::string("c_") + s.gpu + "_fp32.txt").string();
  a.d = golden(s, std::string("d_") + s.gpu + "_" + s.output + ".txt").string();
  return a;
}

class FitGolden : public ::testing::TestWithParam<GoldenSet> {};

TEST_P(FitGolden, ReproducesEveryLineAndTheTablesModelIsAClass) {
  const GoldenSet& s = GetParam();
  const model::MmaInstruction* ins = model::find_mma_instruction(s.instruction);
  ASSERT_NE(ins, nullptr);
  mma::MmaConfig cfg = config_of(*ins);
  std::istringstream none;
  std::ostringstream lines, err;
  ASSERT_EQ(run_convert(convert_args(s, formats_of(cfg)), none, lines, err), kExitOk) << err.str();
  const fs::path file = temp_dir() / "golden.txt";
  std::ofstream(file) << lines.str();
  // The captures' K (WMMA tiles of the instruction's shape or smaller; golden README).
  const std::string first = lines.str().substr(0, lines.str().find('\n'));
  cfg.k = int(std::count(first.begin(), first.end(), ' ') - 1) / 2;
  const Fit f = fit(formats_of(cfg), nullptr, {file.string()});
  ASSERT_EQ(f.code, kExitOk) << f.out << f.err;
  EXPECT_EQ(f.doc["lines"], 5000);
  bool found = false;
  for (const json& c : f.doc["candidates"]) found = found || same_behaviour(cfg, model_of(cfg, nullptr, c), ins->config);
  EXPECT_TRUE(found) << s.instruction << "\n" << f.out;
  // The program itself, with the options a fit reports, reproduces every captured bit.
#ifdef GPUPARANOIA_BINARY
  const json& best = f.doc["candidates"][0];
  const fs::path in = temp_dir() / "in.txt", got = temp_dir() / "got.txt";
  std::string inputs, expected;
  std::istringstream ls(lines.str());
  for (std::string l; std::getline(ls, l);) {
    const std::size_t cut = l.find_last_of(' ');
    inputs += l.substr(0, cut) + "\n";
    expected += l.substr(cut + 1) + "\n";
  }
  std::ofstream(in) << inputs;
  const std::string cmd = fmt::format("'{}' model dot {} < '{}' > '{}'", GPUPARANOIA_BINARY,
                                      best["model_dot"].get<std::string>(), in.string(), got.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_EQ(slurp(got), expected) << cmd;
#endif
}

INSTANTIATE_TEST_SUITE_P(Captured, FitGolden, ::testing::ValuesIn(kGoldenSets), [](const ::testing::TestParamInfo<GoldenSet>& p) {
  return std::string(p.param.gpu) + "_" + p.param.input + "_" + p.param.output;
});

// The layout both ways: a binary32 c comes back as it was; lines -> layout -> lines is the identity.
TEST(CapturesConvert, RoundTrips) {
  for (const GoldenSet& s : {kGoldenSets[6], kGoldenSets[7], kGoldenSets[10]}) {
    const model::MmaInstruction* ins = model::find_mma_instruction(s.instruction);
    const ShapeArgs config = formats_of(config_of(*ins));
    std::istringstream none;
    std::ostringstream lines, err;
    ASSERT_EQ(run_convert(convert_args(s, config), none, lines, err), kExitOk) << err.str();
    ConvertArgs back;
    back.shape = config;
    back.to_matlab = (temp_dir() / "matlab").string();
    std::istringstream in(lines.str());
    std::ostringstream out2, err2;
    ASSERT_EQ(run_convert(back, in, out2, err2), kExitOk) << err2.str();
    const ConvertArgs orig = convert_args(s, config);
    EXPECT_EQ(slurp(fs::path(back.to_matlab) / "a.txt"), slurp(orig.a)) << s.gpu << s.input;
    EXPECT_EQ(slurp(fs::path(back.to_matlab) / "b.txt"), slurp(orig.b));
    EXPECT_EQ(slurp(fs::path(back.to_matlab) / "d.txt"), slurp(orig.d));
    if (ins->config.c == &model::binary32 && !s.c_is_zero) {
      EXPECT_EQ(slurp(fs::path(back.to_matlab) / "c.txt"), slurp(orig.c));
    }
    ConvertArgs again = back;
    again.to_matlab.clear();
    again.a = (fs::path(back.to_matlab) / "a.txt").string();
    again.b = (fs::path(back.to_matlab) / "b.txt").string();
    again.c = (fs::path(back.to_matlab) / "c.txt").string();
    again.d = (fs::path(back.to_matlab) / "d.txt").string();
    std::ostringstream lines2;
    ASSERT_EQ(run_convert(again, none, lines2, err2), kExitOk) << err2.str();
    EXPECT_EQ(lines2.str(), lines.str());
  }
}

// ---------------------------------------------------------------------------------------------
// Discriminating inputs: from few lines several classes survive; each line written splits two of
// them, and the unit's outputs on them, added to the captures, leave fewer classes.
TEST(FitDiscriminate, LinesSplitTheClassesAndTheirOutputsNarrowTheFit) {
  const model::MmaInstruction* ins = model::find_mma_instruction("hopper:HMMA.16816.F32");
  const mma::MmaConfig cfg = config_of(*ins);
  mma::RandomInputs gen(cfg, 7);
  const std::vector<mma::DotCase> few = mma::draw_inputs(gen, cfg.k, 2, "");
  const fs::path first = temp_dir() / "few.txt";
  std::ofstream(first) << captures(cfg, ins->config, few);
  const Fit f = fit(config_text(cfg), nullptr, {first.string()}, 16);
  ASSERT_EQ(f.code, kExitOk) << f.err;
  const std::size_t classes = f.doc["classes"].size();
  ASSERT_GT(classes, 1u) << "18 lines should leave several classes";
  // The first candidate of each class, by class.
  std::map<int, DotConfig> rep;
  for (const json& c : f.doc["candidates"]) rep.emplace(c["class"].get<int>(), model_of(cfg, nullptr, c));
  ASSERT_EQ(rep.size(), classes);
  const json& lines = f.doc["discriminating"];
  ASSERT_FALSE(lines.empty());
  std::istringstream written(f.out);
  std::vector<mma::DotCase> asked;
  for (const json& l : lines) {
    std::string line;
    ASSERT_TRUE(std::getline(written, line));
    EXPECT_EQ(line, l["line"].get<std::string>());
    // Parse the line back and evaluate every class's model on it: at least two outputs differ,
    // and each is the prediction the fit recorded.
    std::istringstream fields(line);
    mma::DotCase x;
    std::string w;
    fields >> w;
    x.c = std::stoull(w, nullptr, 16);
    for (int k = 0; k < 2 * cfg.k; ++k) {
      fields >> w;
      (k < cfg.k ? x.a : x.b).push_back(std::stoull(w, nullptr, 16));
    }
    std::set<std::uint64_t> outputs;
    for (const auto& [id, c] : rep) {
      const std::uint64_t p = mma::predict(model::Dot(c), x);
      outputs.insert(p);
      EXPECT_EQ(format_hex(p, cfg.d->storage_bits), l["predictions"][std::to_string(id)].get<std::string>());
    }
    EXPECT_GT(outputs.size(), 1u) << line;
    asked.push_back(x);
  }
  const fs::path second = temp_dir() / "asked.txt";
  std::ofstream(second) << captures(cfg, ins->config, asked);
  const Fit g = fit(config_text(cfg), nullptr, {first.string(), second.string()});
  ASSERT_EQ(g.code, kExitOk) << g.err;
  EXPECT_LT(g.doc["classes"].size(), classes);
}

// ---------------------------------------------------------------------------------------------
// No candidate: the closest ones, with their mismatches and the first lines they mispredict.
TEST(FitErrors, NoCandidateGivesTheClosestAndExitsOne) {
  const model::MmaInstruction* ins = model::find_mma_instruction("ampere:HMMA.16816.F32");
  const mma::MmaConfig cfg = config_of(*ins);
  mma::RandomInputs gen(cfg, 11);
  std::vector<mma::DotCase> inputs = mma::draw_inputs(gen, cfg.k, 40, "");
  std::swap(inputs[0], inputs[40]);  // the first line of normal values
  std::string lines = captures(cfg, ins->config, inputs);
  // Its output one unit in the last place off: no model predicts it.
  const std::size_t eol = lines.find('\n');
  const std::size_t last = lines.rfind(' ', eol);
  std::uint64_t d = std::stoull(lines.substr(last + 1, eol - last - 1), nullptr, 16) ^ 1;
  lines.replace(last + 1, eol - last - 1, format_hex(d, 32));
  const fs::path file = temp_dir() / "bad.txt";
  std::ofstream(file) << lines;
  const Fit f = fit(config_text(cfg), nullptr, {file.string()});
  EXPECT_EQ(f.code, kExitDifferences) << f.out;
  ASSERT_FALSE(f.doc["candidates"].empty());
  const json& best = f.doc["candidates"][0];
  EXPECT_EQ(best["mismatches"], 1);
  EXPECT_EQ(best["first_mismatches"][0]["line"], 1);
  EXPECT_TRUE(same_behaviour(cfg, model_of(cfg, nullptr, best), ins->config)) << best.dump();
}

// A time limit that ends the search: the fit says it is incomplete, and claims no closest candidate.
TEST(FitErrors, TimeLimitMarksTheFitIncomplete) {
  const model::MmaInstruction* ins = model::find_mma_instruction("hopper:HMMA.16816.F32");
  const mma::MmaConfig cfg = config_of(*ins);
  mma::RandomInputs gen(cfg, 3);
  const fs::path file = temp_dir() / "timed.txt";
  std::ofstream(file) << captures(cfg, ins->config, mma::draw_inputs(gen, cfg.k, 5, ""));
  FitArgs a;
  a.shape = config_text(cfg);
  a.captures = {file.string()};
  a.json = (temp_dir() / "timed.json").string();
  a.max_seconds = 1e-9;
  std::ostringstream out, err;
  EXPECT_EQ(run_fit(a, out, err), kExitDifferences) << out.str() << err.str();
  const json doc = json::parse(slurp(a.json));
  EXPECT_FALSE(doc["complete"].get<bool>());
  EXPECT_TRUE(doc["candidates"].empty());
  EXPECT_NE(out.str().find("incomplete"), std::string::npos) << out.str();
}

// One line leaves millions of candidates: the fit keeps and classes a bounded number, and says so.
TEST(FitErrors, ALineOrTwoLeaveTooManyCandidatesAndSaySo) {
  const fs::path file = temp_dir() / "one.txt";
  std::ofstream(file) << "3f800000 3c00 3c00 40000000\n";  // 1 + 1 x 1 = 2
  ShapeArgs k1;
  k1.config = "1x1x1:binary16,binary16,binary32,binary32";
  const Fit f = fit(k1, nullptr, {file.string()});
  EXPECT_EQ(f.code, kExitOk) << f.err;
  EXPECT_FALSE(f.doc["complete"].get<bool>());
  EXPECT_EQ(f.doc["survivors"], 20000);
  EXPECT_NE(f.out.find("incomplete: more than 20000 candidates"), std::string::npos) << f.out;
}

TEST(FitErrors, BadInputAndUsageHaveTheirExitCodes) {
  const fs::path file = temp_dir() / "err.txt";
  std::ofstream(file) << "# a comment\n3f800000 3c00 3c00 40000000\n0 3c00 zz 0\n";
  ShapeArgs k1;
  k1.config = "1x1x1:binary16,binary16,binary32,binary32";
  Fit f = fit(k1, nullptr, {file.string()});
  EXPECT_EQ(f.code, kExitBadInput);
  EXPECT_EQ(f.err, fmt::format("gpuparanoia: {}:3: field 3: 'zz' is not a hex bit pattern\n", file.string()));
  std::ofstream(file) << "3f800000 3c00 3c00 3c00 40000000\n";
  f = fit(k1, nullptr, {file.string()});
  EXPECT_EQ(f.code, kExitBadInput);
  EXPECT_EQ(f.err, fmt::format("gpuparanoia: {}:1: field 5: expected 4 fields, found more\n", file.string()));
  std::ofstream(file) << "# nothing\n\n";
  f = fit(k1, nullptr, {file.string()});
  EXPECT_EQ(f.code, kExitBadInput);
  EXPECT_EQ(f.err, fmt::format("gpuparanoia: {}: no capture lines\n", file.string()));
  f = fit(k1, nullptr, {(temp_dir() / "absent.txt").string()});
  EXPECT_EQ(f.code, kExitBadInput);
  EXPECT_EQ(f.err.find('\n'), f.err.size() - 1) << f.err;
  ShapeArgs bad;
  bad.config = "16x8:binary16,binary16,binary32,binary32";
  f = fit(bad, nullptr, {file.string()});
  EXPECT_EQ(f.code, kExitUsage);
  bad.config = "1x1x4:binary16,binary16,binary32,fp99";
  f = fit(bad, nullptr, {file.string()});
  EXPECT_EQ(f.code, kExitUsage);
  EXPECT_EQ(f.err.find('\n'), f.err.size() - 1) << f.err;
  for (double seconds : {-1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), 2e6}) {
    FitArgs t;
    t.shape = k1;
    t.captures = {file.string()};
    t.max_seconds = seconds;
    std::ostringstream o, e;
    EXPECT_EQ(run_fit(t, o, e), kExitUsage) << seconds;
    EXPECT_EQ(e.str().rfind("gpuparanoia: fit: --max-seconds takes", 0), 0u) << e.str();
  }
  FitArgs a;
  a.captures = {file.string()};
  std::ostringstream out, err;
  EXPECT_EQ(run_fit(a, out, err), kExitUsage);
  EXPECT_EQ(err.str(), "gpuparanoia: fit: give either --config MxNxK:a,b,c,d or --a-format, --b-format, --c-format and --d-format\n");
}

TEST(CapturesConvert, ValuesNotInTheFormatAreBadInput) {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "a.txt") << "3f800001 \n";  // 1 + 2^-23: not a binary16 value
  std::ofstream(dir / "b.txt") << "3f800000 \n";
  std::ofstream(dir / "d.txt") << "00111111100000000000000000000000\n";
  ConvertArgs a;
  a.shape.config = "1x1x1:binary16,binary16,binary32,binary32";
  a.a = (dir / "a.txt").string();
  a.b = (dir / "b.txt").string();
  a.d = (dir / "d.txt").string();
  std::istringstream none;
  std::ostringstream out, err;
  EXPECT_EQ(run_convert(a, none, out, err), kExitBadInput);
  EXPECT_EQ(err.str(), fmt::format("gpuparanoia: {}:1: word 1: 3f800001 is not exactly a binary16 value\n", a.a));
  std::ofstream(dir / "a.txt") << "3f800000 \n";
  std::ostringstream out2, err2;
  EXPECT_EQ(run_convert(a, none, out2, err2), kExitOk) << err2.str();
  EXPECT_EQ(out2.str(), "00000000 3c00 3c00 3f800000\n");
  // Files of different lengths, either way round.
  std::ofstream(dir / "b.txt") << "3f800000 \n3f800000 \n";
  std::ostringstream out3, err3;
  EXPECT_EQ(run_convert(a, none, out3, err3), kExitBadInput);
  EXPECT_EQ(err3.str(), fmt::format("gpuparanoia: {}:2: has more lines than {} (1 lines there)\n", a.b, a.a));
  std::ofstream(dir / "a.txt") << "3f800000 \n3f800000 \n";
  std::ostringstream out4, err4;
  EXPECT_EQ(run_convert(a, none, out4, err4), kExitBadInput);
  EXPECT_EQ(err4.str(), fmt::format("gpuparanoia: {}: has fewer lines than {} (2 lines there)\n", a.d, a.a));
}

}  // namespace
}  // namespace gp::cli

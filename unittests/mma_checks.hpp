// The checks of the MMA suite's claims on devices whose model is known (the instruction devices of
// the tables, random parameter sets, random summation trees), one run of the suite serving both:
//
// - expect_identified: the profile entry recovers the algorithm and parameters and validates with no
//   mismatch. Equivalences accepted, because no input can tell them apart (the identification
//   reports them under "ambiguous" and chooses one): the chained names (cofda, cofdrda, cogfdrda)
//   are blocks smaller than K; a block of K or more is K; a parameter the finding lists as
//   ambiguous may differ when the true value is in the listed set; an alignment floor at or below
//   the lowest exponent a summand can have is no floor. Whatever differs must also pass a
//   differential check: the true and the identified models agree on 8 x 1500 random dot products
//   from every input generator, NaN encodings compared where the model states them.
// - expect_true_verdicts: for each finding that asks a question of the model
//   (tests_mma/questions.hpp), the true model is among the candidates left (its answer among
//   theirs), a stated answer is the true model's, "not applicable" is true of the true model, and
//   "no candidate reproduces" never happens.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "audit/result.hpp"
#include "audit/runner.hpp"
#include "backends/reference/profile.hpp"
#include "model/mma_instructions.hpp"
#include "tests_mma/identify/identify.hpp"
#include "tests_mma/questions.hpp"
#include "tests_mma/suite.hpp"
#include "tests_mma/support.hpp"
#include "tests_mma/tree_shape.hpp"

namespace gp::testing {

using model::DotConfig;
using model::MmaAlgorithm;
using model::unchained;
using nlohmann::json;

// The MMA suite on one device (quick tier): the settings and the result document.
struct MmaRun {
  audit::RunSettings settings;
  json doc;
};

inline MmaRun run_mma(backends::Device& d, std::uint64_t seed, std::uint64_t validation_tiles = 0) {
  MmaRun r;
  r.settings.suite = "mma";
  r.settings.tier = audit::Tier::quick;
  r.settings.seed = seed;
  r.settings.mma_validation_tiles = validation_tiles;
  audit::ResultDocument doc(d, "test", r.settings.to_json());
  audit::run_mma_suite(d, r.settings, doc);
  r.doc = doc.json();
  return r;
}

// Whether an ambiguity list ("none, -27..-14", "21, 25", "fda, fdrda") holds a value.
inline bool listed(const json& amb, const char* key, const std::string& value) {
  if (!amb.contains(key)) return false;
  const std::string s = amb[key].get<std::string>();
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = s.find(", ", i);
    if (j == std::string::npos) j = s.size();
    const std::string part = s.substr(i, j - i);
    i = j + 2;
    if (part == value) return true;
    const std::size_t dots = part.find("..");
    if (dots != std::string::npos && !value.empty() && value != "none") {
      try {
        const int lo = std::stoi(part.substr(0, dots)), hi = std::stoi(part.substr(dots + 2)), v = std::stoi(value);
        if (v >= lo && v <= hi) return true;
      } catch (...) {
      }
    }
  }
  return false;
}

// The true and identified models on random dot products of every generator.
inline void differential(const backends::MmaConfig& mc, const DotConfig& truth, const DotConfig& found,
                         std::uint64_t seed, std::string_view who) {
  const model::Dot t(truth), f(found);
  mma::RandomInputs gen(mc, seed ^ 0xD1FF);
  const std::size_t K = std::size_t(mc.k);
  std::vector<std::uint64_t> a(K), b(K);
  int differences = 0;
  for (mma::Gen g : mma::all_gens)
    for (int i = 0; i < 1500; ++i) {
      std::uint64_t c;
      gen.draw(g, c, a.data(), b.data());
      const std::uint64_t x = t(c, a, b), y = f(c, a, b);
      if (mma::agrees(truth, x, y) || mma::agrees(found, y, x)) continue;
      if (differences++ < 3)
        ADD_FAILURE() << who << ": the identified model differs (" << mma::name(g) << "): c " << std::hex << c
                      << " truth " << x << " identified " << y;
    }
  EXPECT_EQ(differences, 0) << who;
}

// Checks the identification of configuration `mc` in the result document of a run with `s` against
// `truth`.
inline void expect_identified(const MmaRun& run, const backends::MmaConfig& mc, const DotConfig& truth,
                              std::string_view who) {
  const json& doc = run.doc;
  const audit::RunSettings& s = run.settings;
  const json* id = nullptr;
  for (const json& f : doc["findings"])
    if (f["probe"] == "mma.identify" && f["config"] == mc.name()) id = &f;
  ASSERT_NE(id, nullptr) << who;
  std::printf("  [%s] %s\n", std::string(who).c_str(), (*id)["verdict"].get<std::string>().c_str());
  ASSERT_EQ((*id)["status"], "ok") << who << ": " << (*id)["message"];
  const json* entry = nullptr;
  for (const json& e : doc["profile"]["mma"])
    if (e["config"] == mc.name()) entry = &e;
  ASSERT_NE(entry, nullptr) << who << ": " << (*id)["verdict"] << " " << (*id)["message"];
  EXPECT_EQ((*entry)["validation"]["mismatches"], 0) << who;
  // A configuration that runs an instruction of the tables is compared with the table's model.
  if (model::find_mma_instruction(mc.instruction)) {
    ASSERT_TRUE((*id)["parameters"].contains("table")) << who;
    EXPECT_EQ((*id)["parameters"]["table"]["differences"], 0) << who;
    EXPECT_EQ((*id)["parameters"]["table"]["mismatches"], 0) << who;
  }
  EXPECT_EQ((*entry)["validation"]["tiles"], mma::validation_tiles({s.tier, s.seed, s.mma_validation_tiles})) << who;
  const auto found = backends::config_from_entry(mc, *entry);
  ASSERT_TRUE(found.ok()) << who << ": " << found.error().message;
  const json& amb = (*id)["parameters"]["ambiguous"];
  const DotConfig& c = *found;
  const int K = mc.k;
  const bool alg_ambiguous = amb.contains("algorithm");
  if (!listed(amb, "algorithm", backends::algorithm_name(truth, K))) {
    EXPECT_EQ(backends::algorithm_name(c, K), backends::algorithm_name(truth, K)) << who;
  }
  const auto same = [&](const char* key, const std::string& truth_value, const std::string& found_value) {
    if (!listed(amb, key, truth_value)) {
      EXPECT_EQ(found_value, truth_value) << who << ": " << key;
    }
  };
  if (!alg_ambiguous && truth.algorithm == MmaAlgorithm::tree && c.algorithm == MmaAlgorithm::tree) {
    const json t = backends::parameters_json(truth, K), x = backends::parameters_json(c, K);
    // The shape as its nodes' summands (children of a node may be written in any order).
    if (!amb.contains("tree")) {
      EXPECT_EQ(mma::tree_nodes(*c.tree), mma::tree_nodes(*truth.tree)) << who << ": " << c.tree->text();
    }
    for (const char* key : {"sums", "rounding", "products", "flush"}) {
      const std::string tv = t[key].is_string() ? t[key].get<std::string>() : t[key].dump();
      const std::string xv = x[key].is_string() ? x[key].get<std::string>() : x[key].dump();
      // Listed ambiguities are "; "-separated (trees and lists hold ", ").
      if (!amb.contains(key) || amb[key].get<std::string>().find(tv) == std::string::npos) {
        EXPECT_EQ(xv, tv) << who << ": " << key;
      }
    }
  }
  if (!alg_ambiguous && unchained(c.algorithm) == unchained(truth.algorithm)) {
    // A group (GPS, GDFS) or block of K or more is K.
    if (unchained(truth.algorithm) == MmaAlgorithm::gps)
      same("group", std::to_string(std::min(truth.group, K)), std::to_string(std::min(c.group, K)));
    if (model::is_fused(truth.algorithm)) {
      same("block", std::to_string(model::effective_block(truth, K)), std::to_string(model::effective_block(c, K)));
      same("F", std::to_string(truth.F), std::to_string(c.F));
      same("out_rounding", std::string(model::name(truth.out_rounding)), std::string(model::name(c.out_rounding)));
      same("out_fraction_bits", std::to_string(truth.out_fraction_bits), std::to_string(c.out_fraction_bits));
      const int lowest = std::min({mc.a->emin() + mc.b->emin(), mc.c->emin(), mc.d->emin()});
      const auto floor_name = [&](int f) { return f <= lowest ? std::string("none") : std::to_string(f); };
      same("align_floor", floor_name(truth.align_floor), floor_name(c.align_floor));
      const auto nan_name = [](const DotConfig& x) { return x.nan == model::MmaNan::nvidia ? "nvidia" : "format"; };
      same("nan", nan_name(truth), nan_name(c));
      if (model::is_fdrda_family(truth.algorithm))
        same("round_down_alignment", truth.round_down_alignment ? "true" : "false",
             c.round_down_alignment ? "true" : "false");
      if (unchained(truth.algorithm) == MmaAlgorithm::gdfs)
        same("group", std::to_string(std::min(truth.group, K)), std::to_string(std::min(c.group, K)));
      same("carry_bits", std::to_string(truth.carry_bits), std::to_string(c.carry_bits));
      if (truth.algorithm == MmaAlgorithm::ocfda)
        same("flush_inputs", truth.flush_inputs ? "true" : "false", c.flush_inputs ? "true" : "false");
    }
  }
  differential(mc, truth, c, s.seed, who);
}

// Checks every judged finding of configuration `mc` in the run's document against `truth`.
inline void expect_true_verdicts(const MmaRun& run, const backends::MmaConfig& mc, const DotConfig& truth,
                                 std::string_view who) {
  int judged = 0;
  for (const json& f : run.doc["findings"]) {
    if (f["config"] != mc.name() || f["status"] != "ok") continue;
    const audit::MmaProbe* probe = mma::probe(f["probe"].get<std::string>());
    const mma::MmaQuestion* q = probe ? probe->question() : nullptr;
    if (!q) continue;
    ++judged;
    const json& p = f["parameters"];
    const audit::Answer answer = q->answer(mc, truth);
    const json& t = answer.fields();  // as the finding writes it
    const std::string where = fmt::format("{} {} (seed {}): {}\n  true answer {}", who, f["probe"].get<std::string>(),
                                          run.settings.seed, f["verdict"].get<std::string>(), t.dump());
    ASSERT_TRUE(p.contains("conclusion")) << where;
    const std::string conclusion = p["conclusion"];
    EXPECT_NE(conclusion, "unexplained") << where;
    bool among = false;
    for (const json& c : p["candidates"]) among |= c["answer"] == t;
    EXPECT_TRUE(among) << where << "\n  candidates " << p["candidates"].dump();
    if (conclusion == "stated") {
      EXPECT_TRUE(answer.applies()) << where;
      if (t.is_object()) {
        for (const auto& [k, v] : t.items()) {
          EXPECT_EQ(p[k], v) << where << ": " << k;
        }
      }
    }
    if (conclusion == "not applicable") {
      EXPECT_FALSE(answer.applies()) << where;
    }
  }
  EXPECT_GT(judged, 0) << who << ": no finding was judged";
}

}  // namespace gp::testing

#include "tests_mma/questions.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/reference/profile.hpp"

namespace gp::mma {

using backends::algorithm_name;
using backends::parameters_json;
using model::is_fdrda_family;
using model::is_fused;
using model::MmaNan;
using model::unchained;
using nlohmann::json;

namespace {

const Format& sums_format(const MmaConfig& cfg, const DotConfig& c) {
  if (c.algorithm == MmaAlgorithm::tree && c.tree->sum_format) return *c.tree->sum_format;
  if (c.algorithm == MmaAlgorithm::gps) return model::binary32;
  return *cfg.d;
}

}  // namespace

// The rounding of what the unit delivers: the fused algorithms' final rounding, the FMA chain's
// and GPS's round to nearest even (MMA-Sim IV-A, IV-B), a tree's sums' rounding.
json rounding_answer(const MmaConfig& cfg, const DotConfig& c) {
  switch (unchained(c.algorithm)) {
    case MmaAlgorithm::sfma:
    case MmaAlgorithm::gps: return {{"rounding", "rne"}, {"fraction_bits", sums_format(cfg, c).man_bits}};
    case MmaAlgorithm::tree:
      return {{"rounding", std::string(model::name(c.tree->sum_rounding))},
              {"fraction_bits", sums_format(cfg, c).man_bits}};
    default: return {{"rounding", std::string(model::name(c.out_rounding))}, {"fraction_bits", c.out_fraction_bits}};
  }
}

// How c joins the fused sum: aligned with the products and truncated (fda, gdfs), or with the
// dot product rounding down or toward zero (the fdrda family; gfdrda truncates a c far below).
json c_alignment_answer(const MmaConfig&, const DotConfig& c) {
  if (!is_fused(c.algorithm)) return nullptr;
  if (!is_fdrda_family(c.algorithm)) return {{"c_alignment", "truncated with the products"}};
  if (!c.round_down_alignment) return {{"c_alignment", "toward zero"}};
  return {{"c_alignment", unchained(c.algorithm) == MmaAlgorithm::gfdrda
                              ? "rounded down, toward zero when far below the dot product"
                              : "rounded down"}};
}

json fused_only(const DotConfig& c, json answer) { return is_fused(c.algorithm) ? answer : json(nullptr); }

namespace {

json carries_answer(const MmaConfig&, const DotConfig& c) {
  if (c.carry_bits == 0) return fused_only(c, {{"carries", "every carry kept (an exact fixed-point sum)"}});
  return {{"carries", fmt::format("{} carry-out bits above the largest summand's leading bit: larger sums wrap around",
                                  c.carry_bits)}};
}

// The candidate as a verdict lists it.
audit::Candidate candidate(const MmaConfig& cfg, const DotConfig& c, const MmaQuestion& q) {
  return {algorithm_name(c, cfg.k), parameters_json(c, cfg.k), q.answer(cfg, c)};
}

}  // namespace

MmaQuestion kept_bits_question(std::string head) {
  return {{std::move(head), "the fraction bits a fused sum keeps below its largest summand",
           [](const json& a) {
             return fmt::format("F = {} fraction bits kept below the largest summand's leading bit", a["F"].get<int>());
           }},
          [](const MmaConfig&, const DotConfig& c) {
            return fused_only(c, {{"F", c.F}});
          }};
}

MmaQuestion carries_question() {
  return {{"CARRIES", "the carry-out bits of a fixed-point accumulator",
           [](const json& a) { return a["carries"].get<std::string>(); }},
          carries_answer};
}

MmaQuestion rounding_question(std::string head, std::string about) {
  return {{std::move(head), std::move(about),
           [](const json& a) {
             return fmt::format("{} at {} fraction bits", a["rounding"].get<std::string>(),
                                a["fraction_bits"].get<int>());
           }},
          rounding_answer};
}

MmaQuestion normalization_question(std::string head) {
  return {{std::move(head), "the normalization of a fused sum's partial sums",
           [](const json& a) { return a["normalization"].get<std::string>(); }},
          [](const MmaConfig&, const DotConfig& c) {
            return fused_only(c, {{"normalization", "once, of the exact fixed-point sum"}});
          }};
}

void judge_findings(const MmaConfig& cfg, std::span<const DotConfig> survivors, std::span<const DotConfig> closest,
                    std::span<ProbeReading> readings) {
  for (auto& [probe, f] : readings) {
    const MmaQuestion* q = probe->question();
    if (f.status != audit::Status::ok || !q) continue;
    std::vector<audit::Candidate> cands;
    for (const DotConfig& c : survivors) cands.push_back(candidate(cfg, c, *q));
    // None left: where the last candidates standing go wrong on this probe's observations.
    std::vector<audit::Miss> misses;
    for (std::size_t i = 0; survivors.empty() && i < closest.size() && i < 3; ++i) {
      const model::Dot dot(closest[i]);
      audit::Miss m;
      m.model = fmt::format("{} {}", algorithm_name(closest[i], cfg.k), parameters_json(closest[i], cfg.k).dump());
      for (const audit::Observation& o : f.observations) {
        const auto x = case_of(cfg, o);
        if (!x) continue;
        const std::uint64_t p = predict(dot, *x);
        if (agrees(closest[i], p, o.output)) continue;
        if (m.wrong++ == 0)
          m.first = fmt::format("{}: device {}, model {}", x->note, show(*cfg.d, o.output), show(*cfg.d, p));
      }
      misses.push_back(std::move(m));
    }
    const std::string reading = f.verdict;
    // The probe's own reading of its outputs stays only as a remark where no model explains them.
    f.parameters = json::object();
    const audit::Judgement j = audit::judge(q->question, cands, misses);
    audit::apply(j, f);
    // The observations show the judged models' predictions, as the scalar probes' do: one survivor
    // per distinct answer, named by it, or the closest candidates when none survived.
    std::vector<std::pair<std::string, model::Dot>> shown;
    std::set<std::string> answered;
    for (std::size_t i = 0; i < survivors.size() && shown.size() < 4; ++i)
      if (answered.insert(cands[i].answer.dump()).second)
        shown.emplace_back(cands[i].answer.is_null() ? cands[i].model : audit::render(cands[i].answer),
                           model::Dot(survivors[i]));
    for (std::size_t i = 0; survivors.empty() && i < closest.size() && i < 3; ++i)
      shown.emplace_back(
          fmt::format("{} {}", algorithm_name(closest[i], cfg.k), parameters_json(closest[i], cfg.k).dump()),
          model::Dot(closest[i]));
    for (audit::Observation& o : f.observations) {
      o.predictions.clear();
      if (const auto x = case_of(cfg, o))
        for (const auto& [label, dot] : shown) o.predictions.emplace_back(label, predict(dot, *x));
    }
    if (j.conclusion == audit::Conclusion::unexplained && !reading.empty())
      f.message = "the probe's reading of its outputs, which no candidate model confirms: " + reading;
  }
}

}  // namespace gp::mma

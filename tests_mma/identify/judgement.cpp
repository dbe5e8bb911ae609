#include "tests_mma/identify/judgement.hpp"

#include <fmt/format.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/reference/profile.hpp"

namespace gp::mma {

using backends::algorithm_name;
using backends::parameters_json;
using nlohmann::json;

namespace {

// The candidate as a verdict lists it.
audit::Candidate candidate(const MmaConfig& cfg, const DotConfig& c, const audit::MmaQuestion& q) {
  return {algorithm_name(c, cfg.k), parameters_json(c, cfg.k), q.answer(cfg, c)};
}

}  // namespace

void judge_findings(const MmaConfig& cfg, std::span<const DotConfig> survivors, std::span<const DotConfig> closest,
                    std::span<ProbeReading> readings) {
  for (auto& [probe, f] : readings) {
    const audit::MmaQuestion* q = probe->question();
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
      if (answered.insert(cands[i].answer.key()).second)
        shown.emplace_back(cands[i].answer.applies() ? audit::render(cands[i].answer) : cands[i].model,
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

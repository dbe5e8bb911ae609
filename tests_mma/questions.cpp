#include "tests_mma/questions.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/reference/profile.hpp"

namespace gp::mma {
namespace {

using backends::algorithm_name;
using backends::parameters_json;
using model::is_fdrda_family;
using model::is_fused;
using model::MmaNan;
using model::unchained;
using nlohmann::json;

const Format& sums_format(const MmaConfig& cfg, const DotConfig& c) {
  if (c.algorithm == MmaAlgorithm::tree && c.tree->sum_format) return *c.tree->sum_format;
  if (c.algorithm == MmaAlgorithm::gps) return model::binary32;
  return *cfg.d;
}

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

json carries_answer(const MmaConfig&, const DotConfig& c) {
  if (c.carry_bits == 0) return fused_only(c, {{"carries", "every carry kept (an exact fixed-point sum)"}});
  return {{"carries", fmt::format("{} carry-out bits above the largest summand's leading bit: larger sums wrap around",
                                  c.carry_bits)}};
}

const std::map<std::string, MmaQuestion, std::less<>>& questions() {
  static const std::map<std::string, MmaQuestion, std::less<>> q = {
      {"mma.elements",
       {{"ELEMENTS", "whether every element of D is computed alike",
         [](const json&) { return std::string("every element of D computed the same way"); }},
        [](const MmaConfig&, const DotConfig&) -> json {
          return {{"elements", "alike"}};
        }}},
      {"mma.summation_tree",
       {{"ORDER", "the order of the summation", [](const json& a) { return a["order"].get<std::string>(); }},
        [](const MmaConfig& cfg, const DotConfig& c) -> json {
          const int K = cfg.k, block = model::effective_block(c, K);
          switch (unchained(c.algorithm)) {
            case MmaAlgorithm::sfma: return {{"order", "sequential FMA chain from c"}};
            case MmaAlgorithm::gps:
              return {{"order",
                       fmt::format("pairwise sums of groups of {} products, each group added to the running sum from c",
                                   std::min(c.group, K))}};
            case MmaAlgorithm::tree: return {{"order", "summation tree " + c.tree->text()}};
            case MmaAlgorithm::gdfs:
              return {{"order", fmt::format("exact sums of groups of {} products, then one fused sum with c",
                                            std::min(c.group, K))}};
            default:
              return {{"order",
                       block == K
                           ? fmt::format("one fused sum of c and the {} products", K)
                           : fmt::format("fused blocks of {} products, each block's result the next one's c", block)}};
          }
        }}},
      {"mma.accumulation_precision",
       {{"ACCUMULATION", "the fraction bits a fused sum keeps below its largest summand",
         [](const json& a) {
           return fmt::format("F = {} fraction bits kept below the largest summand's leading bit", a["F"].get<int>());
         }},
        [](const MmaConfig&, const DotConfig& c) {
          return fused_only(c, {{"F", c.F}});
        }}},
      {"mma.fasi.alignment_bits",
       {{"ALIGNMENT", "the fraction bits a fused sum keeps below its largest summand",
         [](const json& a) {
           return fmt::format("F = {} fraction bits kept below the largest summand's leading bit", a["F"].get<int>());
         }},
        [](const MmaConfig&, const DotConfig& c) {
          return fused_only(c, {{"F", c.F}});
        }}},
      {"mma.rounding",
       {{"ROUNDING", "the precision and rounding of the output",
         [](const json& a) {
           return fmt::format("{} fraction bits, rounded {}", a["fraction_bits"].get<int>(),
                              a["rounding"].get<std::string>());
         }},
        rounding_answer}},
      {"mma.fasi.rounding",
       {{"ACCUMULATION ROUNDING", "the rounding of the accumulation",
         [](const json& a) {
           return fmt::format("{} at {} fraction bits", a["rounding"].get<std::string>(),
                              a["fraction_bits"].get<int>());
         }},
        rounding_answer}},
      {"mma.fasi.output_rounding",
       {{"OUTPUT ROUNDING", "the rounding of the output",
         [](const json& a) {
           return fmt::format("{} at {} fraction bits", a["rounding"].get<std::string>(),
                              a["fraction_bits"].get<int>());
         }},
        rounding_answer}},
      {"mma.alignment_floor",
       {{"ALIGNMENT FLOOR", "the lowest exponent a fused sum aligns to",
         [](const json& a) {
           return a["align_floor"].is_null()
                      ? std::string("none: tiny sums keep F bits below their own largest summand")
                      : fmt::format("summands are aligned to 2^{} at the lowest", a["align_floor"].get<int>());
         }},
        [](const MmaConfig& cfg, const DotConfig& c) {
          const bool binds = c.align_floor > lowest_summand_exponent(cfg);
          return fused_only(c, {{"align_floor", binds ? json(c.align_floor) : json(nullptr)}});
        }}},
      {"mma.c_alignment",
       {{"C ALIGNMENT", "how c is aligned in a fused sum",
         [](const json& a) { return "c is " + a["c_alignment"].get<std::string>(); }},
        c_alignment_answer}},
      {"mma.valpey.truncation",
       {{"ALIGNMENT", "what a fused sum does with the bits shifted out at alignment",
         [](const json& a) {
           return fmt::format("products' bits shifted out are truncated; c is {}", a["c_alignment"].get<std::string>());
         }},
        [](const MmaConfig& cfg, const DotConfig& c) -> json {
          json a = c_alignment_answer(cfg, c);
          if (!a.is_null()) a["products"] = "truncated";
          return a;
        }}},
      {"mma.subnormals",
       {{"SUBNORMALS", "the handling of subnormals",
         [](const json& a) {
           std::map<std::string, std::vector<std::string>> where;  // what happens -> where
           for (const auto& [k, v] : a.items()) where[v.get<std::string>()].push_back(k);
           std::vector<std::string> parts;
           for (const auto& [what, keys] : where) parts.push_back(fmt::format("{} in {}", what, fmt::join(keys, ", ")));
           return fmt::format("{}", fmt::join(parts, "; "));
         }},
        [](const MmaConfig&, const DotConfig& c) -> json {
          switch (unchained(c.algorithm)) {
            // MMA-Sim IV-B: subnormal inputs read as +0, subnormal products and sums keep their sign.
            case MmaAlgorithm::gps:
              return {
                  {"a and b", "flushed to +0"}, {"c", "flushed to +0"}, {"products", "flushed"}, {"sums", "flushed"}};
            case MmaAlgorithm::tree: {
              const model::SummationTree& t = *c.tree;
              return {{"a and b", t.flush_inputs ? "flushed" : "kept"},
                      {"c", t.flush_c ? "flushed" : "kept"},
                      {"sums", t.flush_sums ? "flushed" : "kept"}};
            }
            case MmaAlgorithm::ocfda:
              return {{"a and b", c.flush_inputs ? "flushed" : "kept"},
                      {"c", "kept"},
                      {"products", "kept"},
                      {"sums", "kept"}};
            default: return {{"a and b", "kept"}, {"c", "kept"}, {"products", "kept"}, {"sums", "kept"}};
          }
        }}},
      {"mma.specials",
       {{"SPECIALS", "the NaN a result takes",
         [](const json& a) { return "NaN results: " + a["nan"].get<std::string>(); }},
        [](const MmaConfig& cfg, const DotConfig& c) -> json {
          if (!is_fused(c.algorithm)) return {{"nan", "a NaN (payloads not modelled)"}};
          return {{"nan", c.nan == MmaNan::nvidia ? "NVIDIA's, every magnitude bit set"
                                                  : fmt::format("{}'s canonical quiet NaN", cfg.d->name)}};
        }}},
      {"mma.fasi.exact_products",
       {{"PRODUCTS", "whether products are exact", [](const json& a) { return a["products"].get<std::string>(); }},
        [](const MmaConfig&, const DotConfig& c) -> json {
          switch (unchained(c.algorithm)) {
            case MmaAlgorithm::gps: return {{"products", "rounded to binary32, subnormal products flushed"}};
            case MmaAlgorithm::tree:
              return {{"products",
                       c.tree->product_format ? fmt::format("rounded to {}", c.tree->product_format->name) : "exact"}};
            default: return {{"products", "exact"}};
          }
        }}},
      {"mma.fasi.order",
       {{"ROUNDINGS", "how often the accumulation rounds",
         [](const json& a) { return a["roundings"].get<std::string>(); }},
        [](const MmaConfig& cfg, const DotConfig& c) -> json {
          const int K = cfg.k, block = model::effective_block(c, K);
          switch (unchained(c.algorithm)) {
            case MmaAlgorithm::sfma: return {{"roundings", "one per product (an FMA chain)"}};
            case MmaAlgorithm::gps: return {{"roundings", "one per product and per sum (binary32)"}};
            case MmaAlgorithm::tree: return {{"roundings", "one per sum of the tree " + c.tree->text()}};
            default:
              return {{"roundings", block == K ? std::string("one, of the fused sum")
                                               : fmt::format("one per fused block of {} products", block)}};
          }
        }}},
      {"mma.fasi.normalization_add",
       {{"NORMALIZATION", "the normalization of a fused sum's partial sums",
         [](const json& a) { return a["normalization"].get<std::string>(); }},
        [](const MmaConfig&, const DotConfig& c) {
          return fused_only(c, {{"normalization", "once, of the exact fixed-point sum"}});
        }}},
      {"mma.fasi.normalization_sub",
       {{"NORMALIZATION IN SUBTRACTION", "the normalization of a fused sum's partial sums",
         [](const json& a) { return a["normalization"].get<std::string>(); }},
        [](const MmaConfig&, const DotConfig& c) {
          return fused_only(c, {{"normalization", "once, of the exact fixed-point sum"}});
        }}},
      {"mma.fasi.carry_bits",
       {{"CARRIES", "the carry-out bits of a fixed-point accumulator",
         [](const json& a) { return a["carries"].get<std::string>(); }},
        carries_answer}},
      {"mma.valpey.carry_bits",
       {{"CARRIES", "the carry-out bits of a fixed-point accumulator",
         [](const json& a) { return a["carries"].get<std::string>(); }},
        carries_answer}},
      {"mma.fasi.monotonicity",
       {{"MONOTONICITY", "the monotonicity of the dot product",
         [](const json& a) { return a["monotone"].get<std::string>(); }},
        [](const MmaConfig&, const DotConfig& c) -> json {
          if (is_fused(c.algorithm))
            return {{"monotone", "not guaranteed: bits shifted out at alignment depend on the largest summand"}};
          return {{"monotone", "yes: every step is a monotone rounding"}};
        }}},
  };
  return q;
}

// The candidate as a verdict lists it.
audit::Candidate candidate(const MmaConfig& cfg, const DotConfig& c, const MmaQuestion& q) {
  return {algorithm_name(c, cfg.k), parameters_json(c, cfg.k), q.answer(cfg, c)};
}

}  // namespace

const MmaQuestion* question_of(std::string_view probe) {
  const auto& q = questions();
  const auto it = q.find(probe);
  return it == q.end() ? nullptr : &it->second;
}

void judge_findings(const MmaConfig& cfg, std::span<const DotConfig> survivors, std::span<const DotConfig> closest,
                    std::span<audit::Finding> findings) {
  for (audit::Finding& f : findings) {
    const MmaQuestion* q = question_of(f.probe);
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

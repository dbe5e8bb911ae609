#include "tests_mma/identify/identify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "backends/reference/profile.hpp"
#include "model/mma_instructions.hpp"
#include "model/ops.hpp"
#include "tests_mma/questions.hpp"
#include "tests_mma/identify/candidates.hpp"
#include "tests_mma/support.hpp"
#include "tests_mma/tree_shape.hpp"
#include "tests_mma/identify/validate.hpp"

namespace gp::mma {

using backends::algorithm_name;
using backends::parameters_json;
using model::MmaNan;
using model::Rounding;

namespace {

using model::effective_block;
using model::unchained;

// The summation tree the tree-shape probe rebuilt from its counts ("" when it found none): trees
// cannot be enumerated, so the space holds that shape beside the plain chains.
std::string measured_tree(std::span<const ProbeReading> readings) {
  for (const auto& [probe, f] : readings)
    if (probe->id() == kTreeProbeId && f.status == audit::Status::ok) return f.parameters.value("tree", "");
  return "";
}

}  // namespace

std::string validation_words(std::uint64_t tiles, std::uint64_t mismatches) {
  return fmt::format("{} random tiles, {} mismatches", tiles, mismatches);
}

std::uint64_t validation_tiles(const audit::ProbeContext& ctx) {
  return ctx.validation_tiles ? ctx.validation_tiles : ctx.cases(10000, 100000, 1000000);
}

using audit::failed;
using audit::Finding;
using audit::Observation;
using audit::ProbeContext;
using audit::Tier;
using audit::unsupported;

namespace {

// Where the configuration runs an instruction of the tables (model/mma_instructions.hpp) (a CUDA device, a reference
// device): the table's model against the device on random tiles (a tenth of the validation's), the
// first element it mispredicts kept as an observation; and the identified model, where there is one,
// against the table's on random inputs of every generator. Says so in the verdict, or in the message
// of a configuration no model explains.
Expected<bool> compare_with_table(backends::Device& device, const backends::MmaConfig& cfg, const ProbeContext& ctx,
                                  const DotConfig* chosen, Finding& f) {
  const model::MmaInstruction* table = model::find_mma_instruction(cfg.instruction);
  if (!table || table->config.a != cfg.a || table->config.b != cfg.b || table->config.d != cfg.d || table->k != cfg.k)
    return true;
  const int K = cfg.k;
  nlohmann::json t = {{"instruction", table->id()}};
  int drawn = 0, differ = 0;
  if (chosen) {
    const model::Dot ours(*chosen), theirs(table->config);
    RandomInputs gen(cfg, ctx.seed ^ 0x7AB1E3ULL);
    DotCase x;
    x.a.resize(std::size_t(K));
    x.b.resize(std::size_t(K));
    for (Gen g : all_gens)
      for (int i = 0; i < 1000; ++i, ++drawn) {
        gen.draw(g, x.c, x.a.data(), x.b.data());
        const std::uint64_t p = predict(ours, x), q = predict(theirs, x);
        differ += !agrees(*chosen, p, q) && !agrees(table->config, q, p);
      }
    t["inputs"] = drawn;
    t["differences"] = differ;
  }
  auto v = validate(device, cfg, table->config, std::max<std::uint64_t>(100, validation_tiles(ctx) / 10),
                    ctx.seed ^ 0x7AB1E7ULL, 1);
  if (!v) return v.error();
  t["tiles"] = v->tiles;
  t["elements"] = v->elements;
  t["mismatches"] = v->mismatches;
  t["mismatched_tiles"] = v->mismatched_tiles;
  std::string first;
  if (!v->examples.empty()) {
    Observation o = std::move(v->examples.front());
    o.note = fmt::format("the first element {} mispredicts ({})", table->row_name(),
                         o.note.substr(o.note.find(':') == std::string::npos ? 0 : o.note.find(':') + 2));
    for (auto& [label, value] : o.predictions) label = table->id();
    first = fmt::format("{}: the device gives {:#x}, the table {:#x}", o.note, o.output, o.predictions.front().second);
    t["first_difference"] = first;
    f.observations.insert(f.observations.begin(), std::move(o));
  }
  f.parameters["table"] = t;
  const std::string on_device =
      v->mismatches == 0 ? fmt::format("its model predicts all {} elements of {} random tiles", v->elements, v->tiles)
                         : fmt::format("its model mispredicts {} of {} elements ({} of {} random tiles); {}",
                                       v->mismatches, v->elements, v->mismatched_tiles, v->tiles, first);
  if (!chosen) {
    f.message += fmt::format("{}{}: {}", f.message.empty() ? "" : "; ", table->row_name(), on_device);
  } else if (differ == 0 && v->mismatches == 0) {
    f.verdict += fmt::format("; the same arithmetic as {}", table->row_name());
  } else {
    f.verdict += fmt::format("; differs from {}: on {} of {} random inputs of the two models, and on the device {}",
                             table->row_name(), differ, drawn, on_device);
  }
  return true;
}

// The identification's candidate search (see identify.hpp): the model's candidates that reproduce
// every observation of the pool, and the inputs drawn to separate them, run on the device.
struct Search {
  backends::Device& device;
  const MmaConfig& cfg;
  const ProbeContext& ctx;
  Finding& f;  // the identification's finding: inputs run on the device become its observations
  const int K;
  Pool pool = {};
  std::uint64_t checked = 0;               // candidates evaluated
  std::size_t rounds = 0, run_inputs = 0;  // separation rounds, inputs run on the device
  std::vector<DotConfig> closest = {};     // the last candidates standing when the device ruled all out

  auto by_rank() const {
    return [this](const DotConfig& x, const DotConfig& y) { return rank_less(cfg, x, y); };
  }

  // Inputs drawn to separate the candidates; those where they disagree go to the device.
  Expected<bool> separate(std::vector<DotConfig>& s) {
    int quiet = 0;  // rounds in a row whose inputs found one behaviour only
    for (int round = 0; round < 12 && s.size() > 1 && quiet < 2; ++round) {
      ++rounds;
      RandomInputs gen(cfg, ctx.seed * 7919 + std::uint64_t(round) * 104729 + pool.size());
      const std::vector<DotCase> inputs = draw_inputs(gen, K, 80, "separating input");
      // Behaviour classes: the candidates' predictions on these inputs.
      const Classes k = behaviour_classes(s, inputs);
      if (k.rep.size() <= 1) {
        ++quiet;
        continue;
      }
      quiet = 0;
      std::vector<DotCase> cases;
      for (std::size_t n : k.splitting) cases.push_back(inputs[n]);
      auto out = mma::run(device, cfg, cases);
      if (!out) return out.error();
      run_inputs += cases.size();
      const std::size_t from = pool.size();
      for (std::size_t i = 0; i < cases.size(); ++i) {
        add_to(pool, cfg, cases[i], (*out)[i]);
        std::vector<std::pair<std::string, std::uint64_t>> p;
        for (std::size_t r = 0; r < k.rep.size() && r < 6; ++r)
          p.emplace_back(algorithm_name(s[k.rep[r]], K) + " " + parameters_json(s[k.rep[r]], K).dump(),
                         k.pred[k.rep[r]][k.splitting[i]]);
        if (f.observations.size() < 200) f.observations.push_back(observation(cfg, cases[i], (*out)[i], std::move(p)));
      }
      std::vector<DotConfig> kept = fitting(pool, s, from);
      if (kept.empty()) {
        closest = s;
        s.clear();
        break;
      }
      const bool progress = kept.size() < s.size();
      s = std::move(kept);
      if (!progress) ++quiet;
    }
    return true;
  }

  // The chosen candidate against the others: many random inputs (every generator), and those where
  // they disagree are run on the device, until none is found. Differences between close
  // candidates can be rare (a rounding mode seen only through carries, a floor only through the
  // sign of a tiny zero): the separation's samples are small, this one is not.
  Expected<bool> challenge(std::vector<DotConfig>& s) {
    // Generators weighted toward the structured ones; two empty rounds in a row end it.
    static constexpr Gen weighted[] = {Gen::cancel, Gen::cancel, Gen::cancel, Gen::cancel,  Gen::tie,
                                       Gen::tie,    Gen::tiny,   Gen::tiny,   Gen::carry,   Gen::carry,
                                       Gen::normal, Gen::bits,   Gen::wide,   Gen::special, Gen::overflow};
    int empty = 0;
    for (int round = 0; round < 10 && s.size() > 1 && empty < 2; ++round) {
      std::sort(s.begin(), s.end(), by_rank());
      const std::size_t m = std::min<std::size_t>(s.size(), 16);
      std::vector<model::Dot> dots;
      for (std::size_t i = 0; i < m; ++i) dots.emplace_back(s[i]);
      // Floors left to split: a quarter of the draws start below d's range, the only place where
      // floors below emin(d) differ (each through sums at one exponent: rarer than tiny draws).
      // Carry-out bits left to split: a quarter are sums at the top of one binade, the only ones
      // that wrap an accumulator one bit short of keeping every carry.
      const auto open = [&](auto&& field) {
        return std::any_of(s.begin(), s.begin() + std::ptrdiff_t(m),
                           [&](const DotConfig& x) { return field(x) != field(s[0]); });
      };
      const bool floors_open = open([](const DotConfig& x) { return x.align_floor; });
      const bool carries_open = open([](const DotConfig& x) { return x.carry_bits; });
      RandomInputs gen(cfg, ctx.seed * 31337 + std::uint64_t(round) * 7 + pool.size());
      std::vector<DotCase> found;
      DotCase x;
      x.a.resize(std::size_t(K));
      x.b.resize(std::size_t(K));
      for (int n = 0; n < 16000 && found.size() < 128; ++n) {
        const Gen g = floors_open && n % 4 == 3    ? Gen::deep
                      : carries_open && n % 4 == 1 ? Gen::full
                                                   : weighted[std::size_t(n) % std::size(weighted)];
        gen.draw(g, x.c, x.a.data(), x.b.data());
        const std::uint64_t p0 = predict(dots[0], x);
        for (std::size_t i = 1; i < m; ++i) {
          const std::uint64_t pi = predict(dots[i], x);
          if (agrees(s[0], p0, pi) || agrees(s[i], pi, p0)) continue;
          x.note = fmt::format("challenging input ({})", name(g));
          found.push_back(x);
          break;
        }
      }
      ++rounds;
      if (found.empty()) {
        ++empty;
        continue;
      }
      empty = 0;
      auto out = mma::run(device, cfg, found);
      if (!out) return out.error();
      run_inputs += found.size();
      const std::size_t from = pool.size();
      for (std::size_t i = 0; i < found.size(); ++i) {
        add_to(pool, cfg, found[i], (*out)[i]);
        if (f.observations.size() < 200)
          f.observations.push_back(observation(
              cfg, found[i], (*out)[i],
              {{algorithm_name(s[0], K) + " " + parameters_json(s[0], K).dump(), predict(dots[0], found[i])}}));
      }
      std::vector<DotConfig> kept = fitting(pool, s, from);
      if (kept.empty()) {
        closest = s;
        s.clear();
        break;
      }
      s = std::move(kept);
    }
    return true;
  }

  // Mismatches of random tiles join the observations: the candidates they refute go, and the
  // search resumes with the candidates left.
  Expected<bool> resume(std::vector<DotConfig>& s, const std::vector<Observation>& examples) {
    const std::size_t from = pool.size();
    for (const Observation& o : examples)
      if (const auto c = case_of(cfg, o)) add_to(pool, cfg, *c, o.output);
    s = fitting(pool, s, from);
    if (auto sep = separate(s); !sep) return sep.error();
    return challenge(s);
  }
};

// The pool the search starts from: the probes' cases, then random inputs of every generator (the
// search never starts blind: a run of `--probe mma.identify` alone has no probe observations at
// all). Returns how many came from the probes.
Expected<std::size_t> seed_pool(Search& search, std::span<const ProbeReading> readings) {
  const MmaConfig& cfg = search.cfg;
  Pool& pool = search.pool;
  pool.K = std::size_t(search.K);
  for (const ProbeReading& x : readings)
    for (const Observation& o : x.finding.observations)
      if (const auto c = case_of(cfg, o)) add_to(pool, cfg, *c, o.output);
  const std::size_t from_probes = pool.size();
  RandomInputs gen(cfg, search.ctx.seed ^ 0x1DE7u);
  const std::vector<DotCase> seeds = draw_inputs(gen, search.K, 48, "random input");
  auto out = mma::run(search.device, cfg, seeds);
  if (!out) return out.error();
  for (std::size_t i = 0; i < seeds.size(); ++i) add_to(pool, cfg, seeds[i], (*out)[i]);
  return from_probes;
}

// The survivors separated and challenged on the device, then a first look at random tiles: a
// choice that fails there is not the unit; its mismatches join the observations, and the search
// goes on. Then the validation on random tiles, where a mismatch is an observation like the
// others: the search resumes with it, twice at most. The choice's validation; none when no
// candidate is left.
Expected<std::optional<Validation>> search_and_validate(Search& search, std::vector<DotConfig>& survivors) {
  const ProbeContext& ctx = search.ctx;
  if (auto sep = search.separate(survivors); !sep) return sep.error();
  if (auto ch = search.challenge(survivors); !ch) return ch.error();
  for (int attempt = 0; attempt < 4 && !survivors.empty(); ++attempt) {
    std::sort(survivors.begin(), survivors.end(), search.by_rank());
    auto look = validate(search.device, search.cfg, survivors.front(), 64u << (2 * attempt),
                         ctx.seed ^ (0x5EED + std::uint64_t(attempt)), 32);
    if (!look) return look.error();
    if (!look->mismatches) break;
    if (auto r = search.resume(survivors, look->examples); !r) return r.error();
  }
  std::optional<Validation> val;
  // A sharded campaign's run validates its share, from seeds of its own (audit::Shard).
  const std::uint64_t tiles = ctx.shard.share(validation_tiles(ctx));
  for (int attempt = 0; !survivors.empty(); ++attempt) {
    keep_nan_exact(search.cfg, search.pool, survivors);
    std::sort(survivors.begin(), survivors.end(), search.by_rank());
    auto run_v = validate(search.device, search.cfg, survivors.front(), tiles,
                          ctx.shard.seed((ctx.seed ^ 0x7A11DA7EULL) + std::uint64_t(attempt)), 16);
    if (!run_v) return run_v.error();
    val = std::move(*run_v);
    if (!val->mismatches || attempt == 2) break;
    if (auto r = search.resume(survivors, val->examples); !r) return r.error();
  }
  return val;
}

// The finding when no candidate is left: how close the nearest come, or the last ones standing.
Finding none_fits(Search& search, const std::vector<Near>& near) {
  Finding& f = search.f;
  const MmaConfig& cfg = search.cfg;
  std::vector<DotConfig>& closest = search.closest;
  f.verdict =
      fmt::format("MODEL: none of the nine algorithms, nor a summation tree, predicts every observation ({} checked)",
                  search.checked);
  if (near.empty() && !closest.empty()) {
    std::sort(closest.begin(), closest.end(), search.by_rank());
    f.message = "the last candidates standing before the device ruled them out: " + describe(cfg, closest.front());
  }
  std::vector<std::string> nearest;
  for (const Near& x : near)
    nearest.push_back(fmt::format("{} mispredicts {} of {}", describe(cfg, x.c), x.misses, search.pool.size()));
  if (!near.empty()) f.message = "the closest candidates: " + join(nearest, "; ", "; ");
  if (auto t = compare_with_table(search.device, cfg, search.ctx, nullptr, f); !t) return failed(t.error());
  return f;
}

// The finding that states the model chosen among the survivors (the canonical one where no input
// separates them: the ambiguity says what they leave open), with its validation.
Finding state_model(Search& search, std::vector<DotConfig>& survivors, Validation& val, Identification& stated) {
  Finding& f = search.f;
  const MmaConfig& cfg = search.cfg;
  const int K = search.K;
  std::sort(survivors.begin(), survivors.end(), search.by_rank());
  const DotConfig chosen = survivors.front();
  const nlohmann::json amb = ambiguity(K, survivors);
  f.parameters["consistent_candidates"] = survivors.size();
  f.parameters["ambiguous"] = amb;
  if (!amb.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : amb.items()) parts.push_back(k + " " + v.get<std::string>());
    f.message = "no input separates these, all predict every observation: " + join(parts, "; ", "; ") +
                " (canonical choice reported)";
  }
  f.parameters["algorithm"] = algorithm_name(chosen, K);
  f.parameters["parameters"] = parameters_json(chosen, K);
  for (Observation& o : val.examples) f.observations.push_back(std::move(o));
  f.parameters["validation"] = {{"tiles", val.tiles},
                                {"elements", val.elements},
                                {"mismatches", val.mismatches},
                                {"mismatched_tiles", val.mismatched_tiles},
                                {"seconds", val.seconds}};
  DotConfig named = chosen;
  if (const auto a = model::find_mma_algorithm(algorithm_name(chosen, K))) named.algorithm = *a;
  stated.model = chosen;
  stated.validation = {val.tiles, val.mismatches, val.elements};
  f.verdict = fmt::format("MODEL: {} predicts all {} observations{}; {}", describe(cfg, named), search.pool.size(),
                          survivors.size() > 1 ? fmt::format(" ({} equivalent candidates)", survivors.size()) : "",
                          validation_words(val.tiles, val.mismatches));
  if (auto t = compare_with_table(search.device, cfg, search.ctx, &chosen, f); !t) return failed(t.error());
  return f;
}

// The identification's finding; the model chosen and its validation go to `stated`.
Finding identify(backends::Device& device, const backends::MmaConfig& cfg, std::span<ProbeReading> readings,
                 const ProbeContext& ctx, Identification& stated) {
  if (!usable(cfg)) return unsupported("the configuration's formats are not floating-point formats the model knows");
  Finding f;
  f.title = kIdentifyTitle;
  f.source = "MMA-Sim (Xie et al. 2025), sections III, IV and V";
  Search search{device, cfg, ctx, f, cfg.k};
  const auto from_probes = seed_pool(search, readings);
  if (!from_probes) return failed(from_probes.error());
  // Every candidate of the model: a verdict is a claim about all of them, so the search never
  // narrows the space to the ranges the probes measured (the probes' cases are observations).
  const Space space = full_space(cfg, measured_tree(readings));
  std::vector<DotConfig> survivors = survivors_of(cfg, space, search.pool, search.checked);
  expand(cfg, search.pool, survivors, search.checked);
  // Nothing fits the probes' cases: how close the nearest candidates come.
  std::vector<Near> near;
  if (survivors.empty()) near = closest_candidates(cfg, space, search.pool, 3);
  auto val = search_and_validate(search, survivors);
  if (!val) return failed(val.error());
  f.parameters["observations"] = {{"probes", *from_probes},
                                  {"random", 48 * std::size(all_gens)},
                                  {"separating_inputs", search.run_inputs},
                                  {"separation_rounds", search.rounds}};
  f.parameters["candidates_checked"] = search.checked;
  // Every probe's verdict follows from the candidates left (MmaProbe::question).
  if (search.closest.empty())
    for (const Near& x : near) search.closest.push_back(x.c);
  judge_findings(cfg, survivors, search.closest, readings);
  if (survivors.empty()) return none_fits(search, near);
  return state_model(search, survivors, **val, stated);
}

}  // namespace

Identification identify_mma(backends::Device& device, const backends::MmaConfig& cfg, std::span<ProbeReading> readings,
                            const ProbeContext& ctx) {
  Identification id;
  id.finding = identify(device, cfg, readings, ctx, id);
  return id;
}

}  // namespace gp::mma

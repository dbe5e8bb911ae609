#include "audit/health_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>

#include "audit/validation.hpp"
#include "backends/reference/profile.hpp"
#include "tests_mma/identify/validate.hpp"

namespace gp::audit {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kTitle = "Check against the recorded profile";

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The seed of a target's round: the rounds are numbered across shards (round r of shard i is round
// r * N + i of the campaign), so that the shards of one campaign draw disjoint cases.
std::uint64_t round_seed(const CheckSettings& s, std::size_t target, std::uint64_t round) {
  const Shard campaign{round * s.shard.count + s.shard.index, std::numeric_limits<std::uint64_t>::max()};
  return campaign.seed(s.seed ^ (0x9e3779b97f4a7c15ULL * (target + 1)));
}

// What one round found: cases run, mismatches, the first of them; an error ends the target.
struct Round {
  std::uint64_t cases = 0, mismatches = 0;  // cases: what a round's size counts (operations; MMA: tiles)
  std::uint64_t compared = 0;               // MMA: the dot products compared, where mismatches are counted
  std::vector<Observation> first;
  std::set<std::string> operations;  // scalar: those of the first mismatches
};

// Runs rounds of growing size until the budget is spent or a mismatch is found: the first round is
// small, the next ones sized from the rate so far (at most four times the cases run before).
template <class RunRound>
Expected<Round> rounds(double budget, std::uint64_t first_size, RunRound run_round) {
  const auto start = Clock::now();
  Round total;
  std::uint64_t n = first_size;
  for (std::uint64_t r = 0;; ++r) {
    auto got = run_round(n, r);
    if (!got) return got.error();
    total.cases += got->cases;
    total.compared += got->compared;
    total.mismatches += got->mismatches;
    total.operations.insert(got->operations.begin(), got->operations.end());
    if (total.first.empty()) total.first = std::move(got->first);
    const double spent = since(start), left = budget - spent;
    if (total.mismatches || left <= 0 || total.cases == 0) return total;
    const double per_case = spent / double(total.cases);
    n = std::min<std::uint64_t>(std::uint64_t(left / std::max(per_case, 1e-9)), 4 * total.cases);
    if (n < first_size / 4 + 1) return total;
  }
}

Finding target_finding(std::string_view probe, const std::string& where) {
  Finding f;
  f.probe = probe;
  f.title = kTitle;
  f.source = "the recorded result " + where;
  return f;
}

void not_checked(Finding& f, std::string why) {
  f.status = Status::unsupported;
  f.message = std::move(why);
  f.verdict = "CHECK: not checked: " + f.message;
}

// `recorded`: what the check held the device to, in the profile's words, for the operations that
// differed (scalar) or the configuration's model (MMA).
void conclude(Finding& f, const Round& r, std::uint64_t seed, std::string_view unit,
              const std::function<std::string(const std::set<std::string>&)>& recorded) {
  f.parameters["mismatches"] = r.mismatches;
  f.parameters["seed"] = seed;
  if (r.mismatches == 0) {
    f.verdict = fmt::format("CHECK: {} random {} computed as recorded (seed {})", r.compared, unit, seed);
    return;
  }
  std::string where;
  for (const std::string& op : r.operations) where += (where.empty() ? "" : ", ") + op;
  f.verdict =
      fmt::format("CHECK: {} of {} random {} differ from the recorded profile{}; recorded {} (seed {})", r.mismatches,
                  r.compared, unit, where.empty() ? "" : ": " + where, recorded(r.operations), seed);
  f.observations = r.first;
}

Finding check_scalar(backends::Device& device, const std::string& format, const backends::ScalarProfile& keys,
                     const std::string& where, const CheckSettings& s, std::size_t index, double budget) {
  Finding f = target_finding(kCheckScalar, where);
  f.format = format;
  const auto fmt_ = model::find_format(format);
  const auto& formats = device.caps().formats;
  if (!fmt_ || std::find(formats.begin(), formats.end(), *fmt_) == formats.end()) {
    not_checked(f, "the device does not compute in " + format);
    return f;
  }
  if (keys.validation && keys.validation->mismatches) {
    not_checked(f, fmt::format("the recorded profile did not predict its device ({} of {} random cases differed)",
                               keys.validation->mismatches, keys.validation->cases));
    return f;
  }
  const auto got = rounds(budget, 800, [&](std::uint64_t n, std::uint64_t r) -> Expected<Round> {
    ProbeContext ctx;
    ctx.seed = round_seed(s, index, r);
    ctx.validation_cases = n;
    backends::ScalarProfile p = keys;
    const Finding v = validate_scalar_profile(device, **fmt_, p, ctx);
    if (v.status != Status::ok)
      return Error{v.message, v.status == Status::unsupported ? ErrorKind::unsupported : ErrorKind::failed};
    if (!p.validation) return Error{"the validation ran no case", ErrorKind::failed};
    Round out{p.validation->cases, p.validation->mismatches, p.validation->cases, v.observations, {}};
    for (const Observation& o : v.observations) out.operations.insert(o.note);  // each names its operation
    return out;
  });
  if (!got) {
    Finding e = failed(got.error());
    e.probe = f.probe, e.format = f.format, e.title = f.title, e.source = f.source;
    return e;
  }
  f.parameters["cases"] = got->cases;
  if (keys.validation && !keys.validation->not_validated.empty())
    f.parameters["not_validated"] = keys.validation->not_validated;
  conclude(f, *got, s.seed, "operations", [&](const std::set<std::string>& ops) {
    // The recorded keys of the operations that differed ("mul {...}"), else the whole unit's.
    const nlohmann::json all = backends::to_json(keys);
    std::string said;
    for (const std::string& op : ops)
      if (all.contains(op)) said += fmt::format("{}{} {}", said.empty() ? "" : ", ", op, all[op].dump());
    return said.empty() ? fmt::format("profile.scalar.{} {}", format, all.dump()) : said;
  });
  return f;
}

Finding check_mma(backends::Device& device, const backends::MmaConfig& recorded, const backends::Profile& profile,
                  const std::string& where, const CheckSettings& s, std::size_t index, double budget) {
  Finding f = target_finding(kCheckMma, where);
  f.config = recorded.name();
  const auto& configs = device.caps().mma;
  const auto here = std::find_if(configs.begin(), configs.end(),
                                 [&](const backends::MmaConfig& c) { return c.name() == recorded.name(); });
  const model::DotConfig* model = backends::mma_model(profile.models, recorded);
  const std::string named = model ? fmt::format("{} {}", backends::algorithm_name(*model, recorded.k),
                                                backends::parameters_json(*model, recorded.k).dump())
                                  : "";
  if (here == configs.end()) {
    not_checked(f, "the device has no such configuration");
    return f;
  }
  const auto v = profile.validations.find(backends::mma_model_key(recorded));
  if (v != profile.validations.end() && v->second.mismatches) {
    not_checked(f, fmt::format("the recorded model did not predict its device ({} of {} elements differed)",
                               v->second.mismatches, v->second.elements));
    return f;
  }
  f.parameters["model"] = named;
  const auto got = rounds(budget, 8, [&](std::uint64_t n, std::uint64_t r) -> Expected<Round> {
    auto val = mma::validate(device, *here, *model, n, round_seed(s, index, r), 1);
    if (!val) return val.error();
    return Round{val->tiles, val->mismatches, val->elements, std::move(val->examples), {}};
  });
  if (!got) {
    Finding e = failed(got.error());
    e.probe = f.probe, e.config = f.config, e.title = f.title, e.source = f.source;
    return e;
  }
  f.parameters["tiles"] = got->cases;
  f.parameters["elements"] = got->compared;
  conclude(f, *got, s.seed, "dot products", [&](const std::set<std::string>&) { return named; });
  return f;
}

}  // namespace

Expected<std::vector<Finding>> check_against(backends::Device& device, const nlohmann::json& result,
                                             const std::string& where, const CheckSettings& settings,
                                             const CheckProgress& progress) {
  auto profiles = backends::parse_profiles(result, where);
  if (!profiles) return profiles.error();
  if (profiles->size() != 1)
    return Error{fmt::format("{}: holds {} profiles; check takes one device's", where, profiles->size()),
                 ErrorKind::invalid};
  const backends::Profile& recorded = profiles->front();
  const std::size_t targets = recorded.scalar.size() + recorded.mma.size();
  if (targets == 0) return Error{where + ": records no scalar unit and no MMA model to check", ErrorKind::invalid};
  const double budget = settings.seconds / double(targets);
  std::vector<Finding> out;
  std::size_t index = 0;
  const auto timed = [&](std::string_view target, auto check) {
    if (progress) progress(target);
    const auto start = Clock::now();
    Finding f = check();
    f.duration_s = since(start);
    f.parameters["against"] = where;
    out.push_back(std::move(f));
    ++index;
  };
  for (const auto& [format, keys] : recorded.scalar)
    timed(format, [&] { return check_scalar(device, format, keys, where, settings, index, budget); });
  for (const backends::MmaConfig& c : recorded.mma)
    timed(c.name(), [&] { return check_mma(device, c, recorded, where, settings, index, budget); });
  return out;
}

bool check_passed(const std::vector<Finding>& findings) {
  bool any = false;
  for (const Finding& f : findings) {
    if (f.status == Status::error) return false;
    if (f.status != Status::ok) continue;
    if (f.parameters.value("mismatches", std::uint64_t{0}) != 0) return false;
    any = true;
  }
  return any;
}

}  // namespace gp::audit

// Probes and their registry. A scalar probe runs once per format the device
// computes in; it builds inputs, evaluates them through Device::scalar, and compares the outputs
// with each hypothesis' prediction from the model. It never knows which backend it runs on.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include <charconv>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "audit/finding.hpp"
#include "audit/verdict.hpp"
#include "backends/device.hpp"
#include "model/mma_algorithms.hpp"
#include "model/scalar_unit.hpp"

namespace gp::audit {

// Test intensity: quick in CI, standard by default, exhaustive on demand.
enum class Tier { quick, standard, full };

// What one device's probes measured that others build on, per format: the adders and the
// multipliers that reproduce its outputs, identified once by the first probe that needs them
// (tests_scalar/probe_support.hpp, remembered). Values are what the device's outputs imply, so a
// context must serve one device: the runner makes one per device.
struct ProbeMemo {
  std::mutex lock;
  std::map<const model::Format*, std::vector<model::ScalarUnit>> adders;
  std::map<const model::Format*, std::vector<model::MultiplierParams>> multipliers;
};

// One job's share of a campaign of random validation split over N jobs (a Slurm array: --shard I/N,
// 0 <= I < N): each shard draws its share of the cases from seeds of its own, so that the shards'
// cases are disjoint and each is reproducible alone; the probes themselves run whole in every shard.
struct Shard {
  std::uint64_t index = 0, count = 1;

  bool on() const { return count > 1; }
  // "I/N"; nullopt when the text is not one.
  static std::optional<Shard> parse(std::string_view text) {
    const auto slash = text.find('/');
    const auto number = [](std::string_view t, std::uint64_t& v) {
      const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size();
    };
    Shard s;
    if (slash == std::string_view::npos || !number(text.substr(0, slash), s.index) ||
        !number(text.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count)
      return std::nullopt;
    return s;
  }
  // This shard's part of n cases.
  std::uint64_t share(std::uint64_t n) const { return on() ? (n + count - 1) / count : n; }
  // The seed this shard draws from where a whole run would draw from `base` (the same when not on):
  // splitmix64's finaliser of the two, so that nearby shards draw unrelated cases.
  std::uint64_t seed(std::uint64_t base) const {
    if (!on()) return base;
    std::uint64_t x = base ^ (0x9e3779b97f4a7c15ULL * (index + 1));
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
};

struct ProbeContext {
  Tier tier = Tier::standard;
  std::uint64_t seed = 1;
  // Random tiles of an MMA configuration's final validation; 0: the tier's (10^4, 10^5, 10^6).
  std::uint64_t validation_tiles = 0;
  // Random cases of a scalar profile's validation, over its operations; 0: the tier's (10^4, 10^5, 10^6).
  std::uint64_t validation_cases = 0;
  Shard shard = {};  // the validations' share of a sharded campaign
  std::shared_ptr<ProbeMemo> memo = std::make_shared<ProbeMemo>();
  // Random-case counts scaled by the tier: quick / standard / full.
  std::uint64_t cases(std::uint64_t quick, std::uint64_t standard, std::uint64_t full) const {
    return tier == Tier::quick ? quick : tier == Tier::standard ? standard : full;
  }
};

class ScalarProbe {
 public:
  virtual ~ScalarProbe() = default;
  virtual std::string_view id() const = 0;      // "scalar.add.guard_bits"
  virtual std::string_view title() const = 0;   // "Guard bits of the adder"
  virtual std::string_view source() const = 0;  // "Daumas et al. 2006, section 2.3"
  // Whether the probe means anything for this format (some are binary16-only, say); a probe that
  // applies but needs a missing capability reports `unsupported` from run().
  virtual bool applies(const model::Format&) const { return true; }
  virtual Finding run(backends::Device& device, const model::Format& format, const ProbeContext& ctx) const = 0;
  // For a probe that concludes from candidate units (tests_scalar/probe_support.hpp): its question
  // asked of a unit, the answer a device made of that unit must get (null: the question does not
  // apply to it); nullopt for a probe that measures and asks nothing. Tests hold verdicts to it.
  virtual std::optional<Answer> ask(const model::ScalarUnit&) const { return std::nullopt; }
  // The profile fragment a stated answer gives (Finding::profile).
  virtual backends::ScalarProfile profile_of(const Answer&) const { return {}; }
};

// The question an MMA probe asks of a candidate model (verdict.hpp): the candidate's answer for
// the configuration's formats and K, from its parameters alone; null where the question does not
// apply to that kind of unit (the carry-out bits of a fixed-point accumulator, asked of an FMA chain).
struct MmaQuestion {
  Question question;
  std::function<Answer(const backends::MmaConfig& config, const model::DotConfig& candidate)> answer;
};

// An MMA probe runs once per cooperative-matrix configuration the device offers, through
// Device::mma, building its tiles for the configuration's formats and K. Its verdict is what the
// identification's surviving candidates answer to its question (tests_mma/questions.hpp).
class MmaProbe {
 public:
  virtual ~MmaProbe() = default;
  virtual std::string_view id() const = 0;  // "mma.accumulation.precision"
  virtual std::string_view title() const = 0;
  virtual std::string_view source() const = 0;
  virtual bool applies(const backends::MmaConfig&) const { return true; }
  virtual Finding run(backends::Device& device, const backends::MmaConfig& config, const ProbeContext& ctx) const = 0;
  // Null for a check that asks the model nothing (the layout check, which gates the others).
  virtual const MmaQuestion* question() const = 0;
};

// Shell-style glob (* and ?) on probe ids.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace gp::audit

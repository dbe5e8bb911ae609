// binary16 add and mul against the model on every pair of operands (2^32 pairs each, Tier::full)
// or on uniformly random bit patterns otherwise (2^20 pairs standard, 2^16 quick): NaNs,
// infinities, zeros and subnormals included. The run streams in chunks of 2^20 pairs. Mismatches
// are counted against the correctly rounded model and two alternatives (chopped; flush to zero),
// NaN outputs matching NaN predictions (payload differences are counted apart); the first
// mismatches become observations. The comparison of each batch runs on worker threads while the
// next batch is evaluated (device calls stay on the calling thread).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <future>
#include <random>
#include <thread>

#include "tests_scalar/families.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace paranoia {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;  // pairs per device batch

struct Alternative {
  const char* name;
  model::Options o;
};

std::array<Alternative, 3> alternatives() {
  model::Options rz, ftz;
  rz.rounding = model::Rounding::rz;
  ftz.ftz_in = ftz.ftz_out = true;
  return {Alternative{"correctly rounded", {}}, Alternative{"chopped", rz}, Alternative{"flush to zero", ftz}};
}

// What a slice of pairs gave: mismatch counts per alternative and the first mismatches.
struct Mismatch {
  std::uint64_t index;
  u64 a, b, d;
  std::array<u64, 3> pred;
};
struct OpTally {
  std::uint64_t pairs = 0;
  std::array<std::uint64_t, 3> mismatches{};
  std::uint64_t nan_payload = 0;
  std::vector<Mismatch> first;  // in pair order, at most kFirst

  void merge(OpTally&& o) {
    pairs += o.pairs;
    for (std::size_t h = 0; h < mismatches.size(); ++h) mismatches[h] += o.mismatches[h];
    nan_payload += o.nan_payload;
    for (Mismatch& m : o.first)
      if (first.size() < kFirst) first.push_back(m);
  }
  static constexpr std::size_t kFirst = 8;
};

// Compares device outputs with the alternatives on pairs [lo, hi) of a chunk whose first pair has
// index `base`. Each alternative's predictions are evaluated a batch of kBatch pairs at a time.
OpTally compare(const Format& f, Node op, std::span<const u64> operands, std::span<const u64> out, std::size_t lo,
                std::size_t hi, std::uint64_t base) {
  constexpr std::size_t kBatch = 4096;
  const auto alt = alternatives();
  const model::Op mop = op == Node::add ? model::Op::add : model::Op::mul;
  std::array<std::vector<model::Result>, 3> predicted;
  OpTally t;
  t.pairs = hi - lo;
  for (std::size_t start = lo; start < hi; start += kBatch) {
    const std::size_t n = std::min(kBatch, hi - start);
    for (std::size_t h = 0; h < alt.size(); ++h) {
      predicted[h].resize(n);
      model::evaluate(mop, f, alt[h].o, operands.subspan(2 * start, 2 * n), predicted[h], f);
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = start + k;
      const u64 a = operands[2 * i], b = operands[2 * i + 1], d = out[i];
      const bool d_nan = model::is_nan(model::classify(f, d));
      std::array<u64, 3> pred{};
      bool mismatch = false;
      for (std::size_t h = 0; h < alt.size(); ++h) {
        pred[h] = predicted[h][k].bits;
        if (d == pred[h]) continue;
        const bool p_nan = model::is_nan(model::classify(f, pred[h]));
        if (d_nan && p_nan) {
          if (h == 0) ++t.nan_payload;
          continue;
        }
        ++t.mismatches[h];
        if (h == 0) mismatch = true;
      }
      if (mismatch && t.first.size() < OpTally::kFirst) t.first.push_back({base + i, a, b, d, pred});
    }
  }
  return t;
}

// The same over worker threads (the model is pure: no shared state).
OpTally compare_parallel(const Format& f, Node op, std::vector<u64> operands, std::vector<u64> out,
                         std::uint64_t base) {
  const std::size_t n = out.size();
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<OpTally> parts(workers);
  std::vector<std::thread> threads;
  const std::size_t slice = (n + workers - 1) / workers;
  for (std::size_t w = 0; w < workers; ++w) {
    const std::size_t lo = std::min(n, w * slice), hi = std::min(n, lo + slice);
    threads.emplace_back([&, w, lo, hi] { parts[w] = compare(f, op, operands, out, lo, hi, base); });
  }
  for (std::thread& t : threads) t.join();
  OpTally total;
  for (OpTally& p : parts) total.merge(std::move(p));
  return total;
}

class Binary16ExhaustiveProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.binary16.exhaustive"; }
  std::string_view title() const override { return "binary16 add and mul on every pair of operands"; }
  std::string_view source() const override {
    return "gpuparanoia's own: every operand pair against the model (a sample below --full)";
  }
  bool applies(const Format& f) const override { return f.name == "binary16"; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const bool full = ctx.tier == audit::Tier::full;
    const std::uint64_t sampled = ctx.cases(std::uint64_t{1} << 16, std::uint64_t{1} << 20, 0);
    audit::Finding fi;
    std::vector<std::string> parts;
    for (Node op : {Node::add, Node::mul}) {
      auto t = tally(device, f, op, full, sampled, ctx.seed, fi);
      if (!t) return audit::failed(t.error());
      const auto alt = alternatives();
      nlohmann::json mm = nlohmann::json::object();
      std::size_t best = 0;
      for (std::size_t h = 0; h < alt.size(); ++h) {
        mm[alt[h].name] = t->mismatches[h];
        if (t->mismatches[h] < t->mismatches[best]) best = h;
      }
      const std::string key = op == Node::add ? "add" : "mul";
      fi.parameters[key] = {{"pairs", t->pairs},
                            {"exhaustive", full},
                            {"mismatches", mm},
                            {"nan_payload_differences", t->nan_payload},
                            {"best", alt[best].name}};
      const std::string over = full ? fmt::format("all {} pairs", t->pairs) : fmt::format("{} random pairs", t->pairs);
      if (t->mismatches[0] == 0)
        parts.push_back(fmt::format("{} matches the correctly rounded model on {}", key, over));
      else
        parts.push_back(fmt::format("{}: {} mismatches with the correctly rounded model on {}{}", key, t->mismatches[0],
                                    over,
                                    best != 0 ? fmt::format(" ({}: {})", alt[best].name, t->mismatches[best]) : ""));
    }
    fi.parameters["seed"] = ctx.seed;
    fi.verdict = "BINARY16: " + join(parts, "; ");
    return fi;
  }

 private:
  // Device batches of kChunk pairs on this thread; each batch's comparison runs on worker threads
  // while the next batch is built and evaluated.
  static Expected<OpTally> tally(backends::Device& device, const Format& f, Node op, bool full, std::uint64_t sampled,
                                 std::uint64_t seed, audit::Finding& fi) {
    const Expr e = backends::binary(op, f);
    OpTally t;
    std::mt19937_64 rng(seed ^ (0x6231362100ULL + std::uint64_t(op)));
    const std::uint64_t total = full ? std::uint64_t{1} << 32 : sampled;
    std::future<OpTally> pending;
    for (std::uint64_t start = 0; start < total; start += kChunk) {
      const std::uint64_t count = std::min<std::uint64_t>(kChunk, total - start);
      std::vector<u64> operands(2 * count);
      for (std::uint64_t i = 0; i < count; ++i) {
        if (full) {
          const std::uint64_t pair = start + i;
          operands[2 * i] = pair >> 16;
          operands[2 * i + 1] = pair & 0xffff;
        } else {
          const std::uint64_t r = rng();
          operands[2 * i] = r & 0xffff;
          operands[2 * i + 1] = (r >> 16) & 0xffff;
        }
      }
      auto r = device.scalar({&e, operands});
      if (pending.valid()) t.merge(pending.get());
      if (!r) return r.error();
      if (r->size() != count) return Error{"the device returned the wrong number of results"};
      pending =
          std::async(std::launch::async, compare_parallel, std::cref(f), op, std::move(operands), std::move(*r), start);
    }
    if (pending.valid()) t.merge(pending.get());
    const auto alt = alternatives();
    for (const Mismatch& m : t.first) {
      audit::Observation o{
          {m.a, m.b}, m.d, {},
          16,         16,  fmt::format("{} {} {}", show(f, m.a), op == Node::add ? "+" : "*", show(f, m.b))};
      for (std::size_t h = 0; h < alt.size(); ++h) o.predictions.emplace_back(alt[h].name, m.pred[h]);
      fi.observations.push_back(std::move(o));
    }
    return t;
  }
};

}  // namespace
}  // namespace paranoia

void add_binary16_exhaustive_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const paranoia::Binary16ExhaustiveProbe probe;
  out.push_back(&probe);
}

}  // namespace gp::scalar

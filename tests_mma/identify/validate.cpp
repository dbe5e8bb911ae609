#include "tests_mma/identify/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <optional>
#include <thread>

#include "model/ops.hpp"
#include "tests_mma/support.hpp"

namespace gp::mma {

namespace {

// xoshiro256** (Blackman and Vigna): random tiles are drawn by the hundred million.
class Xoshiro {
 public:
  explicit Xoshiro(std::uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  std::uint64_t operator()() {
    const std::uint64_t r = std::rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return r;
  }

 private:
  std::uint64_t s_[4];
};

// Random normal values of one format with leading exponents in [-spread, spread] (clipped to the
// format), random fraction and sign: drawn from one 64-bit word each.
struct NormalDraw {
  const model::Format* f;
  int lo, hi;  // biased exponent fields
  std::uint64_t operator()(std::uint64_t r) const {
    const std::uint64_t frac = f->man_bits ? r & f->man_mask() : 0;
    const auto field = std::uint64_t(lo + int((r >> 40) % std::uint64_t(hi - lo + 1)));
    std::uint64_t mag = (field << f->man_bits) | frac;
    if (mag > f->max_finite_magnitude()) mag = f->max_finite_magnitude();
    const bool neg = f->has_sign() && ((r >> 63) & 1);
    return model::pack(*f, neg, mag);
  }
};

NormalDraw normal_draw(const model::Format& f, int spread) {
  const int emin = f.emin(), emax = f.emax();
  const int lo = std::max(emin, -spread), hi = std::min(emax, spread);
  return {&f, lo + f.bias, std::max(lo, hi) + f.bias};
}

struct Batch {
  std::size_t tiles = 0;
  std::vector<std::uint64_t> a, b, c, d;
};

// What the comparison of tiles with the model found.
struct ValidationTally {
  std::uint64_t mismatches = 0, tiles = 0;
  std::vector<audit::Observation> examples;  // the first mismatches, max_examples at most
};

// Draws random tiles for the device and compares its D with the model's, element by element.
class TileValidator {
 public:
  TileValidator(const backends::MmaConfig& cfg, const model::DotConfig& model, std::uint64_t seed, int max_examples)
      : cfg_(cfg),
        model_(model),
        M(std::size_t(cfg.m)),
        N(std::size_t(cfg.n)),
        K(std::size_t(cfg.k)),
        na_(normal_draw(*cfg.a, spread(*cfg.a))),
        nb_(normal_draw(*cfg.b, spread(*cfg.b))),
        nc_(normal_draw(*cfg.c, std::min(spread(*cfg.a) + spread(*cfg.b), std::max(1, cfg.c->emax() / 2)))),
        ma_(cfg.a->storage_mask()),
        mb_(cfg.b->storage_mask()),
        mc_(cfg.c->storage_mask()),
        rng_(seed),
        dot_(model),
        max_examples_(max_examples),
        threads_(std::max<std::size_t>(1, std::min<std::size_t>(64, std::thread::hardware_concurrency()))) {}

  // Fills a batch: even tiles random bit patterns, odd tiles random normal values.
  void fill(Batch& bt, std::size_t n, std::uint64_t first) {
    bt.tiles = n;
    bt.a.resize(n * M * K);
    bt.b.resize(n * K * N);
    bt.c.resize(n * M * N);
    for (std::size_t t = 0; t < n; ++t) {
      std::uint64_t* a = &bt.a[t * M * K];
      std::uint64_t* b = &bt.b[t * K * N];
      std::uint64_t* c = &bt.c[t * M * N];
      if ((first + t) % 2 == 0) {
        for (std::size_t i = 0; i < M * K; ++i) a[i] = rng_() & ma_;
        for (std::size_t i = 0; i < K * N; ++i) b[i] = rng_() & mb_;
        for (std::size_t i = 0; i < M * N; ++i) c[i] = rng_() & mc_;
      } else {
        for (std::size_t i = 0; i < M * K; ++i) a[i] = na_(rng_());
        for (std::size_t i = 0; i < K * N; ++i) b[i] = nb_(rng_());
        for (std::size_t i = 0; i < M * N; ++i) c[i] = nc_(rng_());
      }
    }
  }

  // Compares a batch with the model (on the worker thread), its tiles split over the machine's
  // cores: the model, not the device, is what takes the time (10^6 tiles of a 64x8x16 warpgroup
  // tile are 5 * 10^8 dot products). The parts are added in tile order: the examples are the first
  // mismatches.
  void check(const Batch& bt) {
    const std::size_t chunk = (bt.tiles + threads_ - 1) / threads_;
    std::vector<ValidationTally> parts((bt.tiles + chunk - 1) / chunk);
    std::vector<std::thread> helpers;
    for (std::size_t p = 1; p < parts.size(); ++p)
      helpers.emplace_back([&, p] { check_tiles(bt, p * chunk, std::min(bt.tiles, (p + 1) * chunk), parts[p]); });
    check_tiles(bt, 0, std::min(bt.tiles, chunk), parts[0]);
    for (std::thread& h : helpers) h.join();
    for (ValidationTally& part : parts) {
      total_.mismatches += part.mismatches;
      total_.tiles += part.tiles;
      for (auto& e : part.examples)
        if (int(total_.examples.size()) < max_examples_) total_.examples.push_back(std::move(e));
    }
  }

  ValidationTally& total() { return total_; }

 private:
  static int spread(const model::Format& f) { return std::max(1, std::min(8, (f.emax() - f.emin()) / 6)); }

  // Compares a batch's tiles [t0, t1) with the model.
  void check_tiles(const Batch& bt, std::size_t t0, std::size_t t1, ValidationTally& tally) const {
    std::vector<std::uint64_t> bt_t(K * N);
    for (std::size_t t = t0; t < t1; ++t) {
      const std::uint64_t* a = &bt.a[t * M * K];
      const std::uint64_t* b = &bt.b[t * K * N];
      const std::uint64_t* c = &bt.c[t * M * N];
      const std::uint64_t* d = &bt.d[t * M * N];
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j < N; ++j) bt_t[j * K + k] = b[k * N + j];
      bool tile_bad = false;
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
          const std::uint64_t p = dot_(c[i * N + j], {a + i * K, K}, {&bt_t[j * K], K});
          const std::uint64_t o = d[i * N + j];
          if (agrees(model_, p, o)) continue;
          ++tally.mismatches;
          tile_bad = true;
          if (int(tally.examples.size()) < max_examples_) {
            DotCase x;
            x.c = c[i * N + j];
            x.a.assign(a + i * K, a + i * K + K);
            x.b.assign(&bt_t[j * K], &bt_t[j * K] + K);
            x.note = fmt::format("validation mismatch: element ({},{}) of a random tile", i, j);
            tally.examples.push_back(observation(cfg_, x, o, {{"model", p}}));
          }
        }
      tally.tiles += tile_bad;
    }
  }

  const backends::MmaConfig& cfg_;
  const model::DotConfig& model_;
  const std::size_t M, N, K;
  const NormalDraw na_, nb_, nc_;
  const std::uint64_t ma_, mb_, mc_;
  Xoshiro rng_;
  const model::Dot dot_;
  const int max_examples_;
  const std::size_t threads_;
  ValidationTally total_;
};

}  // namespace

Expected<Validation> validate(backends::Device& device, const backends::MmaConfig& cfg, const model::DotConfig& model,
                              std::uint64_t tiles, std::uint64_t seed, int max_examples) {
  if (const std::string why = model::check(model); !why.empty()) return Error{why, ErrorKind::invalid};
  const auto start = std::chrono::steady_clock::now();
  const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n), K = std::size_t(cfg.k);
  const std::size_t per_batch =
      std::max<std::size_t>(1, std::min<std::size_t>(4096, (std::size_t{1} << 20) / (M * N * K + 1)));
  TileValidator checker(cfg, model, seed, max_examples);
  // Each batch is compared on a worker thread while the device runs the next.
  Batch batches[2];
  std::thread worker;
  std::uint64_t done = 0;
  int cur = 0;
  std::optional<Error> failure;
  while (done < tiles) {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(per_batch, tiles - done));
    Batch& bt = batches[cur];
    checker.fill(bt, n, done);
    auto out = device.mma({&cfg, bt.a, bt.b, bt.c});
    if (!out) {
      failure = out.error();
      break;
    }
    if (out->size() != n * M * N) {
      failure = Error{"the device returned a D of the wrong size"};
      break;
    }
    bt.d = std::move(*out);
    if (worker.joinable()) worker.join();
    worker = std::thread([&, cur] { checker.check(batches[cur]); });
    done += n;
    cur ^= 1;
  }
  if (worker.joinable()) worker.join();
  if (failure) return *failure;
  Validation v;
  v.mismatches = checker.total().mismatches;
  v.mismatched_tiles = checker.total().tiles;
  v.examples = std::move(checker.total().examples);
  v.tiles = done;
  v.elements = done * M * N;
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return v;
}

}  // namespace gp::mma

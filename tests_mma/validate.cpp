#include "tests_mma/validate.hpp"

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

}  // namespace

Expected<Validation> validate(backends::Device& device, const backends::MmaConfig& cfg, const model::DotConfig& model,
                              std::uint64_t tiles, std::uint64_t seed, int max_examples) {
  if (const std::string why = model::check(model); !why.empty()) return Error{why, ErrorKind::invalid};
  const auto start = std::chrono::steady_clock::now();
  const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n), K = std::size_t(cfg.k);
  const model::Format &fa = *cfg.a, &fb = *cfg.b, &fc = *cfg.c;
  const std::size_t per_batch =
      std::max<std::size_t>(1, std::min<std::size_t>(4096, (std::size_t{1} << 20) / (M * N * K + 1)));
  const auto spread = [](const model::Format& f) { return std::max(1, std::min(8, (f.emax() - f.emin()) / 6)); };
  const NormalDraw na = normal_draw(fa, spread(fa)), nb = normal_draw(fb, spread(fb)),
                   nc = normal_draw(fc, std::min(spread(fa) + spread(fb), std::max(1, fc.emax() / 2)));
  const std::uint64_t ma = fa.storage_mask(), mb = fb.storage_mask(), mc = fc.storage_mask();
  Xoshiro rng(seed);
  const model::Dot dot(model);
  Validation v;

  // Fills a batch: even tiles random bit patterns, odd tiles random normal values.
  const auto fill = [&](Batch& bt, std::size_t n, std::uint64_t first) {
    bt.tiles = n;
    bt.a.resize(n * M * K);
    bt.b.resize(n * K * N);
    bt.c.resize(n * M * N);
    for (std::size_t t = 0; t < n; ++t) {
      std::uint64_t* a = &bt.a[t * M * K];
      std::uint64_t* b = &bt.b[t * K * N];
      std::uint64_t* c = &bt.c[t * M * N];
      if ((first + t) % 2 == 0) {
        for (std::size_t i = 0; i < M * K; ++i) a[i] = rng() & ma;
        for (std::size_t i = 0; i < K * N; ++i) b[i] = rng() & mb;
        for (std::size_t i = 0; i < M * N; ++i) c[i] = rng() & mc;
      } else {
        for (std::size_t i = 0; i < M * K; ++i) a[i] = na(rng());
        for (std::size_t i = 0; i < K * N; ++i) b[i] = nb(rng());
        for (std::size_t i = 0; i < M * N; ++i) c[i] = nc(rng());
      }
    }
  };
  // Compares a batch's tiles [t0, t1) with the model.
  struct Tally {
    std::uint64_t mismatches = 0, tiles = 0;
    std::vector<audit::Observation> examples;
  };
  const auto check_tiles = [&](const Batch& bt, std::size_t t0, std::size_t t1, Tally& tally) {
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
          const std::uint64_t p = dot(c[i * N + j], {a + i * K, K}, {&bt_t[j * K], K});
          const std::uint64_t o = d[i * N + j];
          if (agrees(model, p, o)) continue;
          ++tally.mismatches;
          tile_bad = true;
          if (int(tally.examples.size()) < max_examples) {
            DotCase x;
            x.c = c[i * N + j];
            x.a.assign(a + i * K, a + i * K + K);
            x.b.assign(&bt_t[j * K], &bt_t[j * K] + K);
            x.note = fmt::format("validation mismatch: element ({},{}) of a random tile", i, j);
            tally.examples.push_back(observation(cfg, x, o, {{"model", p}}));
          }
        }
      tally.tiles += tile_bad;
    }
  };
  // Compares a batch with the model on the worker thread, its tiles split over the machine's cores:
  // the model, not the device, is what takes the time (10^6 tiles of a 64x8x16 warpgroup tile are
  // 5 * 10^8 dot products). The parts are added in tile order: the examples are the first mismatches.
  const std::size_t threads = std::max<std::size_t>(1, std::min<std::size_t>(64, std::thread::hardware_concurrency()));
  Tally total;
  const auto check = [&](const Batch& bt) {
    const std::size_t chunk = (bt.tiles + threads - 1) / threads;
    std::vector<Tally> parts((bt.tiles + chunk - 1) / chunk);
    std::vector<std::thread> helpers;
    for (std::size_t p = 1; p < parts.size(); ++p)
      helpers.emplace_back([&, p] { check_tiles(bt, p * chunk, std::min(bt.tiles, (p + 1) * chunk), parts[p]); });
    check_tiles(bt, 0, std::min(bt.tiles, chunk), parts[0]);
    for (std::thread& h : helpers) h.join();
    for (Tally& part : parts) {
      total.mismatches += part.mismatches;
      total.tiles += part.tiles;
      for (auto& e : part.examples)
        if (int(total.examples.size()) < max_examples) total.examples.push_back(std::move(e));
    }
  };

  Batch batches[2];
  std::thread worker;
  std::uint64_t done = 0;
  int cur = 0;
  std::optional<Error> failure;
  while (done < tiles) {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(per_batch, tiles - done));
    Batch& bt = batches[cur];
    fill(bt, n, done);
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
    worker = std::thread([&, cur] { check(batches[cur]); });
    done += n;
    cur ^= 1;
  }
  if (worker.joinable()) worker.join();
  if (failure) return *failure;
  v.mismatches = total.mismatches;
  v.mismatched_tiles = total.tiles;
  v.examples = std::move(total.examples);
  v.tiles = done;
  v.elements = done * M * N;
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return v;
}

}  // namespace gp::mma

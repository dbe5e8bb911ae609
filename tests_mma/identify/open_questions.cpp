#include "tests_mma/identify/open_questions.hpp"

#include <fmt/format.h>

#include <bit>
#include <optional>
#include <random>

#include "model/mma_instructions.hpp"
#include "tests_mma/identify/candidates.hpp"

namespace gp::mma {

namespace {

std::string hex(const Format& f, std::uint64_t v) { return fmt::format("{:0{}x}", v, (f.storage_bits + 3) / 4); }

MmaConfig shape_of(const model::MmaInstruction& ins) {
  MmaConfig c;
  c.m = ins.m;
  c.n = ins.n;
  c.k = ins.k;
  c.a = ins.config.a;
  c.b = ins.config.b;
  c.c = ins.config.c;
  c.d = ins.config.d;
  c.instruction = ins.id();
  return c;
}

// Random inputs of every generator (scale factors of a few binades around 1 where the unit has
// them) that split the hypotheses: for each, one where it differs from the first, then others.
std::vector<DotCase> splitting_inputs(const OpenQuestion& q, std::uint64_t seed, std::vector<DotCase> built) {
  RandomInputs gen(q.cfg, seed);
  std::vector<DotCase> draws = draw_inputs(gen, q.cfg.k, 200, "");
  const DotConfig& unit = q.hypotheses.front().config;
  for (DotCase& x : draws) gen.draw_scales(unit.scale, std::size_t(model::scale_count(unit, q.cfg.k)), x);
  // A product far below c, scaled there, on either side of it: the accumulation width is where it
  // stops reaching the output (c = +-1, the product +-2^-t from 0.5 x 0.5 and the scales).
  if (unit.scale == &model::ue8m0 && q.cfg.a->precision() <= 2 && q.cfg.a == q.cfg.b) {
    const auto half = encode(*q.cfg.a, pow2(-1)), one32 = encode(*q.cfg.c, pow2(0));
    for (int t = 24; t <= 48 && half && one32; ++t)
      for (bool c_neg : {false, true})
        for (bool p_neg : {false, true}) {
          DotCase x;
          x.c = *one32 | (c_neg ? q.cfg.c->sign_mask() : 0);
          x.a.assign(std::size_t(q.cfg.k), 0);
          x.b.assign(std::size_t(q.cfg.k), 0);
          x.a[0] = *half | (p_neg ? q.cfg.a->sign_mask() : 0);
          x.b[0] = *half;
          const std::size_t n = std::size_t(model::scale_count(unit, q.cfg.k));
          x.sa.assign(n, 127);
          x.sb.assign(n, 127);
          x.sa[0] = std::uint64_t(127 - (t - 2) / 2);
          x.sb[0] = std::uint64_t(127 - (t - 2) + (t - 2) / 2);
          draws.push_back(std::move(x));
        }
  }
  draws.insert(draws.end(), built.begin(), built.end());
  std::vector<DotConfig> models;
  for (const Hypothesis& h : q.hypotheses) models.push_back(h.config);
  const Classes k = behaviour_classes(models, draws, 32, 32);
  std::vector<DotCase> out;
  for (std::size_t i : k.splitting) out.push_back(draws[i]);
  return out;
}

// Sums that need every carry-out bit of a fused block: n products of the largest value below 2
// squared (just below 4) and c just below 4, 2 or 0, of one sign, then a full block of products
// and c with random significands in [1.875, 2); random inputs almost never come near (the captured
// sets need at most 3 carry bits above the largest summand, 4 for e4m3).
std::vector<DotCase> carry_inputs(const MmaConfig& cfg, int block) {
  const auto below = [](const Format& f, int e) {
    return encode(f, Exact{false, (model::u128(1) << (f.man_bits + 1)) - 1, e - f.man_bits});
  };
  const auto a = below(*cfg.a, 0), b = below(*cfg.b, 0);
  std::vector<DotCase> v;
  if (!a || !b) return v;
  for (bool neg : {false, true})
    for (int n = 1; n <= std::min(block, cfg.k); ++n)
      for (int ce : {1, 0, -1}) {
        const auto c = ce < 0 ? std::optional<std::uint64_t>(0) : below(*cfg.c, ce);
        if (!c) continue;
        DotCase x;
        x.c = *c | (neg && *c ? cfg.c->sign_mask() : 0);
        x.a.assign(std::size_t(cfg.k), 0);
        x.b.assign(std::size_t(cfg.k), 0);
        for (int k = 0; k < n; ++k) {
          x.a[std::size_t(k)] = *a | (neg ? cfg.a->sign_mask() : 0);
          x.b[std::size_t(k)] = *b;
        }
        v.push_back(std::move(x));
      }
  // And sums near the edge with random low bits: every significand in [1.875, 2), of one sign.
  std::mt19937_64 rng(0xCA77);
  const auto near_top = [&](const Format& f, int e) -> std::optional<std::uint64_t> {
    const int m = f.man_bits;
    if (m < 3) return std::nullopt;
    const model::u128 sig = (model::u128(0xF) << (m - 3)) | (rng() & ((model::u128(1) << (m - 3)) - 1));
    return encode(f, Exact{false, sig, e - m});
  };
  for (int i = 0; i < 32; ++i) {
    const bool neg = i % 2;
    DotCase x;
    x.a.assign(std::size_t(cfg.k), 0);
    x.b.assign(std::size_t(cfg.k), 0);
    const auto c = near_top(*cfg.c, int(rng() % 2));
    if (!c) break;
    x.c = *c | (neg ? cfg.c->sign_mask() : 0);
    for (int k = 0; k < std::min(block, cfg.k); ++k) {
      const auto ak = near_top(*cfg.a, 0), bk = near_top(*cfg.b, 0);
      if (!ak || !bk) return v;
      x.a[std::size_t(k)] = *ak | (neg ? cfg.a->sign_mask() : 0);
      x.b[std::size_t(k)] = *bk;
    }
    v.push_back(std::move(x));
  }
  return v;
}

OpenQuestion make(std::string id, std::string title, std::string source, const char* instruction,
                  std::vector<std::pair<std::string, DotConfig>> variants, std::uint64_t seed,
                  std::vector<DotCase> (*built)(const MmaConfig&, int) = nullptr) {
  const model::MmaInstruction* ins = model::find_mma_instruction(instruction);
  OpenQuestion q{std::move(id), std::move(title), std::move(source), shape_of(*ins), {}, {}};
  for (auto& [name, c] : variants) q.hypotheses.push_back({std::move(name), std::move(c)});
  q.inputs = splitting_inputs(
      q, seed, built ? built(q.cfg, model::effective_block(ins->config, q.cfg.k)) : std::vector<DotCase>{});
  return q;
}

// The question of an instruction's carry-out bits: the model's row (every carry kept) against the
// accumulator one bit short of that, which wraps around as Valpey et al.'s bit-vector adder does.
OpenQuestion carries(std::string id, std::string title, std::string source, const char* instruction,
                     std::uint64_t seed) {
  const model::MmaInstruction& ins = *model::find_mma_instruction(instruction);
  const DotConfig& row = ins.config;
  const int terms = model::effective_block(row, ins.k) + 1;
  // Terms below 2 at the largest leading bit E sum below 2 terms: ceil(log2(terms)) carry bits hold it.
  const int enough = std::bit_width(unsigned(terms - 1));
  DotConfig shorter = row;
  shorter.carry_bits = enough - 1;
  return make(std::move(id), std::move(title), std::move(source), instruction,
              {{fmt::format("{} carry-out bits (every carry kept: the model's row)", enough), row},
               {fmt::format("{} carry-out bits (sums of 2^(E+{}) or more wrap around)", enough - 1, enough), shorter}},
              seed, carry_inputs);
}

}  // namespace

const std::vector<OpenQuestion>& open_questions() {
  static const std::vector<OpenQuestion> all = [] {
    std::vector<OpenQuestion> v;
    {
      const DotConfig volta = model::find_mma_instruction("volta:HMMA.884.F32.F32")->config;
      const DotConfig turing = model::find_mma_instruction("turing:HMMA.884.F32.F32")->config;
      v.push_back(make("volta-turing-hmma884",
                       "Do Volta and Turing compute HMMA.884 (binary16 products, binary32 accumulation) alike?",
                       "MMA-Sim (Xie et al. 2025) table III: F = 23 on Volta, F = 24 on Turing; Valpey et al. (2025, "
                       "section 4.3) treat the two as one 5-term accumulator",
                       "turing:HMMA.884.F32.F32",
                       {{"volta:HMMA.884.F32.F32 (F = 23)", volta}, {"turing:HMMA.884.F32.F32 (F = 24)", turing}},
                       0x0917A));
    }
    {
      const char* omma = "rtx-blackwell:OMMA.SF.16864.F32.E2M1.E2M1.E8";
      std::vector<std::pair<std::string, DotConfig>> widths;
      for (int F : {34, 35, 36, 37}) {
        DotConfig c = model::find_mma_instruction(omma)->config;
        c.F = F;
        widths.emplace_back(fmt::format("F = {}{}", F, F == 35 ? " (MMA-Sim)" : ""), c);
      }
      v.push_back(make("blackwell-fp4-accumulation-width",
                       "How many fraction bits does Blackwell's block-scaled fp4 MMA keep when it adds the 16-product "
                       "groups to c?",
                       "MMA-Sim (Xie et al. 2025): exact 16-product groups, F = 35, RZ output; other measurements put "
                       "the width between 34 and 37 bits",
                       omma, std::move(widths), 0xF4A));
    }
    v.push_back(carries("ampere-carry-out-bits",
                        "How many carry-out bits does Ampere's 9-term fixed-point accumulator (8 binary16 products and "
                        "c) keep: 3 or 4?",
                        "Valpey et al. (2025, section 4.3): Volta and Turing's 5-term accumulator keeps 3; Ampere's "
                        "should keep 4, which their solvers could not confirm in 6 hours",
                        "ampere:HMMA.16816.F32", 0xCA4));
    v.push_back(carries("hopper-carry-out-bits",
                        "How many carry-out bits does Hopper's 17-term fixed-point accumulator (16 binary16 products "
                        "and c) keep: 4 or 5?",
                        "Valpey et al.'s question asked of Hopper's blocks of 16 products (MMA-Sim table III): full "
                        "accuracy needs 5",
                        "hopper:HMMA.16816.F32", 0xCA5));
    return v;
  }();
  return all;
}

std::string inputs_text(const OpenQuestion& q) {
  const Format* scale = q.hypotheses.front().config.scale;
  std::string s;
  for (const DotCase& x : q.inputs) s += dot_line(q.cfg, scale, x) + "\n";
  return s;
}

std::string predictions_text(const OpenQuestion& q) {
  std::string s = "#";
  for (const Hypothesis& h : q.hypotheses) s += " [" + h.name + "]";
  s += "\n";
  std::vector<model::Dot> dots;
  for (const Hypothesis& h : q.hypotheses) dots.emplace_back(h.config);
  for (const DotCase& x : q.inputs) {
    for (std::size_t i = 0; i < dots.size(); ++i) s += (i ? " " : "") + hex(*q.cfg.d, predict(dots[i], x));
    s += "\n";
  }
  return s;
}

}  // namespace gp::mma

#include "model/mma_instructions.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "model/mma_config_name.hpp"

namespace gp::model {

namespace {

constexpr std::array<std::string_view, 14> arch_names = {"volta",     "turing",        "ampere",  "ada",   "hopper",
                                                         "blackwell", "rtx-blackwell", "cdna1",   "cdna2", "cdna3",
                                                         "cdna4",     "rdna3",         "rdna3.5", "rdna4"};

// F of the HMMA datapath of each NVIDIA architecture (MMA-Sim IV-C step 3).
int hmma_f(std::string_view arch) {
  if (arch == "volta") return 23;
  if (arch == "turing" || arch == "ampere" || arch == "ada") return 24;
  return 25;  // hopper, blackwell, rtx-blackwell
}

// The alignment floor on which MMA-Sim's later versions and the models of Khattak and Mikaitis
// ("Accurate Models of NVIDIA Tensor Cores", 2025) agree: emin(output) - (F - 18), F of the
// architecture's HMMA datapath (also for its fp8 instructions: Hopper QGMMA's floor is -133 with
// F = 13). Volta's binary32 output has none in those models; -131 would never bind there anyway (fp16
// products are at least 2^-48 and binary32 c is aligned at -126 or above).
int nvidia_floor(std::string_view arch, const Format& out) {
  if (arch == "volta" && &out == &binary32) return kNoAlignFloor;
  return out.emin() - (hmma_f(arch) - 18);
}

const Format& f8(std::string_view n) {
  if (n == "E4M3") return e4m3;
  if (n == "E5M2") return e5m2;
  if (n == "E2M3") return e2m3;
  if (n == "E3M2") return e3m2;
  return e2m1;
}

struct Builder {
  std::vector<MmaInstruction> list;

  void add(std::string_view arch, std::string name, int m, int n, int k, DotConfig cfg, std::string notes) {
    list.push_back({std::string(arch), std::move(name), m, n, k, cfg, std::move(notes)});
  }

  // NVIDIA FDA/CoFDA instruction: `block` products fused (K: FDA, K/2: CoFDA).
  void nvidia_fda(std::string_view arch, std::string iname, int m, int n, int k, const Format& ab, const Format& c,
                  const Format& d, int F, int block, std::string notes, int out_bits = -1) {
    const MmaAlgorithm alg = block < k ? MmaAlgorithm::cofda : MmaAlgorithm::fda;
    DotConfig cfg = default_dot_config(alg, ab, ab, c, d, k);
    cfg.F = F;
    cfg.block = block;
    if (out_bits >= 0 && &d == &binary32) cfg.out_fraction_bits = out_bits;
    cfg.align_floor = nvidia_floor(arch, d);
    std::string why = std::string("MMA-Sim Table III: ") + std::string(model::name(alg)) + "(F=" + std::to_string(F) +
                      "), block " + std::to_string(block) + " products";
    if (cfg.out_fraction_bits != d.man_bits) why += ", binary32 output RZ at 13 fraction bits (MMA-Sim IV-C step 5)";
    if (alg == MmaAlgorithm::cofda && &d == &binary16)
      why +=
          ", the first block's result rounded to binary16 (RNE) before it joins the second (MMA-Sim eq. 6 read "
          "literally; assumed)";
    why += cfg.align_floor == kNoAlignFloor ? "; no alignment floor (published models)"
                                            : "; alignment floor " + std::to_string(cfg.align_floor) +
                                                  " = emin(d) - (F_hmma - 18) (published models)";
    if (!notes.empty()) why += "; " + notes;
    add(arch, std::move(iname), m, n, k, cfg, std::move(why));
  }

  void sfma(std::string_view arch, std::string name, int m, int n, int k, const Format& f, std::string table) {
    DotConfig cfg = default_dot_config(MmaAlgorithm::sfma, f, f, f, f, k);
    add(arch, std::move(name), m, n, k, cfg,
        "MMA-Sim Table " + table + ": SFMA (IEEE FMA chain, RNE); NaN payloads not modelled");
  }
};

// The first "MxNxK" in a name ("f32_32x32x8_f16", "f32_32x32x2bf16", "DMMA.16x8x16").
void shape_of(std::string_view name, int& m, int& n, int& k) {
  MmaShape s;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (read_mma_shape(name.substr(i), s)) {
      m = s.m;
      n = s.n;
      k = s.k;
      return;
    }
  m = n = k = 0;
}

void build_nvidia(Builder& t) {
  // Volta and Turing: HMMA.884 (four concurrent 8x8x4 products), binary16 inputs.
  for (std::string_view arch : {"volta", "turing"}) {
    const int F = hmma_f(arch);
    t.nvidia_fda(arch, "HMMA.884.F32.F32", 8, 8, 4, binary16, binary32, binary32, F, 4, "");
    t.nvidia_fda(arch, "HMMA.884.F32.F16", 8, 8, 4, binary16, binary16, binary32, F, 4,
                 "c is binary16, d binary32 (MMA-Sim appendix B); the floor follows d");
    t.nvidia_fda(arch, "HMMA.884.F16.F16", 8, 8, 4, binary16, binary16, binary16, F, 4, "");
  }
  const std::array<std::string_view, 6> from_turing = {"turing", "ampere",    "ada",
                                                       "hopper", "blackwell", "rtx-blackwell"};
  for (std::string_view arch : from_turing) {
    const int F = hmma_f(arch);
    const bool fused16 = arch == "hopper" || arch == "blackwell" || arch == "rtx-blackwell";
    t.nvidia_fda(arch, "HMMA.1688.F32", 16, 8, 8, binary16, binary32, binary32, F, 8, "");
    t.nvidia_fda(arch, "HMMA.1688.F16", 16, 8, 8, binary16, binary16, binary16, F, 8, "");
    if (arch == "turing") continue;
    // Ampere onward: DMMA, TF32 and BF16, HMMA.16816.
    t.sfma(arch, "DMMA.884", 8, 8, 4, binary64, "III");
    t.sfma(arch, "DMMA.8x8x4", 8, 8, 4, binary64, "III");
    t.nvidia_fda(arch, "HMMA.1688.F32.TF32", 16, 8, 8, tf32, binary32, binary32, F, fused16 ? 8 : 4,
                 "TF32 inputs: the 13 low bits of each 32-bit input are ignored (a NaN can read as infinity)");
    t.nvidia_fda(arch, "HMMA.16816.F32", 16, 8, 16, binary16, binary32, binary32, F, fused16 ? 16 : 8, "");
    t.nvidia_fda(arch, "HMMA.16816.F16", 16, 8, 16, binary16, binary16, binary16, F, fused16 ? 16 : 8, "");
    t.nvidia_fda(arch, "HMMA.16816.F32.BF16", 16, 8, 16, bfloat16, binary32, binary32, F, fused16 ? 16 : 8, "");
    t.nvidia_fda(arch, "HMMA.1684.F32.TF32", 16, 8, 4, tf32, binary32, binary32, F, 4,
                 "TF32 inputs: 13 low bits ignored");
    t.nvidia_fda(arch, "HMMA.1688.F32.BF16", 16, 8, 8, bfloat16, binary32, binary32, F, 8, "");
  }
  // FP8 QMMA: Ada (F=13, binary32 output RZ at 13 fraction bits) and RTX Blackwell (F=25).
  for (std::string_view arch : {"ada", "rtx-blackwell"}) {
    const bool ada = arch == "ada";
    const int F = ada ? 13 : 25;
    const int out_bits = ada ? 13 : 23;
    for (std::string_view x : {"E4M3", "E5M2"})
      for (std::string_view y : {"E4M3", "E5M2"}) {
        const std::string ab = std::string(x) + "." + std::string(y);
        for (std::string_view cd : {"F32", "F16"}) {
          const Format& out = cd == "F32" ? binary32 : binary16;
          // a and b may differ: build, then set b.
          t.nvidia_fda(arch, "QMMA.16832." + std::string(cd) + "." + ab, 16, 8, 32, f8(x), out, out, F, ada ? 16 : 32,
                       ada ? "fp8 alignment floor assumed equal to the HMMA one" : "", out_bits);
          t.list.back().config.b = &f8(y);
          t.nvidia_fda(arch, "QMMA.16816." + std::string(cd) + "." + ab, 16, 8, 16, f8(x), out, out, F, 16,
                       ada ? "fp8 alignment floor assumed equal to the HMMA one" : "", out_bits);
          t.list.back().config.b = &f8(y);
        }
      }
  }
  // Hopper: DMMA shapes, HGMMA (warp-group), QGMMA (fp8, F=13, RZ at 13 fraction bits).
  for (std::string_view s : {"DMMA.16x8x16", "DMMA.16x8x8", "DMMA.16x8x4"}) {
    int m, n, k;
    shape_of(s, m, n, k);
    t.sfma("hopper", std::string(s), m, n, k, binary64, "III");
  }
  t.nvidia_fda("hopper", "HGMMA.64x8x8.F32.TF32", 64, 8, 8, tf32, binary32, binary32, 25, 8,
               "TF32 inputs: 13 low bits ignored");
  t.nvidia_fda("hopper", "HGMMA.64x8x16.F32", 64, 8, 16, binary16, binary32, binary32, 25, 16, "");
  t.nvidia_fda("hopper", "HGMMA.64x8x16.F16", 64, 8, 16, binary16, binary16, binary16, 25, 16, "");
  t.nvidia_fda("hopper", "HGMMA.64x8x16.F32.BF16", 64, 8, 16, bfloat16, binary32, binary32, 25, 16, "");
  for (std::string_view x : {"E4M3", "E5M2"})
    for (std::string_view y : {"E4M3", "E5M2"})
      for (std::string_view cd : {"F32", "F16"}) {
        const Format& out = cd == "F32" ? binary32 : binary16;
        t.nvidia_fda("hopper", "QGMMA.64x8x32." + std::string(cd) + "." + std::string(x) + "." + std::string(y), 64, 8,
                     32, f8(x), out, out, 13, 32, "", 13);
        t.list.back().config.b = &f8(y);
      }
  // fp8 mma.sync on Hopper (m16n8k32, m16n8k16) is not a native instruction: NVIDIA converts the
  // inputs to binary16 (exactly) and runs HMMA.16816 (NVIDIA/cutlass issue 1986), twice for K = 32,
  // the first result the second's c. Modelled as that composition: HMMA.16816's row with fp8 inputs.
  for (const int k : {32, 16})
    for (std::string_view x : {"E4M3", "E5M2"})
      for (std::string_view y : {"E4M3", "E5M2"})
        for (std::string_view cd : {"F32", "F16"}) {
          const Format& out = cd == "F32" ? binary32 : binary16;
          const std::string acc(cd);
          t.nvidia_fda("hopper",
                       "QMMA.168" + std::to_string(k) + "." + acc + "." + std::string(x) + "." + std::string(y), 16, 8,
                       k, f8(x), out, out, 25, 16, "");
          MmaInstruction& row = t.list.back();
          row.config.b = &f8(y);
          row.notes =
              "emulated, not a native instruction: the fp8 inputs converted to binary16 (exact) and HMMA.16816." + acc +
              " run " + (k == 32 ? "twice, the first result the second's c" : "once") +
              " (NVIDIA, NVIDIA/cutlass issue 1986); modelled as that composition, HMMA.16816." + acc +
              "'s row with fp8 inputs: " + row.notes;
          row.from_mma_sim = false;
          row.emulated = true;
        }
  // Blackwell (tcgen05): UTCHMMA (FDA, F=25: tf32 K=8, fp16/bf16 K=16), UTCQMMMA (K=32, f8f6f4,
  // optional ue8m0 scales every 32), UTCOMMA (fp4, GDFS, K=64).
  t.nvidia_fda("blackwell", "UTCHMMA.F32.TF32", 64, 8, 8, tf32, binary32, binary32, 25, 8,
               "tcgen05 shape: K=8 for TF32 (MMA-Sim appendix B)");
  t.nvidia_fda("blackwell", "UTCHMMA.F32", 64, 8, 16, binary16, binary32, binary32, 25, 16, "");
  t.nvidia_fda("blackwell", "UTCHMMA.F16", 64, 8, 16, binary16, binary16, binary16, 25, 16, "");
  t.nvidia_fda("blackwell", "UTCHMMA.F32.BF16", 64, 8, 16, bfloat16, binary32, binary32, 25, 16, "");
  const std::array<std::string_view, 5> f8f6f4 = {"E4M3", "E5M2", "E2M3", "E3M2", "E2M1"};
  for (std::string_view arch : {"blackwell", "rtx-blackwell"}) {
    const bool b200 = arch == "blackwell";
    const std::string q = b200 ? "UTCQMMMA." : "QMMA.16832.";
    const std::string qsf = b200 ? "UTCQMMMA.SF." : "QMMA.SF.16832.";
    for (std::string_view x : f8f6f4)
      for (std::string_view y : f8f6f4) {
        const std::string ab = std::string(x) + "." + std::string(y);
        const bool both_f8 = (x == "E4M3" || x == "E5M2") && (y == "E4M3" || y == "E5M2");
        for (std::string_view cd : {"F32", "F16"}) {
          if (!b200 && both_f8) continue;  // already listed with the f8 QMMA rows
          const Format& out = cd == "F32" ? binary32 : binary16;
          t.nvidia_fda(arch, q + std::string(cd) + "." + ab, b200 ? 64 : 16, 8, 32, f8(x), out, out, 25, 32, "");
          t.list.back().config.b = &f8(y);
        }
        t.nvidia_fda(arch, qsf + "F32." + ab + ".E8", b200 ? 64 : 16, 8, 32, f8(x), binary32, binary32, 25, 32,
                     "MX scale factors: ue8m0, one per 32 products, added to the product exponents (MMA-Sim IV-C)");
        t.list.back().config.b = &f8(y);
        t.list.back().config.scale = &ue8m0;
        t.list.back().config.scale_block = 32;
      }
  }
  // FP4 with scale factors: GDFS (groups of 16 products, F=35, RZ binary32 output).
  auto gdfs = [&](std::string_view arch, std::string name, int m, const Format& sf, int sblock) {
    DotConfig cfg = default_dot_config(MmaAlgorithm::gdfs, e2m1, e2m1, binary32, binary32, 64);
    cfg.scale = &sf;
    cfg.scale_block = sblock;
    t.add(arch, std::move(name), m, 8, 64, cfg,
          "MMA-Sim Table III: GDFS (F=35, groups of 16); scale factors " + std::string(sf.name) + " every " +
              std::to_string(sblock) + " products" + (&sf == &ue4m3 ? " (the ue4m3 sign bit is ignored)" : "") +
              "; group exponents take part in the alignment even when their sum is zero (assumed)");
  };
  gdfs("blackwell", "UTCOMMA.F32.E2M1.E2M1.E8", 64, ue8m0, 32);
  gdfs("blackwell", "UTCOMMA.4X.F32.E2M1.E2M1.E8", 64, ue8m0, 16);
  gdfs("blackwell", "UTCOMMA.4X.F32.E2M1.E2M1.UE4M3", 64, ue4m3, 16);
  gdfs("rtx-blackwell", "OMMA.SF.16864.F32.E2M1.E2M1.E8", 16, ue8m0, 32);
  gdfs("rtx-blackwell", "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X", 16, ue4m3, 16);
}

void build_amd(Builder& t) {
  auto add = [&](std::string_view arch, std::string_view short_name, MmaAlgorithm alg, const Format& a, const Format& b,
                 int group, std::string notes) {
    std::string name = "v_mfma_" + std::string(short_name);
    int m, n, k;
    shape_of(short_name, m, n, k);
    // Accumulators are binary32 but for the f64 instructions (v_mfma_f64_*: binary64 C and D).
    const Format& acc = &a == &binary64 ? binary64 : binary32;
    DotConfig cfg = default_dot_config(alg, a, b, acc, acc, k);
    if (alg == MmaAlgorithm::gps) cfg.group = group;
    if (alg == MmaAlgorithm::fdrda) cfg.block = 0;
    std::string why = "MMA-Sim Table IV: " + std::string(model::name(alg));
    if (alg == MmaAlgorithm::gps) why += "(G=" + std::to_string(group) + ")";
    if (cfg.block > 0) why += ", block " + std::to_string(cfg.block) + " products";
    if (alg != MmaAlgorithm::sfma && alg != MmaAlgorithm::gps)
      why += "; F=24, dot product and c aligned rounding down at 31 and 24 fraction bits, RNE output";
    why += "; NaN payloads not modelled (the format's canonical quiet NaN)";
    if (!notes.empty()) why += "; " + notes;
    t.add(arch, std::move(name), m, n, k, cfg, std::move(why));
  };
  // CDNA1 (MI100), absent from MMA-Sim's first Table IV: its instruction list and models are those
  // of MMA-Sim's later code (microsoft/MMA-Sim src/mmasim/mmasim/amd/isa_mfma.py and sim.py) and of
  // Khattak and Mikaitis's MI100 model (north-numerical-computing/MATLAB-tensor-core
  // models/MI100MC.m). No f64 MFMA, no _1k bf16. fp32: SFMA. fp16 and bf16: c and G products
  // (4 fp16, 2 bf16) summed exactly and rounded once to binary32, RNE, the result the next
  // group's c, subnormals kept (MMA-Sim's E-FDPA, arithmetic/fdpa.py; the MATLAB model's exact
  // accumulation). MMA-Sim's earlier code (mmasim/simulator/amd.py, main of January 2026) summed
  // them pairwise like CDNA2 without flushing; its later code and the MATLAB model agree on the
  // exact sum. None of the nine algorithms sums exactly: a summation tree of fused nodes models it.
  for (std::string_view s : {"f32_32x32x1f32", "f32_16x16x1f32", "f32_4x4x1f32", "f32_32x32x2f32", "f32_16x16x4f32"}) {
    int m, n, k;
    shape_of(s, m, n, k);
    t.add("cdna1", "v_mfma_" + std::string(s), m, n, k,
          default_dot_config(MmaAlgorithm::sfma, binary32, binary32, binary32, binary32, k),
          "MMA-Sim's code (FMA) and the MI100 model (sequential FMAs): SFMA (IEEE FMA chain, RNE); NaN payloads not "
          "modelled (the format's canonical quiet NaN)");
  }
  const auto efdpa = [&](std::string_view short_name, const Format& ab, int group) {
    int m, n, k;
    shape_of(short_name, m, n, k);
    // "p0+p1+p2+p3+c", then "(p0+p1+p2+p3+c)+p4+p5+p6+p7", ...
    std::string text;
    for (int k0 = 0; k0 < k; k0 += group) {
      std::string node = k0 > 0 ? "(" + text + ")" : "";
      for (int j = k0; j < std::min(k, k0 + group); ++j) node += (node.empty() ? "p" : "+p") + std::to_string(j);
      text = k0 > 0 ? node : node + "+c";
    }
    DotConfig cfg = default_dot_config(MmaAlgorithm::tree, ab, ab, binary32, binary32, k);
    cfg.tree = std::make_shared<const SummationTree>(std::move(*parse_summation_tree(text, k).tree));
    t.add("cdna1", "v_mfma_" + std::string(short_name), m, n, k, cfg,
          "MMA-Sim's later code (E-FDPA, L=" + std::to_string(group) +
              ") and Khattak and Mikaitis's MI100 model (exact accumulation, " + std::to_string(group) +
              " products): c and each group of " + std::to_string(group) +
              " products summed exactly, rounded once to binary32 (RNE), the result the next group's c; subnormal "
              "inputs, products and results kept; a summation tree of fused nodes (" +
              text +
              "); NaN payloads not modelled (the format's canonical quiet NaN); c and products all -0 give -0 "
              "(IEEE's sum; both sources give +0 there: not modelled)");
  };
  for (std::string_view s : {"f32_32x32x4f16", "f32_16x16x4f16", "f32_4x4x4f16", "f32_32x32x8f16", "f32_16x16x16f16"})
    efdpa(s, binary16, 4);
  for (std::string_view s :
       {"f32_32x32x2bf16", "f32_16x16x2bf16", "f32_4x4x2bf16", "f32_32x32x4bf16", "f32_16x16x8bf16"})
    efdpa(s, bfloat16, 2);
  for (std::string_view arch : {"cdna2", "cdna3"}) {
    for (std::string_view s : {"f64_16x16x4_f64", "f64_4x4x4_4b_f64"})
      add(arch, s, MmaAlgorithm::sfma, binary64, binary64, 0, "");
    for (std::string_view s :
         {"f32_32x32x1_2b_f32", "f32_16x16x1_4b_f32", "f32_4x4x1_16b_f32", "f32_32x32x2_f32", "f32_16x16x4_f32"})
      add(arch, s, MmaAlgorithm::sfma, binary32, binary32, 0, "");
  }
  for (std::string_view s : {"f32_32x32x4_2b_f16", "f32_16x16x4_4b_f16", "f32_4x4x4_16b_f16", "f32_32x32x8_f16"}) {
    add("cdna2", s, MmaAlgorithm::gps, binary16, binary16, 4,
        "subnormal inputs flushed to +0, products and sums flushed keeping their sign");
    add("cdna3", s, MmaAlgorithm::fdrda, binary16, binary16, 0, "");
  }
  add("cdna2", "f32_16x16x16_f16", MmaAlgorithm::gps, binary16, binary16, 4, "subnormals flushed");
  add("cdna3", "f32_16x16x16_f16", MmaAlgorithm::cofdrda, binary16, binary16, 0, "");
  for (std::string_view s :
       {"f32_32x32x2bf16", "f32_16x16x2bf16", "f32_4x4x2bf16", "f32_32x32x4bf16", "f32_16x16x8bf16"})
    add("cdna2", s, MmaAlgorithm::gps, bfloat16, bfloat16, 2, "CDNA2 name (legacy bf16, no _1k); subnormals flushed");
  for (std::string_view s : {"f32_32x32x4_2b_bf16", "f32_16x16x4_4b_bf16", "f32_4x4x4_16b_bf16", "f32_32x32x8_bf16"}) {
    add("cdna2", s, MmaAlgorithm::gps, bfloat16, bfloat16, 4,
        "the _1k instruction of CDNA2 under its CDNA3 name; subnormals flushed");
    add("cdna3", s, MmaAlgorithm::fdrda, bfloat16, bfloat16, 0, "products of 2^128 or more overflow");
  }
  add("cdna2", "f32_16x16x16_bf16", MmaAlgorithm::gps, bfloat16, bfloat16, 4,
      "the _1k instruction; subnormals flushed");
  add("cdna3", "f32_16x16x16_bf16", MmaAlgorithm::cofdrda, bfloat16, bfloat16, 0, "products of 2^128 or more overflow");
  add("cdna3", "f32_16x16x8_xf32", MmaAlgorithm::cofdrda, tf32, tf32, 0, "xf32 = TF32: 13 low bits ignored");
  add("cdna3", "f32_32x32x4_xf32", MmaAlgorithm::fdrda, tf32, tf32, 0, "xf32 = TF32: 13 low bits ignored");
  const auto amd8 = [](std::string_view n) -> const Format& { return n == "fp8" ? e4m3fnuz : e5m2fnuz; };
  for (std::string_view x : {"bf8", "fp8"})
    for (std::string_view y : {"bf8", "fp8"}) {
      const std::string ab = std::string(x) + "_" + std::string(y);
      add("cdna3", "f32_16x16x32_" + ab, MmaAlgorithm::cogfdrda, amd8(x), amd8(y), 0,
          "fp8 = e4m3fnuz, bf8 = e5m2fnuz; two GFDRDA blocks of 16");
      add("cdna3", "f32_32x32x16_" + ab, MmaAlgorithm::gfdrda, amd8(x), amd8(y), 0, "fp8 = e4m3fnuz, bf8 = e5m2fnuz");
    }
}

// v_dot2 of CDNA (K = 2: c + a0 b0 + a1 b1, binary16 into binary32). Only the subnormal inputs are
// published (llvm-project pull request 205101, hardware tests across GPU generations, table of
// -2^-24 x 2^-14 + 0): gfx90a (CDNA2) flushes f16 subnormal inputs in every MODE setting, giving
// +0; gfx950 (CDNA4) keeps them, giving -2^-38. The sum itself is assumed exact and rounded once
// to nearest even: one fused node p0+p1+c (a summation tree).
void build_cdna_dot2(Builder& t) {
  for (const bool flush : {true, false}) {
    DotConfig cfg = default_dot_config(MmaAlgorithm::tree, binary16, binary16, binary32, binary32, 2);
    SummationTree tree = std::move(*parse_summation_tree("p0+p1+c", 2).tree);
    tree.flush_inputs = flush;
    cfg.tree = std::make_shared<const SummationTree>(std::move(tree));
    t.add(flush ? "cdna2" : "cdna4", "v_dot2_f32_f16", 1, 1, 2, cfg,
          std::string("llvm-project pull request 205101: ") +
              (flush ? "gfx90a flushes f16 subnormal inputs to zero in every MODE configuration (v_dot2c_f32_f16 too)"
                     : "gfx950 keeps f16 subnormal inputs (v_dot2c_f32_f16 too): -2^-24 x 2^-14 + 0 = -2^-38") +
              "; the sum of c and both products exact and rounded once to binary32, RNE (assumed: a fused node "
              "p0+p1+c); NaN payloads not modelled");
    t.list.back().from_mma_sim = false;
  }
}

// AMD's consumer units (RDNA 3 gfx11, RDNA 3.5 gfx115x, RDNA 4 gfx12): V_DOT2_F32_F16 and
// V_DOT2_F32_BF16 (K = 2) and WMMA 16x16x16, all ocfda (model/mma_algorithms.hpp). The adder, its
// grid and its flushing are those ROCm/rocm-systems issue 12056 measured on gfx1151 (RDNA 3.5);
// RDNA 3 and RDNA 4 are assumed to share them.
void build_rdna(Builder& t) {
  const std::string source =
      "ocfda: ROCm/rocm-systems issue 12056 (gfx1151 silicon, V_DOT2_F32_F16/BF16 and WMMA): sign-magnitude adder "
      "framed by c's sign, a summand opposing it negated as its bit inversion without the +1, one grid whose LSB "
      "follows the largest sum of operand exponents (each floored at its format's emin), exact products never "
      "flushed, bf16 subnormal inputs flushed and f16 kept, specials as IEEE; F = 24 grid bits below that exponent "
      "inferred from the issue's -1 + 3*8 + 8*4 = 55 + 2^-18; RNE output assumed (F = 24 leaves the issue's "
      "examples exact); NaN payloads not modelled";
  const auto row = [&](std::string_view arch, std::string name, int m, int k, const Format& a, const Format& b,
                       const Format& d, std::string notes) {
    DotConfig cfg = default_dot_config(MmaAlgorithm::ocfda, a, b, d, d, k);
    std::string why = source;
    if (arch != "rdna3.5") why += "; measured on RDNA 3.5 only: assumed the same on " + std::string(arch);
    if (k > 2)
      why +=
          "; WMMA assumed to chain the dot2 unit over K/2 blocks of 2 products in k order, each result "
          "rounded to d and the next block's c";
    if (!notes.empty()) why += "; " + notes;
    t.add(arch, std::move(name), m, m, k, cfg, std::move(why));
    t.list.back().from_mma_sim = false;
  };
  for (std::string_view arch : {"rdna3", "rdna3.5", "rdna4"}) {
    row(arch, "v_dot2_f32_f16", 1, 2, binary16, binary16, binary32, "");
    row(arch, "v_dot2_f32_bf16", 1, 2, bfloat16, bfloat16, binary32, "");
    row(arch, "v_wmma_f32_16x16x16_f16", 16, 16, binary16, binary16, binary32, "");
    row(arch, "v_wmma_f32_16x16x16_bf16", 16, 16, bfloat16, bfloat16, binary32, "");
    const std::string narrow = "binary16 and bfloat16 accumulators: rounding and grid as for binary32 (assumed)";
    row(arch, "v_wmma_f16_16x16x16_f16", 16, 16, binary16, binary16, binary16, narrow);
    row(arch, "v_wmma_bf16_16x16x16_bf16", 16, 16, bfloat16, bfloat16, bfloat16, narrow);
  }
  // RDNA 4 adds fp8 and bf8 WMMA (K = 16) in the OCP formats.
  for (std::string_view x : {"fp8", "bf8"})
    for (std::string_view y : {"fp8", "bf8"})
      row("rdna4", "v_wmma_f32_16x16x16_" + std::string(x) + "_" + std::string(y), 16, 16, x == "fp8" ? e4m3 : e5m2,
          y == "fp8" ? e4m3 : e5m2, binary32,
          "fp8 = OCP e4m3, bf8 = OCP e5m2 (gfx12's fp8 types, not CDNA3's fnuz); fp8 and bf8 subnormal inputs kept "
          "(assumed)");
}

// What the captured hardware data (tests_mma/golden/nvidia-tensor-cores, 5000 dot products per
// set) says about the instructions it was captured with; unittests/mma_golden_test.cpp checks
// every case and that each alternative named here mismatches.
struct GoldenNote {
  std::string_view id, note;
};
constexpr GoldenNote golden_notes[] = {
    {"volta:HMMA.884.F32.F32",
     "golden V100 fp16 -> binary32 (K=4): reproduced bit for bit; the data forces F=23, one fused block of "
     "4 and RZ output (F 22 or 24, blocks of 2, RNE output each mismatch hundreds of cases)"},
    {"volta:HMMA.884.F16.F16",
     "golden V100 fp16 -> binary16 (K=4, c rounded to binary16): reproduced; forces RNE output and a fused "
     "block of 4; consistent with F >= 22 and with a first RZ to binary32 (the data cannot tell)"},
    {"ampere:HMMA.16816.F32",
     "golden A100 fp16 -> binary32 (K=8, one CoFDA block): reproduced; forces F=24, a block of at least 8, "
     "RZ output"},
    {"ampere:HMMA.16816.F16",
     "golden A100 fp16 -> binary16 (K=8): reproduced; forces RNE output, a block of 8, F >= 24"},
    {"ampere:HMMA.16816.F32.BF16", "golden A100 bf16 (K=8): reproduced; forces F=24, a block of 8, RZ output"},
    {"ampere:HMMA.1688.F32.TF32",
     "golden A100 tf32 (K=4, one CoFDA block): reproduced; forces F=24, a block of 4, RZ output"},
    {"hopper:HMMA.16816.F32",
     "golden H100 fp16 -> binary32 (K=16): reproduced; forces F=25, one fused block of 16 (not CoFDA's 8), "
     "RZ output"},
    {"hopper:HMMA.16816.F16",
     "golden H100 fp16 -> binary16 (K=16): reproduced; forces RNE output, a block of 16, 23 <= F <= 25"},
    {"hopper:HMMA.16816.F32.BF16", "golden H100 bf16 (K=16): reproduced; forces F=25, a block of 16, RZ output"},
    {"hopper:HMMA.1688.F32.TF32",
     "golden H100 tf32 (K=4): reproduced; forces F=25, RZ output and a block of at least 4 (8 is from "
     "the published models: K=4 cannot show it)"},
    {"hopper:QGMMA.64x8x32.F32.E4M3.E4M3",
     "golden H100 E4M3 (K=32, c=0, captured with mma): reproduced; forces F=13, one fused block of 32, RZ "
     "output cut at 13 fraction bits (12, 14 or 23 mismatch)"},
};
constexpr std::string_view golden_common =
    " The captures hold no tiny or zero-heavy terms: the alignment floor (exponent of zero terms) and "
    "subnormal products are not exercised by them, any floor up to -10 fits every set.";

const std::vector<MmaInstruction>& table() {
  static const std::vector<MmaInstruction> t = [] {
    Builder b;
    build_nvidia(b);
    build_amd(b);
    build_cdna_dot2(b);
    build_rdna(b);
    // Group by architecture, table order kept within each.
    std::vector<MmaInstruction> out;
    for (std::string_view arch : arch_names)
      for (const MmaInstruction& i : b.list)
        if (i.arch == arch) out.push_back(i);
    for (MmaInstruction& i : out)
      for (const GoldenNote& g : golden_notes)
        if (i.id() == g.id) i.notes += "; " + std::string(g.note) + "." + std::string(golden_common);
    return out;
  }();
  return t;
}

}  // namespace

std::span<const std::string_view> mma_architectures() { return arch_names; }

std::span<const MmaInstruction> all_mma_instructions() { return table(); }

const MmaInstruction* find_mma_instruction(std::string_view id) {
  for (const MmaInstruction& i : table())
    if (id.size() == i.arch.size() + 1 + i.name.size() && id.substr(0, i.arch.size()) == i.arch &&
        id[i.arch.size()] == ':' && id.substr(i.arch.size() + 1) == i.name)
      return &i;
  return nullptr;
}

}  // namespace gp::model

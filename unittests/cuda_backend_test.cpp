// The CUDA backend.
//
// Without a GPU (CI has the toolkit, no GPU): NVRTC needs no GPU, so every scalar kernel of a
// representative set of expressions (each operation and format, mad, conversions) and every MMA
// kernel of every compute capability compile to CUBIN for the architectures NVRTC has (wgmma for
// sm_90a, its one target; every kernel for every architecture in the long build): ptxas checks the
// PTX, its mma.sync, wmma and wgmma forms, operand types and counts. The fragment layouts,
// evaluated thread by thread from the kernels' own index expressions, place every element of A, B,
// C and D once per thread group, and wgmma's copy of B fills its shared memory; the configurations
// of each compute capability name instructions of the MMA-Sim table with their K and formats, every
// row a Hopper or Blackwell GPU runs through mma.sync or wgmma among them; `gpuparanoia devices`
// says why there is no CUDA device and goes on. Skipped, saying why, where libnvrtc cannot
// be loaded.
//
// With a GPU (skipped elsewhere with enumerate()'s reason): exact integer tiles through every
// configuration, which is what checks the fragment layouts against the hardware, batches split over
// launches, errors as values, the intrinsics against the model, modules compiled once, the images
// kept by `run --code`, and the quick scalar and MMA suites from the command line with no probe in
// `error`.
#include "backends/cuda/cuda_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "backends/kernel_source.hpp"
#include "model/mma_instructions.hpp"
#include "model/ops.hpp"
#include "model/value.hpp"
#include "unittests/backend_checks.hpp"

namespace gp::backends {
namespace {

using model::binary16;
using model::binary32;
using model::binary64;

const Expected<cuda::Compiler>& nvrtc() {
  static const Expected<cuda::Compiler> c = cuda::compiler();
  return c;
}

// Compute capabilities whose configurations are listed: every one of the table's architectures,
// NVRTC's or not.
constexpr int kCapabilities[] = {70, 72, 75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};

// Each operation in each format, mad, transfers, conversions, and a mixed chain whose mad feeds on
// separately rounded nodes.
std::vector<Expr> scalar_expressions() {
  std::vector<Expr> v;
  for (const model::Format* f : {&binary16, &binary32, &binary64}) {
    for (const Node n : {Node::add, Node::sub, Node::mul, Node::div}) v.push_back(binary(n, *f));
    for (const Node n : {Node::sqrt, Node::neg}) v.push_back(unary(n, *f));
    for (const Node n : {Node::fma, Node::mad}) v.push_back(ternary(n, *f));
    v.push_back(transfer(*f));
    for (const model::Format* g : {&binary16, &binary32, &binary64})
      if (g != f) v.push_back(conversion(*f, *g));
  }
  ExprBuilder b(binary16, 3);
  const int x = b.cvt(b.in(0), binary32), y = b.cvt(b.in(1), binary64);
  const int p = b.op(Node::mul, x, b.in(2));
  b.op(Node::mad, b.op(Node::add, p, y), x, b.in(2));  // operands in three formats, converted explicitly
  v.push_back(b.done(&binary16));
  return v;
}

// The long build compiles every kernel for every architecture; by default each scalar kernel for one
// architecture in turn and each distinct MMA kernel source for the first architecture that lists it
// (and every architecture at least one), a tenth of the compile time: every source and every
// architecture still goes through ptxas.
#ifdef GPUPARANOIA_CUDA_LONG
constexpr bool kEveryPair = true;
#else
constexpr bool kEveryPair = false;
#endif

TEST(CudaKernels, ScalarKernelsCompileToCubinForEveryArchitecture) {
  if (!nvrtc()) GTEST_SKIP() << nvrtc().error().message;
  const std::string include = cuda::fp16_include_dir();
  int compiled = 0;
  std::size_t turn = 0;
  for (const Expr& e : scalar_expressions()) {
    auto source = kernel_source(e, Language::cuda, 256);
    ASSERT_TRUE(source) << source.error().message;
    if (source->find("cuda_fp16.h") != std::string::npos && include.empty()) {
      std::cout << "binary16 kernels not compiled: no cuda_fp16.h\n";
      continue;
    }
    const std::size_t mine = turn++ % nvrtc()->archs.size();
    for (std::size_t i = 0; i < nvrtc()->archs.size(); ++i) {
      if (!kEveryPair && i != mine) continue;
      const int arch = nvrtc()->archs[i];
      auto image = cuda::compile(*source, {arch, true}, cuda::scalar_options(include));
      ASSERT_TRUE(image) << "sm_" << arch << " " << e.to_string() << "\n" << *source << image.error().message;
      EXPECT_TRUE(image->cubin);
      ++compiled;
    }
  }
  fmt::print("NVRTC {}.{}: {} scalar kernel images compiled, for sm_{}\n", nvrtc()->major, nvrtc()->minor, compiled,
             fmt::join(nvrtc()->archs, ", sm_"));
}

TEST(CudaKernels, MmaKernelsCompileToCubinForEveryArchitecture) {
  if (!nvrtc()) GTEST_SKIP() << nvrtc().error().message;
  int compiled = 0;
  std::set<std::string> sources;
  for (const int arch : nvrtc()->archs) {
    const auto kernels = cuda::mma_kernels(arch);
    EXPECT_FALSE(kernels.empty()) << "sm_" << arch;
    for (const cuda::MmaKernel& k : kernels) {
      const std::string source = cuda::mma_kernel_source(k);
      if (!sources.insert(source).second && !kEveryPair && &k != &kernels.front()) continue;
      auto image = cuda::compile(source, {arch, true, k.arch_specific}, {});
      ASSERT_TRUE(image) << "sm_" << arch << " " << k.config.name() << " " << k.ptx << "\n"
                         << source << image.error().message;
      ++compiled;
    }
  }
  fmt::print("{} MMA kernels compiled\n", compiled);
}

// The configuration whose layout is documented comes first on every architecture that has it: its
// layout check, run before any probe, tells a harness fault from an unverified instruction's.
TEST(CudaKernels, TheDocumentedLayoutComesFirst) {
  for (const int arch : {80, 86, 89, 90, 100, 120}) {
    const auto kernels = cuda::mma_kernels(arch);
    ASSERT_FALSE(kernels.empty()) << "sm_" << arch;
    EXPECT_EQ(kernels.front().ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") << "sm_" << arch;
    EXPECT_EQ(kernels.front().config.instruction, cuda::nvidia_architecture(arch) + ":HMMA.16816.F32") << "sm_" << arch;
  }
}

// wgmma exists on sm_90a alone: compute capability 9.0 lists it, compiled for sm_90a, which plain
// sm_90 refuses; Ada before and Blackwell after have none.
TEST(CudaKernels, WgmmaKernelsAreSm90aAlone) {
  std::vector<cuda::MmaKernel> wgmma;
  for (const cuda::MmaKernel& k : cuda::mma_kernels(90))
    if (k.config.scope == "warpgroup (wgmma)") wgmma.push_back(k);
  EXPECT_EQ(wgmma.size(), 36u);  // N = 8, 16, 64: fp16 (two accumulators), bf16, tf32, fp8 (8)
  for (const cuda::MmaKernel& k : wgmma) {
    EXPECT_TRUE(k.arch_specific) << k.config.name();
    EXPECT_EQ(k.warps, 4) << k.config.name();
    EXPECT_EQ(k.config.m, 64) << k.config.name();
  }
  for (const int arch : {89, 100, 103, 120})
    for (const cuda::MmaKernel& k : cuda::mma_kernels(arch))
      EXPECT_TRUE(k.warps == 1 && !k.arch_specific) << "sm_" << arch << " lists " << k.config.name() << " " << k.ptx;
  if (!nvrtc()) GTEST_SKIP() << nvrtc().error().message;
  if (std::find(nvrtc()->archs.begin(), nvrtc()->archs.end(), 90) == nvrtc()->archs.end())
    GTEST_SKIP() << "NVRTC has no sm_90";
  EXPECT_EQ((cuda::Target{90, true, true}.name()), "sm_90a");
  for (const cuda::MmaKernel& k : wgmma) {
    auto image = cuda::compile(cuda::mma_kernel_source(k), {90, true, true}, {});
    ASSERT_TRUE(image) << k.config.name() << " " << k.ptx << "\n" << image.error().message;
    EXPECT_TRUE(image->cubin);
  }
  EXPECT_FALSE(cuda::compile(cuda::mma_kernel_source(wgmma.front()), {90, true}, {}));
}

// PTX for a virtual architecture, the route of a device newer than NVRTC.
TEST(CudaKernels, PtxForVirtualArchitectures) {
  if (!nvrtc()) GTEST_SKIP() << nvrtc().error().message;
  const int arch = nvrtc()->archs.back();
  const cuda::Target t = cuda::target_for(arch + 1, nvrtc()->archs);
  EXPECT_EQ(t.arch, arch);
  EXPECT_FALSE(t.cubin);
  EXPECT_EQ(t.name(), fmt::format("compute_{}", arch));
  auto image =
      cuda::compile(*kernel_source(binary(Node::add, binary32), Language::cuda, 256), t, cuda::scalar_options(""));
  ASSERT_TRUE(image) << image.error().message;
  EXPECT_NE(image->bytes.find(".target sm_" + std::to_string(arch)), std::string::npos) << image->bytes;
  EXPECT_NE(image->bytes.find("add.rn.f32"), std::string::npos) << image->bytes;
}

TEST(CudaKernels, CompileFailuresCarryTheLog) {
  if (!nvrtc()) GTEST_SKIP() << nvrtc().error().message;
  auto image =
      cuda::compile("extern \"C\" __global__ void gp_eval() { undeclared = 1; }", {nvrtc()->archs.front(), true}, {});
  ASSERT_FALSE(image);
  EXPECT_NE(image.error().message.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << image.error().message;
  EXPECT_NE(image.error().message.find("undeclared"), std::string::npos) << image.error().message;
  EXPECT_EQ(image.error().kind, ErrorKind::compile);
}

TEST(CudaKernels, TargetsFollowWhatNvrtcHas) {
  const std::vector<int> archs = {75, 80, 86, 89, 90};
  EXPECT_EQ(cuda::target_for(86, archs).name(), "sm_86");
  EXPECT_EQ(cuda::target_for(87, archs).name(), "compute_86");
  EXPECT_EQ(cuda::target_for(120, archs).name(), "compute_90");
  EXPECT_EQ(cuda::target_for(70, archs).arch, 0);  // CUDA 13 has no sm_70
}

// ---- Fragment layouts, evaluated from the kernels' index expressions ----

// The integer value of an index expression of the kernels: names, literals (with a u suffix),
// parentheses, * + << >> &, with C's precedence.
class IndexExpression {
 public:
  IndexExpression(std::string_view s, const std::map<std::string, long>& names) : s_(s), names_(names) {}
  long value() {
    const long v = bit_and();
    space();
    if (i_ != s_.size()) throw std::runtime_error(fmt::format("cannot read '{}' at {}", s_, i_));
    return v;
  }

 private:
  void space() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool eat(std::string_view op) {
    space();
    if (s_.substr(i_, op.size()) != op) return false;
    i_ += op.size();
    return true;
  }
  long primary() {
    if (eat("(")) {
      const long v = bit_and();
      if (!eat(")")) throw std::runtime_error(fmt::format("no ')' in '{}'", s_));
      return v;
    }
    space();
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    const std::string token(s_.substr(start, i_ - start));
    if (token.empty()) throw std::runtime_error(fmt::format("cannot read '{}' at {}", s_, start));
    if (std::isdigit(static_cast<unsigned char>(token[0]))) return std::stol(token);  // "16u" reads as 16
    return names_.at(token);
  }
  long product() {
    long v = primary();
    while (eat("*")) v *= primary();
    return v;
  }
  long sum() {
    long v = product();
    while (eat("+")) v += product();
    return v;
  }
  long shift() {
    long v = sum();
    for (;;) {
      if (eat(">>"))
        v >>= sum();
      else if (eat("<<"))
        v <<= sum();
      else
        return v;
    }
  }
  long bit_and() {
    long v = shift();
    while (eat("&")) v &= shift();
    return v;
  }
  std::string_view s_;
  std::size_t i_ = 0;
  const std::map<std::string, long>& names_;
};

// The lane-dependent names a kernel defines ("const unsigned int g = lane >> 2, t = lane & 3u;"), by
// name, and its element accesses ("a[(g + 8u) * 16u + (2u * t + 1u)]"): matrix and index expression.
struct Accesses {
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<std::pair<char, std::string>> elements;
};
Accesses accesses(const std::string& source) {
  Accesses r;
  std::istringstream lines(source);
  const std::string declaration = "  const unsigned int ";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(declaration, 0) == 0 && line.find('[') == std::string::npos) {
      std::istringstream parts(line.substr(declaration.size(), line.find(';') - declaration.size()));
      for (std::string part; std::getline(parts, part, ',');) {
        const std::size_t eq = part.find(" = ");
        std::string name = part.substr(part.find_first_not_of(' '), eq - part.find_first_not_of(' '));
        if (name == "g" || name == "t" || name == "q") r.names.emplace_back(name, part.substr(eq + 3));
      }
    }
    for (std::size_t i = 1; (i = line.find('[', i)) != std::string::npos; ++i) {
      const char m = line[i - 1];
      const bool alone = i < 2 || !(std::isalnum(static_cast<unsigned char>(line[i - 2])) || line[i - 2] == '_');
      if (std::string_view("abcds").find(m) != std::string_view::npos && alone)
        r.elements.emplace_back(m, line.substr(i + 1, line.find(']', i) - i - 1));
    }
  }
  return r;
}

// Every element each thread reads of A, B and C and writes of D, by the kernel's own expressions:
// each matrix must be covered evenly (once per thread group holding a tile: the warp, each quad pair
// in m8n8k4 binary16, the warpgroup in wgmma), and D written once. wgmma's threads copy B to its
// shared memory `s`: every place written, each as often as each element of B is read (several times
// in a tile of fewer elements than threads).
void expect_layout_covers_the_tiles(const cuda::MmaKernel& k) {
  const std::string source = cuda::mma_kernel_source(k);
  const MmaConfig& cfg = k.config;
  std::map<char, long> size = {{'a', cfg.m * cfg.k}, {'b', cfg.k * cfg.n}, {'c', cfg.m * cfg.n}, {'d', cfg.m * cfg.n}};
  const long threads = 32L * k.warps, b_copies = std::max(1L, threads / size['b']);
  if (k.warps > 1) size['s'] = size['b'];
  const Accesses found = accesses(source);
  // Stores under the guard of m8n8k4 binary16: only the first quad pair writes.
  const bool guarded = source.find("if (((lane >> 2) & 3u) == 0u)") != std::string::npos;
  std::map<char, std::map<long, int>> seen;
  for (long thread = 0; thread < threads; ++thread) {
    const long lane = thread & 31;
    std::map<std::string, long> names = {{"lane", lane}, {"warp", thread >> 5}, {"x", thread}};
    for (const auto& [name, expression] : found.names) names[name] = IndexExpression(expression, names).value();
    for (const auto& [m, expression] : found.elements) {
      if (m == 'd' && guarded && ((lane >> 2) & 3) != 0) continue;
      const long index = IndexExpression(expression, names).value();
      ASSERT_TRUE(index >= 0 && index < size.at(m))
          << cfg.name() << " lane " << lane << ": " << m << "[" << index << "]";
      ++seen[m][index];
    }
  }
  for (const auto& [m, n] : size) {
    ASSERT_EQ(long(seen[m].size()), n) << cfg.name() << " " << k.ptx << ": " << m << " has elements no lane holds";
    const int copies = seen[m].begin()->second;
    for (const auto& [index, times] : seen[m])
      EXPECT_EQ(times, copies) << cfg.name() << " " << m << "[" << index << "]";
    EXPECT_EQ(copies, m == 'd' ? 1 : guarded ? 4 : m == 'b' || m == 's' ? b_copies : 1) << cfg.name() << " " << m;
  }
}

TEST(CudaMmaLayouts, EveryElementHasOnePlacePerThreadGroup) {
  std::set<std::string> checked;
  for (const int arch : kCapabilities)
    for (const cuda::MmaKernel& k : cuda::mma_kernels(arch)) {
      if (k.config.scope == "warp (wmma)" || !checked.insert(k.config.name()).second) continue;
      expect_layout_covers_the_tiles(k);
    }
  fmt::print("layouts checked: {}\n", fmt::join(checked, ", "));
  // Every family: m16n8 (k4 to k32, binary64 from sm_90), m8n8k4 binary16 and binary64, wgmma.
  for (const char* name : {"16x8x4:tf32,tf32,binary32,binary32", "16x8x8:bfloat16,bfloat16,binary32,binary32",
                           "16x8x16:e5m2,e4m3,binary16,binary16", "16x8x16:binary64,binary64,binary64,binary64",
                           "8x8x4:binary64,binary64,binary64,binary64", "8x8x4:binary16,binary16,binary32,binary32",
                           "64x8x8:tf32,tf32,binary32,binary32", "64x64x32:e4m3,e5m2,binary16,binary16",
                           "64x16x16:bfloat16,bfloat16,binary32,binary32"})
    EXPECT_TRUE(checked.count(name)) << name;
}

// ---- The configurations of each compute capability ----

TEST(CudaMmaConfigurations, InstructionsAreTheTablesWithTheirShapeAndFormats) {
  std::map<std::string, int> named;
  for (const int arch : kCapabilities) {
    std::set<std::string> names;
    for (const cuda::MmaKernel& k : cuda::mma_kernels(arch)) {
      const MmaConfig& c = k.config;
      EXPECT_TRUE(names.insert(c.name()).second) << "sm_" << arch << " lists " << c.name() << " twice";
      EXPECT_LE(k.min_arch, arch);
      if (c.instruction.empty()) continue;
      ++named[c.instruction];
      EXPECT_EQ(c.instruction.substr(0, c.instruction.find(':')), cuda::nvidia_architecture(arch));
      const model::MmaInstruction* inst = model::find_mma_instruction(c.instruction);
      ASSERT_TRUE(inst) << c.instruction;
      // wmma's 16x16 tile is two instructions of n = 8: K and the formats are the instruction's.
      EXPECT_EQ(inst->k, c.k) << c.instruction << " for " << c.name();
      EXPECT_EQ(inst->m, c.m) << c.instruction << " for " << c.name();
      const model::DotConfig& d = inst->config;
      EXPECT_TRUE(d.a == c.a && d.b == c.b && d.c == c.c && d.d == c.d) << c.instruction << " for " << c.name();
    }
  }
  const auto find = [](int arch, const std::string& name, const std::string& scope) -> const MmaConfig* {
    static std::vector<cuda::MmaKernel> kept;
    kept = cuda::mma_kernels(arch);
    for (const cuda::MmaKernel& k : kept)
      if (k.config.name() == name && k.config.scope == scope) return &k.config;
    return nullptr;
  };
  const std::string sync = "warp (mma.sync)", wmma = "warp (wmma)", wgmma = "warpgroup (wgmma)";
  const struct {
    int arch;
    std::string config, scope, instruction;  // instruction "-": the configuration is absent
  } expected[] = {
      {70, "8x8x4:binary16,binary16,binary32,binary32", sync, "volta:HMMA.884.F32.F32"},
      {70, "8x8x4:binary16,binary16,binary16,binary32", sync, "volta:HMMA.884.F32.F16"},
      {70, "16x16x16:binary16,binary16,binary32,binary32", wmma, ""},  // Volta chains HMMA.884
      {70, "16x8x8:binary16,binary16,binary32,binary32", sync, "-"},
      {75, "8x8x4:binary16,binary16,binary16,binary16", sync, "turing:HMMA.884.F16.F16"},
      {75, "16x8x8:binary16,binary16,binary16,binary16", sync, "turing:HMMA.1688.F16"},
      {75, "16x8x16:binary16,binary16,binary32,binary32", sync, "-"},
      {80, "16x8x16:binary16,binary16,binary32,binary32", sync, "ampere:HMMA.16816.F32"},
      {80, "16x16x16:binary16,binary16,binary16,binary16", wmma, "ampere:HMMA.16816.F16"},
      {80, "16x8x16:bfloat16,bfloat16,binary32,binary32", sync, "ampere:HMMA.16816.F32.BF16"},
      {80, "16x8x8:tf32,tf32,binary32,binary32", sync, "ampere:HMMA.1688.F32.TF32"},
      {80, "8x8x4:binary64,binary64,binary64,binary64", sync, "ampere:DMMA.884"},
      {80, "8x8x4:binary16,binary16,binary32,binary32", sync, "-"},  // emulated from sm_80 on
      {80, "16x8x32:e4m3,e4m3,binary32,binary32", sync, "-"},
      {89, "16x8x32:e4m3,e5m2,binary32,binary32", sync, "ada:QMMA.16832.F32.E4M3.E5M2"},
      {89, "16x8x32:e5m2,e5m2,binary16,binary16", sync, "ada:QMMA.16832.F16.E5M2.E5M2"},
      {90, "16x8x16:binary16,binary16,binary32,binary32", sync, "hopper:HMMA.16816.F32"},
      // Hopper's fp8 mma.sync: the emulated row (binary16 HMMA.16816 on converted inputs).
      {90, "16x8x32:e4m3,e4m3,binary32,binary32", sync, "hopper:QMMA.16832.F32.E4M3.E4M3"},
      {100, "16x8x16:bfloat16,bfloat16,binary32,binary32", sync, "blackwell:HMMA.16816.F32.BF16"},
      {120, "16x8x32:e4m3,e4m3,binary32,binary32", sync, "rtx-blackwell:QMMA.16832.F32.E4M3.E4M3"},
      {80, "16x8x8:bfloat16,bfloat16,binary32,binary32", sync, "ampere:HMMA.1688.F32.BF16"},
      {80, "16x8x4:tf32,tf32,binary32,binary32", sync, "ampere:HMMA.1684.F32.TF32"},
      {90, "16x8x4:tf32,tf32,binary32,binary32", sync, "hopper:HMMA.1684.F32.TF32"},
      {100, "16x8x8:bfloat16,bfloat16,binary32,binary32", sync, "blackwell:HMMA.1688.F32.BF16"},
      {80, "16x8x16:e4m3,e4m3,binary32,binary32", sync, "-"},
      {89, "16x8x16:e4m3,e5m2,binary32,binary32", sync, "ada:QMMA.16816.F32.E4M3.E5M2"},
      {89, "16x8x16:e5m2,e4m3,binary16,binary16", sync, "ada:QMMA.16816.F16.E5M2.E4M3"},
      {90, "16x8x16:e4m3,e4m3,binary32,binary32", sync, "hopper:QMMA.16816.F32.E4M3.E4M3"},
      {120, "16x8x16:e5m2,e5m2,binary32,binary32", sync, "rtx-blackwell:QMMA.16816.F32.E5M2.E5M2"},
      {89, "16x8x4:binary64,binary64,binary64,binary64", sync, "-"},  // mma.m16n8kK.f64 needs sm_90
      {90, "16x8x4:binary64,binary64,binary64,binary64", sync, "hopper:DMMA.16x8x4"},
      {90, "16x8x8:binary64,binary64,binary64,binary64", sync, "hopper:DMMA.16x8x8"},
      {90, "16x8x16:binary64,binary64,binary64,binary64", sync, "hopper:DMMA.16x8x16"},
      {100, "16x8x16:binary64,binary64,binary64,binary64", sync, ""},  // Blackwell's DMMA is not in the table
      {90, "64x8x16:binary16,binary16,binary32,binary32", wgmma, "hopper:HGMMA.64x8x16.F32"},
      {90, "64x8x16:binary16,binary16,binary16,binary16", wgmma, "hopper:HGMMA.64x8x16.F16"},
      {90, "64x8x16:bfloat16,bfloat16,binary32,binary32", wgmma, "hopper:HGMMA.64x8x16.F32.BF16"},
      {90, "64x8x8:tf32,tf32,binary32,binary32", wgmma, "hopper:HGMMA.64x8x8.F32.TF32"},
      {90, "64x8x32:e4m3,e5m2,binary32,binary32", wgmma, "hopper:QGMMA.64x8x32.F32.E4M3.E5M2"},
      {90, "64x8x32:e5m2,e5m2,binary16,binary16", wgmma, "hopper:QGMMA.64x8x32.F16.E5M2.E5M2"},
      {90, "64x16x16:binary16,binary16,binary32,binary32", wgmma, ""},  // the table lists N = 8 alone
      {90, "64x64x32:e4m3,e4m3,binary32,binary32", wgmma, ""},
      {89, "64x8x16:binary16,binary16,binary32,binary32", wgmma, "-"},
      {100, "64x8x16:binary16,binary16,binary32,binary32", wgmma, "-"},  // Blackwell has tcgen05 instead
  };
  for (const auto& e : expected) {
    const MmaConfig* c = find(e.arch, e.config, e.scope);
    if (e.instruction == "-") {
      EXPECT_FALSE(c) << "sm_" << e.arch << " lists " << e.config;
      continue;
    }
    ASSERT_TRUE(c) << "sm_" << e.arch << " lacks " << e.config << " " << e.scope;
    EXPECT_EQ(c->instruction, e.instruction) << "sm_" << e.arch << " " << e.config;
  }
  // Every row of Hopper and Blackwell that mma.sync or wgmma runs is named: all of them but
  // tcgen05's (UTC*) and DMMA.8x8x4, MMA-Sim's other name for DMMA.884.
  for (const int arch : {90, 100}) {
    std::set<std::string> names;
    for (const cuda::MmaKernel& k : cuda::mma_kernels(arch)) names.insert(k.config.instruction);
    for (const model::MmaInstruction& i : model::all_mma_instructions()) {
      if (i.arch != cuda::nvidia_architecture(arch) || i.name.rfind("UTC", 0) == 0 || i.name == "DMMA.8x8x4") continue;
      EXPECT_TRUE(names.count(i.id())) << "sm_" << arch << " names no configuration " << i.id();
    }
  }
  EXPECT_TRUE(cuda::mma_kernels(61).empty());
  EXPECT_EQ(cuda::nvidia_architecture(88), "");  // unknown to the tables: no instruction named
  fmt::print("instructions named: {}\n", named.size());
}

// ---- The driver, where there is one ----

struct Found {
  std::vector<std::unique_ptr<Device>> devices;
  std::string why;  // why there is none
};

Found find(CudaBackend::Options options) {
  Found f;
  auto d = CudaBackend(options).enumerate();
  if (d)
    f.devices = std::move(*d);
  else
    f.why = "no CUDA device: " + d.error().message;
  return f;
}

Found& found() {
  static Found f = find({});
  return f;
}

TEST(CudaBackend, DevicesOrWhyNot) {
  if (found().devices.empty()) {
    EXPECT_FALSE(found().why.empty());
    GTEST_SKIP() << found().why;
  }
  for (const auto& d : found().devices) {
    EXPECT_EQ(d->info().id.rfind("cuda:", 0), 0u);
    EXPECT_EQ(d->info().backend, "cuda");
    EXPECT_EQ(d->info().vendor, "NVIDIA");
    EXPECT_NE(d->info().api.find("compute capability"), std::string::npos) << d->info().api;
    EXPECT_TRUE(d->caps().has(binary32) || !d->caps().mma_unsupported.empty()) << d->info().description;
    fmt::print("{} {}: {}; {}\n", d->info().id, d->info().name, d->info().api, d->info().description);
  }
}

// Without a device the command line lists the reason with the other backends' devices.
TEST(CudaCommandLine, DevicesSaysWhyThereIsNone) {
  const testing::CliRun run = testing::run_cli("devices", "gpuparanoia-cuda-devices");
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  EXPECT_NE(run.output.find("ref:ieee-binary32"), std::string::npos) << run.output;
  if (found().devices.empty())
    EXPECT_NE(run.output.find("not available: " + found().why.substr(found().why.find(": ") + 2)), std::string::npos)
        << run.output;
  else
    EXPECT_NE(run.output.find("cuda:0 "), std::string::npos) << run.output;
}

// The first device that runs kernels.
Device* gpu() {
  for (const auto& d : found().devices)
    if (d->caps().has(binary32)) return d.get();
  return nullptr;
}
std::string no_gpu() { return found().devices.empty() ? found().why : "no CUDA device NVRTC can compile for"; }

// binary32 and binary64 through __f*_rn and __d*_rn, binary16 + - * fma through add.rn.f16 and
// the like, and every conversion are correctly rounded: the model's IEEE result, bit for bit (any
// NaN for a NaN). binary16 division and square root are cuda_fp16.h's approximations: the suite's.
TEST(CudaScalar, IntrinsicsAreCorrectlyRounded) {
  Device* d = gpu();
  if (!d) GTEST_SKIP() << no_gpu();
  std::mt19937_64 rng(1);
  // Half uniform bit patterns (every class), half values within a few binades of 1.
  const auto operands = [&](const model::Format& f, std::size_t n) {
    std::vector<std::uint64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t x = rng() & f.storage_mask();
      const std::uint64_t near_one =
          (x & ~(f.storage_mask() >> 1 & ~f.man_mask())) | std::uint64_t(f.bias + int(rng() % 8) - 4) << f.man_bits;
      v[i] = i % 2 ? x : near_one;
    }
    return v;
  };
  const std::pair<Node, model::Op> ops[] = {{Node::add, model::Op::add}, {Node::sub, model::Op::sub},
                                            {Node::mul, model::Op::mul}, {Node::fma, model::Op::fma},
                                            {Node::div, model::Op::div}, {Node::sqrt, model::Op::sqrt}};
  const auto same = [](const model::Format& f, std::uint64_t a, std::uint64_t b) {
    return a == b || (model::is_nan(model::classify(f, a)) && model::is_nan(model::classify(f, b)));
  };
  for (const model::Format* f : d->caps().formats) {
    for (const auto& [node, op] : ops) {
      if (f == &binary16 && (op == model::Op::div || op == model::Op::sqrt)) continue;
      const int n = model::arity(op);
      const Expr e = n == 1 ? unary(node, *f) : n == 2 ? binary(node, *f) : ternary(node, *f);
      const std::vector<std::uint64_t> x = operands(*f, 20000 * std::size_t(n));
      auto out = d->scalar({&e, x});
      ASSERT_TRUE(out) << out.error().message;
      int bad = 0;
      for (std::size_t i = 0; i < out->size(); ++i) {
        const std::span<const std::uint64_t> t(&x[i * std::size_t(n)], std::size_t(n));
        const std::uint64_t want = model::evaluate(op, *f, model::Options{}, t, *f).bits;
        if (!same(*f, (*out)[i], want) && ++bad <= 5)
          ADD_FAILURE() << fmt::format("{} {} {}({:x}) = {:x}, IEEE {:x}", d->info().id, f->name, model::name(op),
                                       fmt::join(t, ", "), (*out)[i], want);
      }
    }
    for (const model::Format* to : d->caps().formats) {
      if (to == f) continue;
      const Expr e = conversion(*f, *to);
      const std::vector<std::uint64_t> x = operands(*f, 20000);
      auto out = d->scalar({&e, x});
      ASSERT_TRUE(out) << out.error().message;
      int bad = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const std::uint64_t want = model::cvt(*to, *f, {}, x[i]).bits;
        if (!same(*to, (*out)[i], want) && ++bad <= 5)
          ADD_FAILURE() << fmt::format("{} {} -> {}: {:x} gave {:x}, IEEE {:x}", d->info().id, f->name, to->name, x[i],
                                       (*out)[i], want);
      }
    }
  }
}

TEST(CudaScalar, ModulesAreLoadedOncePerSourceAndBatchesSplit) {
  if (!gpu()) GTEST_SKIP() << no_gpu();
  Found small = find({.max_launch_bytes = 4096});  // 341 tuples of add a launch
  auto* d = dynamic_cast<CudaDevice*>(small.devices.at(0).get());
  ASSERT_TRUE(d);
  const Expr add = binary(Node::add, binary32), mul = binary(Node::mul, binary32);
  std::vector<std::uint64_t> x;
  for (std::uint64_t i = 0; i < 10000; ++i) x.insert(x.end(), {0x3f800000 + i, 0x3f800000});
  for (int i = 0; i < 3; ++i) {
    auto r = d->scalar({&add, x});
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->size(), 10000u);
    for (std::size_t k = 0; k < r->size(); k += 999)
      EXPECT_EQ((*r)[k], model::evaluate(model::Op::add, binary32, {}, std::span(&x[2 * k], 2), binary32).bits);
  }
  EXPECT_EQ(d->modules_loaded(), 1u);
  ASSERT_TRUE(d->scalar({&mul, x}));
  EXPECT_EQ(d->modules_loaded(), 2u);
}

// run --code: each image loaded is kept once, as CUBIN (PTX where the driver compiles it), named
// after its expression and target.
TEST(CudaScalar, ImagesAreKeptWithTheirTarget) {
  if (!gpu()) GTEST_SKIP() << no_gpu();
  const std::filesystem::path dir = testing::fresh_folder("gpuparanoia-cuda-code", "kept");
  Found keeping = find({.code = dir});
  Device& d = *keeping.devices.at(0);
  if (!d.caps().has(binary32)) GTEST_SKIP() << "cuda:0 runs no kernel: " << d.info().description;
  const Expr add = binary(Node::add, binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x3f800000};
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(d.scalar({&add, x}));
  ASSERT_EQ(d.info().code, (dir / "cuda_0").string());
  std::vector<std::filesystem::path> kept;
  for (const auto& f : std::filesystem::directory_iterator(d.info().code)) kept.push_back(f.path());
  ASSERT_EQ(kept.size(), 1u);
  const std::string name = kept[0].filename().string();
  EXPECT_TRUE(name.starts_with(file_stem(add.to_string()) + ".")) << name;
  EXPECT_TRUE(name.ends_with(".cubin") || name.ends_with(".ptx")) << name;
  EXPECT_GT(std::filesystem::file_size(kept[0]), 0u);
}

// A driver whose first launch fails with a sticky error (CUDA_ERROR_ILLEGAL_ADDRESS), as a kernel
// that faults leaves the context: that batch is the error, and every later batch fails at once with
// it, launching nothing. The driver is a table of functions that pretend (no GPU needed); NVRTC is
// the real one.
struct StickyDriver {
  static inline int launches = 0;
  static cuda::DriverApi api() {
    cuda::DriverApi a;
    const auto ok = [](auto...) { return CUDA_SUCCESS; };
    a.cuDeviceGet = [](CUdevice* d, int) {
      *d = 0;
      return CUDA_SUCCESS;
    };
    a.cuDeviceGetName = [](char* name, int, CUdevice) {
      std::strcpy(name, "sticky");
      return CUDA_SUCCESS;
    };
    a.cuDeviceGetAttribute = [](int* v, CUdevice_attribute attribute, CUdevice) {
      *v = attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 8 : 0;
      return CUDA_SUCCESS;
    };
    a.cuDeviceTotalMem = [](std::size_t* bytes, CUdevice) {
      *bytes = std::size_t{1} << 30;
      return CUDA_SUCCESS;
    };
    a.cuDriverGetVersion = [](int* v) {
      *v = 12080;
      return CUDA_SUCCESS;
    };
    a.cuDeviceGetUuid = [](CUuuid* u, CUdevice) {
      for (int i = 0; i < 16; ++i) u->bytes[i] = char(i);
      return CUDA_SUCCESS;
    };
    a.cuDeviceGetPCIBusId = [](char* bus, int n, CUdevice) {
      std::snprintf(bus, std::size_t(n), "0000:65:00.0");
      return CUDA_SUCCESS;
    };
    a.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
      *c = reinterpret_cast<CUcontext>(1);
      return CUDA_SUCCESS;
    };
    a.cuDevicePrimaryCtxRelease = ok;
    a.cuCtxPushCurrent = ok;
    a.cuCtxPopCurrent = ok;
    a.cuModuleLoadDataEx = [](CUmodule* m, const void*, unsigned, CUjit_option*, void**) {
      *m = reinterpret_cast<CUmodule>(1);
      return CUDA_SUCCESS;
    };
    a.cuModuleUnload = ok;
    a.cuModuleGetFunction = [](CUfunction* f, CUmodule, const char*) {
      *f = reinterpret_cast<CUfunction>(1);
      return CUDA_SUCCESS;
    };
    a.cuMemAlloc = [](CUdeviceptr* p, std::size_t) {
      *p = 4096;
      return CUDA_SUCCESS;
    };
    a.cuMemFree = ok;
    a.cuMemcpyHtoD = ok;
    a.cuMemcpyDtoH = ok;
    a.cuCtxSynchronize = ok;
    a.cuLaunchKernel = [](auto...) {
      ++launches;
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    };
    a.cuGetErrorName = [](CUresult r, const char** s) {
      *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "other";
      return CUDA_SUCCESS;
    };
    a.cuGetErrorString = [](CUresult, const char** s) {
      *s = "pretended";
      return CUDA_SUCCESS;
    };
    return a;
  }
};

TEST(CudaScalar, AStickyErrorLosesTheContext) {
  if (!nvrtc()) GTEST_SKIP() << nvrtc().error().message;
  static const cuda::DriverApi api = StickyDriver::api();
  auto d = CudaDevice::create(api, *nvrtc(), 0, 0);
  ASSERT_TRUE(d) << d.error().message;
  // Its identity, as the driver gives it.
  EXPECT_EQ((*d)->info().identity.at("device_uuid"), "00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ((*d)->info().identity.at("pci_bus"), "0000:65:00.0");
  const Expr add = binary(Node::add, binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x3f800000};
  auto first = (*d)->scalar({&add, x});
  ASSERT_FALSE(first);
  EXPECT_NE(first.error().message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << first.error().message;
  EXPECT_EQ(first.error().kind, ErrorKind::lost);
  EXPECT_EQ(StickyDriver::launches, 1);
  const Expr mul = binary(Node::mul, binary32);
  for (const Expr* e : {&add, &mul}) {
    auto later = (*d)->scalar({e, x});
    ASSERT_FALSE(later);
    EXPECT_NE(later.error().message.find("the context is lost (cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS"),
              std::string::npos)
        << later.error().message;
    EXPECT_EQ(later.error().kind, ErrorKind::lost);
  }
  ASSERT_FALSE((*d)->caps().mma.empty());
  const MmaConfig& cfg = (*d)->caps().mma.front();
  const std::vector<std::uint64_t> a(std::size_t(cfg.m * cfg.k)), b(std::size_t(cfg.k * cfg.n)),
      c(std::size_t(cfg.m * cfg.n));
  auto mma = (*d)->mma({&cfg, a, b, c});
  ASSERT_FALSE(mma);
  EXPECT_EQ(mma.error().kind, ErrorKind::lost);
  EXPECT_EQ(StickyDriver::launches, 1) << "a lost context launched again";
}

TEST(CudaScalar, FailuresAreErrors) {
  Device* d = gpu();
  if (!d) GTEST_SKIP() << no_gpu();
  testing::expect_scalar_failures_are_errors(*d);
}

// Exact integer tiles through every configuration: the fragment layouts against the hardware.
TEST(CudaMma, ExactTilesComeBackExactly) {
  Device* d = gpu();
  if (!d) GTEST_SKIP() << no_gpu();
  ASSERT_FALSE(d->caps().mma.empty()) << d->caps().mma_unsupported;
  for (const MmaConfig& cfg : d->caps().mma) {
    fmt::print("{} ({}): {} {} {}\n", d->info().id, d->info().name, cfg.name(), cfg.scope, cfg.instruction);
    testing::expect_exact(*d, cfg, 37, 1);
  }
}

TEST(CudaMma, BatchesSplitOverLaunches) {
  if (!gpu()) GTEST_SKIP() << no_gpu();
  Found small = find({.max_launch_bytes = 4096});  // a few tiles a launch: 37 take many
  Device& d = *small.devices.at(0);
  for (const MmaConfig& cfg : d.caps().mma) testing::expect_exact(d, cfg, 37, 2);
}

TEST(CudaMma, FailuresAreErrors) {
  Device* d = gpu();
  if (!d || d->caps().mma.empty()) GTEST_SKIP() << no_gpu();
  testing::expect_mma_failures_are_errors(*d);
}

TEST(CudaCommandLine, QuickScalarSuite) {
  Device* d = gpu();
  if (!d) GTEST_SKIP() << no_gpu();
  const testing::CliRun run =
      testing::run_cli(fmt::format("run --device '{}' --suite scalar --quick --seed 1 --json {{json}}", d->info().id),
                       "gpuparanoia-cuda-cli");
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  ASSERT_TRUE(run.result.is_object()) << "no JSON result\n" << run.tail();
  ASSERT_FALSE(run.result["findings"].empty());
  for (const auto& f : run.result["findings"])
    EXPECT_NE(f["status"], "error") << f["probe"] << " " << f["format"] << ": " << f.value("message", "");
  fmt::print("{}", run.output);
}

TEST(CudaCommandLine, QuickMmaSuite) {
  Device* d = gpu();
  if (!d || d->caps().mma.empty()) GTEST_SKIP() << no_gpu();
  testing::expect_quick_mma_suite(*d, "gpuparanoia-cuda-mma");
}

}  // namespace
}  // namespace gp::backends

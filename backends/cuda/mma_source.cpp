#include "backends/cuda/mma_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <tuple>

#include "backends/kernel_template.hpp"
#include "model/mma_instructions.hpp"
#include "shaders/cuda/mma.cu.hpp"

namespace gp::backends::cuda {

namespace {

using model::Format;

// The fragment layouts: the m16n8kK family (HMMA.1684 to QMMA.16832, DMMA.16x8xK), m8n8k4 binary64
// (DMMA.884), m8n8k4 binary16 (Volta's quad pairs), wmma (opaque fragments) and wgmma (m64nNkK: per
// warp, A and D as in m16n8kK; B in shared memory).
enum class Family { m16n8, m8n8_f64, m8n8_f16, wmma, wgmma };
enum class Operand { a, b, cd };

struct Shape {
  Family family;
  int m, n, k;
  const Format *a, *b, *c, *d;
  int min_arch, max_arch;  // max_arch 0: every later architecture
  std::string sass;        // the instruction's name in the table, without the architecture
};

std::string ptx_type(const Format& f) {
  if (&f == &model::binary16) return "f16";
  if (&f == &model::bfloat16) return "bf16";
  if (&f == &model::tf32) return "tf32";
  if (&f == &model::binary64) return "f64";
  if (&f == &model::e4m3) return "e4m3";
  if (&f == &model::e5m2) return "e5m2";
  return "f32";
}

const char* scope(Family f) {
  return f == Family::wmma ? "warp (wmma)" : f == Family::wgmma ? "warpgroup (wgmma)" : "warp (mma.sync)";
}

// The table's spelling of an accumulator (F32, F16) or an fp8 type (E4M3).
std::string table_type(const Format& f) {
  std::string s = ptx_type(f);
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

std::vector<Shape> shapes() {
  using model::binary16, model::binary32, model::binary64;
  std::vector<Shape> v;
  // m8n8k4 binary16 is Volta's HMMA.884, which Turing keeps; from sm_80 the PTX ISA emulates it.
  for (const auto& [c, d] : {std::pair{&binary32, &binary32}, {&binary16, &binary32}, {&binary16, &binary16}})
    v.push_back({Family::m8n8_f16, 8, 8, 4, &binary16, &binary16, c, d, 70, 75,
                 "HMMA.884." + table_type(*d) + "." + table_type(*c)});
  // wmma's m16n16k16 runs as two HMMA.16816 from Ampere on; Volta and Turing chain shorter ones.
  for (const Format* acc : {&binary32, &binary16}) {
    v.push_back({Family::wmma, 16, 16, 16, &binary16, &binary16, acc, acc, 70, 0, "HMMA.16816." + table_type(*acc)});
    v.push_back({Family::m16n8, 16, 8, 8, &binary16, &binary16, acc, acc, 75, 0, "HMMA.1688." + table_type(*acc)});
    v.push_back({Family::m16n8, 16, 8, 16, &binary16, &binary16, acc, acc, 80, 0, "HMMA.16816." + table_type(*acc)});
  }
  v.push_back({Family::m16n8, 16, 8, 16, &model::bfloat16, &model::bfloat16, &binary32, &binary32, 80, 0,
               "HMMA.16816.F32.BF16"});
  v.push_back(
      {Family::m16n8, 16, 8, 8, &model::bfloat16, &model::bfloat16, &binary32, &binary32, 80, 0, "HMMA.1688.F32.BF16"});
  v.push_back({Family::m16n8, 16, 8, 8, &model::tf32, &model::tf32, &binary32, &binary32, 80, 0, "HMMA.1688.F32.TF32"});
  v.push_back({Family::m16n8, 16, 8, 4, &model::tf32, &model::tf32, &binary32, &binary32, 80, 0, "HMMA.1684.F32.TF32"});
  v.push_back({Family::m8n8_f64, 8, 8, 4, &binary64, &binary64, &binary64, &binary64, 80, 0, "DMMA.884"});
  // The PTX ISA has mma.m16n8k{4,8,16}.f64 from sm_90 (Hopper's DMMA.16x8xK).
  for (const int k : {4, 8, 16})
    v.push_back(
        {Family::m16n8, 16, 8, k, &binary64, &binary64, &binary64, &binary64, 90, 0, fmt::format("DMMA.16x8x{}", k)});
  // fp8 mma.sync, K = 32 and 16 (the PTX ISA's m16n8k16 .e4m3/.e5m2), both from sm_89.
  for (const int k : {32, 16})
    for (const Format* a : {&model::e4m3, &model::e5m2})
      for (const Format* b : {&model::e4m3, &model::e5m2})
        for (const Format* acc : {&binary32, &binary16})
          v.push_back({Family::m16n8, 16, 8, k, a, b, acc, acc, 89, 0,
                       fmt::format("QMMA.168{}.{}.{}.{}", k, table_type(*acc), table_type(*a), table_type(*b))});
  // wgmma, sm_90a alone (Blackwell has tcgen05 instead): one 64xNxK tile per warpgroup. The table
  // lists N = 8; a wider N computes each element of D in the same way, as an instruction the table
  // does not name (HGMMA.64x16x16.F32): those configurations name none.
  for (const int n : {8, 16, 64}) {
    const auto wgmma = [&](int k, const Format* a, const Format* b, const Format* acc, const std::string& suffix) {
      v.push_back({Family::wgmma, 64, n, k, a, b, acc, acc, 90, 90,
                   fmt::format("{}GMMA.64x{}x{}.{}", a->storage_bits == 8 ? "Q" : "H", n, k, suffix)});
    };
    for (const Format* acc : {&binary32, &binary16}) wgmma(16, &binary16, &binary16, acc, table_type(*acc));
    wgmma(16, &model::bfloat16, &model::bfloat16, &binary32, "F32.BF16");
    wgmma(8, &model::tf32, &model::tf32, &binary32, "F32.TF32");
    for (const Format* a : {&model::e4m3, &model::e5m2})
      for (const Format* b : {&model::e4m3, &model::e5m2})
        for (const Format* acc : {&binary32, &binary16})
          wgmma(32, a, b, acc, fmt::format("{}.{}.{}", table_type(*acc), table_type(*a), table_type(*b)));
  }
  return v;
}

// Where element i of a thread's fragment sits in its matrix (row, column), as expressions of the
// lane: g = lane >> 2 and t = lane & 3 (the m16n8 and m8n8 binary64 layouts; in wgmma g also counts
// the 16 rows of each warp before the thread's), q = the row (A, C) or column (B) of the thread's
// quad pair in m8n8k4 binary16. `bits`: the element's storage width; an
// operand packs 32 / bits elements in a register (binary16 pairs, fp8 quadruples), the first in the
// low bits; binary64 takes a register of its own.
struct Position {
  std::string row, col;
};
Position position(Family family, Operand op, int bits, int i) {
  switch (family) {
    case Family::m16n8:
    case Family::wgmma: {
      const int e = std::max(1, 32 / bits), r = i / e, j = i % e;
      if (op == Operand::a) return {r & 1 ? "g + 8u" : "g", fmt::format("{}u * t + {}u", e, j + 4 * e * (r >> 1))};
      if (op == Operand::b) return {fmt::format("{}u * t + {}u", e, j + 4 * e * r), "g"};
      // D of wgmma repeats the m16n8 layout in every 8 columns.
      return {(i >> 1) & 1 ? "g + 8u" : "g", fmt::format("2u * t + {}u", 8 * (i >> 2) + (i & 1))};
    }
    case Family::m8n8_f64:
      if (op == Operand::a) return {"g", "t"};
      if (op == Operand::b) return {"t", "g"};
      return {"g", fmt::format("2u * t + {}u", i)};
    case Family::m8n8_f16:
      if (op == Operand::a) return {"q", fmt::format("{}u", i)};
      if (op == Operand::b) return {fmt::format("{}u", i), "q"};
      if (bits == 16) return {"q", fmt::format("{}u", i)};
      return {fmt::format("(lane & 1u) + {}u + ((lane >> 4) << 2)", i & 2),
              fmt::format("{}u + (lane & 2u) + {}u", i & 4, i & 1)};
    case Family::wmma: break;
  }
  return {};
}

const char* storage_type(const Format& f) {
  switch (f.storage_bits) {
    case 8: return "unsigned char";
    case 16: return "unsigned short";
    case 64: return "unsigned long long";
    default: return "unsigned int";
  }
}

// How a fragment's registers hold the format: binary32 in .f32 registers, binary64 in .f64, the
// others packed into 32-bit ones.
struct Registers {
  const char* type;
  const char* constraint;
  int per_register;  // elements
};
Registers registers(const Format& f) {
  if (&f == &model::binary32) return {"float", "f", 1};
  if (&f == &model::binary64) return {"double", "d", 1};
  return {"unsigned int", "r", 32 / f.storage_bits};
}

// A fragment: its register variables `<name>0`, ... and the code declaring them.
struct Fragment {
  std::vector<std::string> operands;  // "\"r\"(a0)"
  std::string code;
};

// Registers of `count` elements; with `load`, each read from its place in the tile `name` (ld
// elements a row), raw bits.
Fragment fragment(Family family, Operand op, const Format& f, char name, int count, int ld, bool load) {
  const Registers r = registers(f);
  Fragment frag;
  for (int reg = 0; reg < count / r.per_register; ++reg) {
    std::string value;
    for (int j = 0; j < r.per_register && load; ++j) {
      const Position p = position(family, op, f.storage_bits, reg * r.per_register + j);
      const std::string element = fmt::format("{}[({}) * {}u + ({})]", name, p.row, ld, p.col);
      if (&f == &model::binary32)
        value = fmt::format("__uint_as_float({})", element);
      else if (&f == &model::binary64)
        value = fmt::format("__longlong_as_double((long long){})", element);
      else
        value += fmt::format("{}(unsigned int){}{}", j ? " | " : "", element,
                             j ? fmt::format(" << {}", j * f.storage_bits) : "");
    }
    frag.code += load ? fmt::format("  const {} {}{} = {};\n", r.type, name, reg, value)
                      : fmt::format("  {} {}{};\n", r.type, name, reg);
    frag.operands.push_back(fmt::format("\"{}{}\"({}{})", load ? "" : "=", r.constraint, name, reg));
  }
  return frag;
}

// Statements writing fragment D's registers to their places in the tile.
std::string store(Family family, const Format& f, int count, int ld) {
  const Registers r = registers(f);
  std::string s;
  for (int i = 0; i < count; ++i) {
    const Position p = position(family, Operand::cd, f.storage_bits, i);
    const int reg = i / r.per_register, j = i % r.per_register;
    std::string value = fmt::format("d{}", reg);
    if (&f == &model::binary32)
      value = fmt::format("__float_as_uint({})", value);
    else if (&f == &model::binary64)
      value = fmt::format("(unsigned long long)__double_as_longlong({})", value);
    else
      value = fmt::format("({})({} >> {})", storage_type(f), value, j * f.storage_bits);
    s += fmt::format("  d[({}) * {}u + ({})] = {};\n", p.row, ld, p.col, value);
  }
  return s;
}

// "{%4, %5, %6, %7}" for n operands from `first`.
std::string operand_list(int first, int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(fmt::format("%{}", first + i));
  return "{" + fmt::format("{}", fmt::join(v, ", ")) + "}";
}

std::string asm_statement(const std::string& text, const std::vector<std::string>& outputs,
                          const std::vector<std::string>& inputs, bool memory = false) {
  return fmt::format("  asm volatile(\"{}\" : {} : {}{});\n", text, fmt::join(outputs, ", "), fmt::join(inputs, ", "),
                     memory ? " : \"memory\"" : "");
}

// wmma: the instruction loads and stores the fragments itself, row-major with the tile's stride.
std::string wmma_body(const MmaConfig& cfg) {
  const Registers ab = registers(*cfg.a), acc = registers(*cfg.c);
  // The PTX ISA's fragment sizes: A and B hold each element twice across the warp (8 .f16x2 registers
  // a thread), C and D once.
  const int nab = 2 * cfg.m * cfg.k / 32 / ab.per_register, nc = cfg.m * cfg.n / 32 / acc.per_register;
  const std::string shape = fmt::format("m{}n{}k{}", cfg.m, cfg.n, cfg.k);
  std::string s;
  std::vector<std::string> regs_a, regs_b, regs_c;
  for (const auto& [name, n, regs, r] :
       {std::tuple{'a', nab, &regs_a, &ab}, {'b', nab, &regs_b, &ab}, {'c', nc, &regs_c, &acc}}) {
    std::vector<std::string> outputs;
    for (int i = 0; i < n; ++i) {
      s += fmt::format("  {} {}{};\n", r->type, name, i);
      outputs.push_back(fmt::format("\"={}\"({}{})", r->constraint, name, i));
      regs->push_back(fmt::format("\"{}\"({}{})", r->constraint, name, i));
    }
    const Format& f = name == 'c' ? *cfg.c : *cfg.a;
    s += asm_statement(fmt::format("wmma.load.{}.sync.aligned.row.{}.{} {}, [%{}], {};", name, shape, ptx_type(f),
                                   operand_list(0, n), n, name == 'a' ? cfg.k : cfg.n),
                       outputs, {fmt::format("\"l\"({})", name)});
  }
  // D = A * B + C in C's registers.
  std::vector<std::string> tied, inputs = regs_a;
  for (int i = 0; i < nc; ++i) tied.push_back(fmt::format("\"+{}\"(c{})", acc.constraint, i));
  inputs.insert(inputs.end(), regs_b.begin(), regs_b.end());
  s += asm_statement(
      fmt::format("wmma.mma.sync.aligned.row.row.{}.{}.{} {}, {}, {}, {};", shape, ptx_type(*cfg.d), ptx_type(*cfg.c),
                  operand_list(0, nc), operand_list(nc, nab), operand_list(nc + nab, nab), operand_list(0, nc)),
      tied, inputs);
  std::vector<std::string> stored = {"\"l\"(d)"};
  stored.insert(stored.end(), regs_c.begin(), regs_c.end());
  s += asm_statement(fmt::format("wmma.store.d.sync.aligned.row.{}.{} [%0], {}, {};", shape, ptx_type(*cfg.d),
                                 operand_list(1, nc), cfg.n),
                     {}, stored, true);
  return s;
}

std::string mma_sync_body(const MmaKernel& kernel, Family family) {
  const MmaConfig& cfg = kernel.config;
  // Threads holding one tile: the warp, or a quad pair in m8n8k4 binary16.
  const int holders = family == Family::m8n8_f16 ? 8 : 32;
  std::string s = family == Family::m8n8_f16 ? "  const unsigned int q = (lane & 3u) + ((lane >> 4) << 2);\n"
                                             : "  const unsigned int g = lane >> 2, t = lane & 3u;\n";
  const Fragment a = fragment(family, Operand::a, *cfg.a, 'a', cfg.m * cfg.k / holders, cfg.k, true);
  const Fragment b = fragment(family, Operand::b, *cfg.b, 'b', cfg.k * cfg.n / holders, cfg.n, true);
  const Fragment c = fragment(family, Operand::cd, *cfg.c, 'c', cfg.m * cfg.n / holders, cfg.n, true);
  const Fragment d = fragment(family, Operand::cd, *cfg.d, 'd', cfg.m * cfg.n / holders, cfg.n, false);
  s += a.code + b.code + c.code + d.code;
  const int nd = int(d.operands.size()), na = int(a.operands.size()), nb = int(b.operands.size()),
            nc = int(c.operands.size());
  std::vector<std::string> inputs = a.operands;
  inputs.insert(inputs.end(), b.operands.begin(), b.operands.end());
  inputs.insert(inputs.end(), c.operands.begin(), c.operands.end());
  s += asm_statement(fmt::format("{} {}, {}, {}, {};", kernel.ptx, operand_list(0, nd), operand_list(nd, na),
                                 operand_list(nd + na, nb), operand_list(nd + na + nb, nc)),
                     d.operands, inputs);
  const std::string stores = store(family, *cfg.d, cfg.m * cfg.n / holders, cfg.n);
  if (family != Family::m8n8_f16) return s + stores;
  return s + "  if (((lane >> 2) & 3u) == 0u) {\n" + stores + "  }\n";
}

// wgmma: A and C in registers, each warp's 16 rows as mma.m16n8kK's fragments; B staged in shared
// memory, where wgmma reads it through a matrix descriptor.
//
// B's layout there (PTX ISA, wgmma "Shared Memory Matrix Layout" and "Matrix Descriptor Format"):
// K-major (imm-trans-b 0, the only layout tf32 and fp8 have), no swizzling, so that no address
// depends on a swizzle pattern. Its unit is the core matrix: 8 columns of B (n), each 16 contiguous
// bytes of K (8 binary16, 4 tf32, 16 fp8 elements), 128 contiguous bytes in all. Core matrix
// (n / 8, k / T) (T elements in 16 bytes) is stored at byte 128 * ((n / 8) * (K / T) + k / T): those
// adjacent in K are 128 bytes apart (the leading-dimension byte offset, LBO), those adjacent in N
// 128 * K / T bytes apart (the stride-dimension byte offset, SBO). The descriptor holds the start
// address, LBO and SBO, each >> 4, in bits 0-13, 16-29 and 32-45; swizzle mode 0 (bits 62-63) and
// base offset 0. The writes reach wgmma's async proxy through fence.proxy.async, then a barrier of
// the warpgroup's 128 threads; wgmma.fence, commit_group and wait_group 0 enclose the instruction in
// one asm statement, so that nothing touches its registers while it runs.
std::string wgmma_body(const MmaKernel& kernel) {
  const MmaConfig& cfg = kernel.config;
  constexpr int threads = 128;
  const int bytes = cfg.b->storage_bits / 8, per_row = 16 / bytes, along_k = cfg.k / per_row;
  const int elements = cfg.k * cfg.n;
  const auto log2 = [](int v) { return std::countr_zero(unsigned(v)); };
  const char* b_type = storage_type(*cfg.b);
  std::string s = "  const unsigned int g = 16u * warp + (lane >> 2), t = lane & 3u;\n";
  s += fmt::format("  __shared__ __align__(128) {} gp_b[{}u];\n", b_type, elements * int(kMmaWarpsPerBlock / 4));
  s += fmt::format("  {}* s = gp_b + (threadIdx.x >> 7) * {}u;\n", b_type, elements);
  // Thread x copies elements x, x + 128, ... of B (row-major); in a tile of fewer than 128 elements
  // several threads copy the same element to the same place.
  for (int i = 0; i < std::max(1, elements / threads); ++i) {
    const std::string e = fmt::format("((x + {}u) & {}u)", threads * i, elements - 1);
    const std::string n = fmt::format("({} & {}u)", e, cfg.n - 1), k = fmt::format("({} >> {}u)", e, log2(cfg.n));
    s += fmt::format("  s[(({} >> 3u) * {}u + ({} >> {}u)) * {}u + ({} & 7u) * {}u + ({} & {}u)] = b[{}];\n", n,
                     along_k, k, log2(per_row), 128 / bytes, n, per_row, k, per_row - 1, e);
  }
  s += "  asm volatile(\"fence.proxy.async.shared::cta;\" : : : \"memory\");\n";
  s += "  asm volatile(\"bar.sync %0, 128;\" : : \"r\"(1u + (threadIdx.x >> 7)) : \"memory\");\n";
  s += fmt::format(
      "  const unsigned long long desc = (unsigned long long)(((unsigned int)__cvta_generic_to_shared(s) & 0x3FFFFu) "
      ">> 4) | {}ull << 16 | {}ull << 32;\n",
      128 >> 4, 128 * along_k >> 4);
  const Fragment a = fragment(Family::wgmma, Operand::a, *cfg.a, 'a', cfg.m * cfg.k / threads, cfg.k, true);
  const Fragment c = fragment(Family::wgmma, Operand::cd, *cfg.c, 'c', cfg.m * cfg.n / threads, cfg.n, true);
  s += a.code + c.code;
  // D = A * B + C in registers holding C (scale-d true).
  const Registers r = registers(*cfg.d);
  std::vector<std::string> tied;
  for (std::size_t i = 0; i < c.operands.size(); ++i) {
    s += fmt::format("  {} d{} = c{};\n", r.type, i, i);
    tied.push_back(fmt::format("\"+{}\"(d{})", r.constraint, i));
  }
  const int nd = int(tied.size()), na = int(a.operands.size());
  std::vector<std::string> inputs = a.operands;
  inputs.insert(inputs.end(), {"\"l\"(desc)", "\"r\"(1u)"});
  // binary16 and bfloat16 take imm-trans-b (0: K-major); tf32 and fp8 have no transposition.
  const bool transposable = cfg.a->storage_bits == 16;
  s += asm_statement(fmt::format("{{ .reg .pred p; setp.ne.b32 p, %{}, 0; wgmma.fence.sync.aligned; {} {}, {}, %{}, p, "
                                 "1, 1{}; wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0; }}",
                                 nd + na + 1, kernel.ptx, operand_list(0, nd), operand_list(nd, na), nd + na,
                                 transposable ? ", 0" : ""),
                     tied, inputs, true);
  return s + store(Family::wgmma, *cfg.d, cfg.m * cfg.n / threads, cfg.n);
}

}  // namespace

std::string nvidia_architecture(int arch) {
  switch (arch) {
    case 70:
    case 72: return "volta";
    case 75: return "turing";
    case 80:
    case 86:
    case 87: return "ampere";
    case 89: return "ada";
    case 90: return "hopper";
    default: break;
  }
  if (arch / 10 == 10) return "blackwell";
  if (arch / 10 == 12) return "rtx-blackwell";
  return "";
}

std::vector<MmaKernel> mma_kernels(int arch) {
  const std::string name = nvidia_architecture(arch);
  std::vector<MmaKernel> v;
  for (const Shape& s : shapes()) {
    if (arch < s.min_arch || (s.max_arch && arch > s.max_arch)) continue;
    MmaKernel k;
    k.config = {s.m, s.n, s.k, s.a, s.b, s.c, s.d, scope(s.family), ""};
    if (const std::string id = name + ":" + s.sass; !name.empty() && model::find_mma_instruction(id))
      k.config.instruction = id;
    const std::string shape = fmt::format("m{}n{}k{}", s.m, s.n, s.k);
    k.ptx = s.family == Family::wmma
                ? fmt::format("wmma.mma.sync.aligned.row.row.{}.{}.{}", shape, ptx_type(*s.d), ptx_type(*s.c))
            : s.family == Family::wgmma ? fmt::format("wgmma.mma_async.sync.aligned.{}.{}.{}.{}", shape, ptx_type(*s.d),
                                                      ptx_type(*s.a), ptx_type(*s.b))
                                        : fmt::format("mma.sync.aligned.{}.row.col.{}.{}.{}.{}", shape, ptx_type(*s.d),
                                                      ptx_type(*s.a), ptx_type(*s.b), ptx_type(*s.c));
    k.min_arch = s.min_arch;
    k.arch_specific = s.family == Family::wgmma;
    k.warps = s.family == Family::wgmma ? 4 : 1;
    v.push_back(std::move(k));
  }
  // First the configuration whose fragment layout the PTX ISA documents and every architecture
  // from sm_80 runs as MMA-Sim's HMMA.16816.F32: its layout check (run before any probe) failing
  // blames the harness, before the instructions whose layout no one has verified (wgmma, fp8).
  std::stable_partition(v.begin(), v.end(), [](const MmaKernel& k) {
    return k.ptx == "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
  });
  return v;
}

std::string mma_kernel_source(const MmaKernel& k) {
  const MmaConfig& cfg = k.config;
  const Family family = cfg.scope == scope(Family::wmma)          ? Family::wmma
                        : cfg.scope == scope(Family::wgmma)       ? Family::wgmma
                        : cfg.m == 8 && cfg.a == &model::binary64 ? Family::m8n8_f64
                        : cfg.m == 8                              ? Family::m8n8_f16
                                                                  : Family::m16n8;
  const std::string size[] = {std::to_string(cfg.m * cfg.k), std::to_string(cfg.k * cfg.n),
                              std::to_string(cfg.m * cfg.n)};
  return fill_template(shaders::cuda_mma_cu,
                       {{"CONFIG", cfg.name()},
                        {"INSTRUCTION", k.ptx},
                        {"A_TYPE", storage_type(*cfg.a)},
                        {"B_TYPE", storage_type(*cfg.b)},
                        {"C_TYPE", storage_type(*cfg.c)},
                        {"D_TYPE", storage_type(*cfg.d)},
                        {"A_SIZE", size[0]},
                        {"B_SIZE", size[1]},
                        {"C_SIZE", size[2]},
                        {"D_SIZE", size[2]},
                        {"TILE_SHIFT", family == Family::wgmma ? "7" : "5"},  // a tile per warpgroup or per warp
                        // wmma's fragments are opaque: no lane computes its place in the tile.
                        {"LANE", family == Family::wmma    ? ""
                                 : family == Family::wgmma ? "  const unsigned int lane = threadIdx.x & 31u, warp = "
                                                             "(threadIdx.x >> 5) & 3u, x = threadIdx.x & 127u;\n"
                                                           : "  const unsigned int lane = threadIdx.x & 31u;\n"},
                        {"BODY", family == Family::wmma    ? wmma_body(cfg)
                                 : family == Family::wgmma ? wgmma_body(k)
                                                           : mma_sync_body(k, family)}});
}

}  // namespace gp::backends::cuda

// A whole matrix product D = C + A B on raw bits, as a GEMM kernel computes it with an MMA
// instruction: every output element is Dot chained over K, `kstep` products per evaluation, each
// evaluation's d the next one's c (c's format for the first evaluation, d's for the later ones).
// The FDA fast-path configurations (fda_fast::with_format) run a kernel that decodes A and B once
// and evaluates 16 output columns at a time; everything else evaluates Dot element by element.
// Either way the bits are Dot's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "model/mma_algorithms.hpp"

namespace gp::model {

// fn(T{}) with T the unsigned type of `bytes` bytes (1, 2, 4 or 8): loops over elements then read
// and write fixed widths, which compile to plain loads and stores.
template <class Fn>
decltype(auto) with_width(std::size_t bytes, const Fn& fn) {
  if (bytes == 1) return fn(std::uint8_t{});
  if (bytes == 2) return fn(std::uint16_t{});
  if (bytes == 4) return fn(std::uint32_t{});
  return fn(std::uint64_t{});
}

// A matrix of bit patterns where its owner keeps it: element (r, c) at element r * row_stride +
// c * col_stride of `data`, each `bytes` wide (1, 2, 4 or 8, the pattern in its low bits, in the
// machine's byte order). numpy's arrays (float16 values are binary16's bit patterns) and either
// layout of a matrix pass as they are, without a copy into 64-bit patterns. Byte is
// `const std::byte` for operands, `std::byte` for a result.
template <class Byte>
struct BitMatrixOf {
  Byte* data = nullptr;  // null: no matrix (c: +0 everywhere, scale factors: none)
  int bytes = 8;
  std::size_t row_stride = 0, col_stride = 1;

  bool empty() const { return data == nullptr; }
  // Element (r, c) read as T, the unsigned type of `bytes` bytes, for loops that choose the width
  // once; kContiguous where col_stride is 1 (numpy's arrays, the usual case), so that loops along a
  // row vectorize.
  template <class T, bool kContiguous = false>
  std::uint64_t at(std::size_t r, std::size_t c) const {
    T v;
    std::memcpy(&v, data + (r * row_stride + c * (kContiguous ? 1 : col_stride)) * sizeof v, sizeof v);
    return v;
  }
  std::uint64_t operator()(std::size_t r, std::size_t c) const {
    return with_width(std::size_t(bytes), [&]<class T>(T) { return at<T>(r, c); });
  }
  // n elements from (r, c) along the row (down the column with `down`) into out, or from in.
  template <class U>
  void get(std::size_t r, std::size_t c, std::size_t n, bool down, U* out) const {
    if (sizeof(U) == std::size_t(bytes) && (down ? row_stride : col_stride) == 1) {  // (one copy)
      std::memcpy(out, data + (r * row_stride + c * col_stride) * sizeof(U), n * sizeof(U));
      return;
    }
    with_width(std::size_t(bytes), [&]<class T>(T) {
      for (std::size_t x = 0; x < n; ++x) out[x] = U(at<T>(down ? r + x : r, down ? c : c + x));
    });
  }
  template <class U>
  void put(std::size_t r, std::size_t c, std::size_t n, const U* in) const requires(!std::is_const_v<Byte>) {
    if (sizeof(U) == std::size_t(bytes) && col_stride == 1) {  // (the common case: one copy)
      std::memcpy(data + (r * row_stride + c) * sizeof(U), in, n * sizeof(U));
      return;
    }
    with_width(std::size_t(bytes), [&]<class T>(T) {
      for (std::size_t x = 0; x < n; ++x) {
        const auto v = T(in[x]);
        std::memcpy(data + (r * row_stride + (c + x) * col_stride) * sizeof v, &v, sizeof v);
      }
    });
  }

  // A row-major (`rows` x `cols`) matrix of 64-bit patterns, and its transpose's view.
  static BitMatrixOf row_major(
      std::span<std::conditional_t<std::is_const_v<Byte>, const std::uint64_t, std::uint64_t>> v, std::size_t cols) {
    return {reinterpret_cast<Byte*>(v.data()), 8, cols, 1};
  }
  BitMatrixOf transposed() const { return {data, bytes, col_stride, row_stride}; }
};
using BitMatrix = BitMatrixOf<const std::byte>;
using OutBitMatrix = BitMatrixOf<std::byte>;

struct GemmOperands {
  std::size_t m = 0, n = 0, k = 0;
  int kstep = 0;  // products per evaluation; K must be a multiple of it (0: K)
  BitMatrix a;    // M x K, cfg.a
  BitMatrix b;    // K x N, cfg.b
  BitMatrix c;    // M x N, cfg.c; none: +0 (every format that has a zero encodes it as zero bits)
  // With cfg.scale: a's (M x S, S = scale_count(cfg, kstep) * K / kstep) and b's (S x N) scale
  // factors; both none: none, as Dot takes them (a device's batch carries none).
  BitMatrix sa;
  BitMatrix sb;
};

// The instruction sets the FDA kernel is compiled for in a portable x86-64 build with GCC (a build
// for its machine, or another compiler or processor: the build's own only), the best one the
// processor has being chosen at run time.
enum class GemmKernel { best, avx2, baseline };

// d (M x N, cfg.d, its elements wide enough for d's storage) = c + a b. cfg must pass check().
// Rows are split among at most `threads` worker threads (no more than M); a problem of fewer than
// 4096 products, or threads <= 1, runs on the calling thread. `kernel` caps the FDA kernel's
// instruction set (for the tests, which check every version the processor can run).
void gemm(const DotConfig& cfg, const GemmOperands& g, const OutBitMatrix& d, unsigned threads,
          GemmKernel kernel = GemmKernel::best);

}  // namespace gp::model

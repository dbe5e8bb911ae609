// numpy arrays to and from raw bits of the model's formats: unsigned integer arrays are bit
// patterns, float16/float32/float64 arrays values that a format must hold exactly (or rounded
// to nearest even on request). Every refusal is a Python exception naming the array and element.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/format.hpp"
#include "model/gemm.hpp"

namespace gp::python {

// A format by name; ValueError naming `key` and the known formats otherwise.
const model::Format& named_format(const std::string& name, const char* key);

// An array argument, C-contiguous. TypeError for what is neither unsigned integers nor
// float16/32/64 (signed integers, bool, complex, objects, a byte order not the machine's).
class Operand {
 public:
  Operand(const pybind11::object& obj, std::string name);
  const pybind11::array& array() const { return array_; }
  // 2-D operands: ValueError naming the shape for another rank.
  void require_matrix() const;
  pybind11::ssize_t rows() const { return array_.shape(0); }
  pybind11::ssize_t cols() const { return array_.shape(1); }
  std::string shape_text() const;  // "16 x 8"
  // Raw bits of every element in format f in C order. ValueError naming the first element that f
  // does not hold: a value not exact in f (unless round), a NaN or an infinity where f has none, a
  // bit pattern wider than f.
  std::vector<std::uint64_t> bits(const model::Format& f, bool round) const;
  // A matrix's bits in format f as bits() gives them, viewed where the array holds them already
  // (f's values in their own numpy type, or raw bits: checked, not copied), else held in `store`.
  model::BitMatrix matrix(const model::Format& f, bool round, std::vector<std::uint64_t>& store) const;

 private:
  std::string element(pybind11::ssize_t flat) const;  // "a[1, 5] = 0.1"
  void check_bits(const model::Format& f) const;      // raw bits: ValueError for one wider than f
  const model::Format& value_format() const;          // values: binary16, binary32 or binary64
  pybind11::array array_;
  std::string name_;
};

// Results in format f, shaped `shape`: float16/float32/float64 where numpy has f, else (or with
// raw) its bit patterns in the narrowest unsigned integer type that holds f's storage.
// An uninitialized array for results in format f, typed as array_of types them.
pybind11::array array_for(const std::vector<pybind11::ssize_t>& shape, const model::Format& f, bool raw);
pybind11::array array_of(const std::vector<std::uint64_t>& bits, const std::vector<pybind11::ssize_t>& shape,
                         const model::Format& f, bool raw);

}  // namespace gp::python

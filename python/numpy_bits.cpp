#include "python/numpy_bits.hpp"

#include <algorithm>
#include <cstring>

#include "model/ops.hpp"

namespace py = pybind11;

namespace gp::python {

using model::with_width;

const model::Format& named_format(const std::string& name, const char* key) {
  if (const auto f = model::find_format(name)) return **f;
  std::string known;
  for (const model::Format* f : model::all_formats()) known += (known.empty() ? "" : " ") + std::string(f->name);
  throw py::value_error(std::string(key) + ": unknown format '" + name + "' (known: " + known + ")");
}

Operand::Operand(const py::object& obj, std::string name) : name_(std::move(name)) {
  // No conversion of the elements: ascontiguousarray keeps the dtype (a str becomes a str array,
  // refused below with its dtype named).
  array_ = py::module_::import("numpy").attr("ascontiguousarray")(obj);
  const py::dtype dt = array_.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  const bool floating = kind == 'f' && (size == 2 || size == 4 || size == 8);
  const bool unsigned_int = kind == 'u' && (size == 1 || size == 2 || size == 4 || size == 8);
  if (!floating && !unsigned_int)
    throw py::type_error(name_ + ": dtype " + std::string(py::str(py::handle(dt))) +
                         " is neither values (float16, float32, float64) nor raw bits (an unsigned integer type)");
  if (dt.attr("byteorder").cast<std::string>() == ">")
    throw py::type_error(name_ + ": dtype " + std::string(py::str(py::handle(dt))) + " is big-endian");
}

void Operand::require_matrix() const {
  if (array_.ndim() == 2) return;
  std::string shape;
  for (py::ssize_t i = 0; i < array_.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(array_.shape(i));
  throw py::value_error(name_ + " must be 2-D, not of shape (" + shape + (array_.ndim() == 1 ? ",)" : ")"));
}

std::string Operand::shape_text() const { return std::to_string(rows()) + " x " + std::to_string(cols()); }

std::string Operand::element(py::ssize_t flat) const {
  std::vector<py::ssize_t> index(std::size_t(array_.ndim()));
  for (py::ssize_t d = array_.ndim() - 1; d >= 0; --d) {
    index[std::size_t(d)] = flat % array_.shape(d);
    flat /= array_.shape(d);
  }
  std::string text;
  for (py::ssize_t i : index) text += (text.empty() ? "" : ", ") + std::to_string(i);
  py::object value = array_;
  for (py::ssize_t i : index) value = value[py::int_(i)];
  return name_ + (index.empty() ? "" : "[" + text + "]") + " = " + std::string(py::repr(value));
}

void Operand::check_bits(const model::Format& f) const {
  // The bits a pattern may use: sign, exponent, fraction and padding.
  const int width = f.value_bits() + f.pad_bits;
  const std::uint64_t used = width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  const char* base = static_cast<const char*>(array_.data());
  const auto n = py::ssize_t(array_.size());
  with_width(std::size_t(array_.itemsize()), [&]<class T>(T) {
    const auto at = [&](py::ssize_t e) {
      T v;
      std::memcpy(&v, base + std::size_t(e) * sizeof v, sizeof v);
      return std::uint64_t(v);  // little-endian: the element's bytes are its low bytes
    };
    std::uint64_t any = 0;  // (a first pass without branches, the element named only on failure)
    for (py::ssize_t e = 0; e < n; ++e) any |= at(e) & ~used;
    for (py::ssize_t e = 0; any && e < n; ++e)
      if (at(e) & ~used)
        throw py::value_error(element(e) + " is not a bit pattern of " + std::string(f.name) + " (" +
                              std::to_string(width) + " bits)");
  });
}

// The numpy format of an array of values.
const model::Format& Operand::value_format() const {
  const auto size = array_.itemsize();
  return size == 2 ? model::binary16 : size == 4 ? model::binary32 : model::binary64;
}

std::vector<std::uint64_t> Operand::bits(const model::Format& f, bool round) const {
  const auto n = std::size_t(array_.size());
  const bool values = array_.dtype().kind() == 'f';
  if (!values) check_bits(f);
  const model::Format& from = value_format();
  const bool same = !values || &from == &f;
  const char* base = static_cast<const char*>(array_.data());
  std::vector<std::uint64_t> out(n);
  with_width(std::size_t(array_.itemsize()), [&]<class T>(T) {
    for (std::size_t e = 0; e < n; ++e) {
      T v;
      std::memcpy(&v, base + e * sizeof v, sizeof v);
      std::uint64_t x = v;
      if (!same) {
        const model::Result r = model::cvt(f, from, model::Options{}, x);
        if (r.flags & model::Flag::invalid)
          throw py::value_error(element(py::ssize_t(e)) + " has no encoding in " + std::string(f.name));
        if (!round && (r.flags & (model::Flag::inexact | model::Flag::overflow)))
          throw py::value_error(element(py::ssize_t(e)) + " is not exact in " + std::string(f.name) +
                                " (round_inputs='rne' rounds it to nearest even)");
        x = r.bits;
      }
      out[e] = x;
    }
  });
  return out;
}

model::BitMatrix Operand::matrix(const model::Format& f, bool round, std::vector<std::uint64_t>& store) const {
  const bool values = array_.dtype().kind() == 'f';
  if (values && &value_format() != &f) {
    store = bits(f, round);
    return model::BitMatrix::row_major(store, std::size_t(cols()));
  }
  if (!values) check_bits(f);
  return {static_cast<const std::byte*>(array_.data()), int(array_.itemsize()), std::size_t(cols()), 1};
}

py::array array_for(const std::vector<py::ssize_t>& shape, const model::Format& f, bool raw) {
  const int bytes = f.storage_bytes();
  std::string type = "uint" + std::to_string(8 * bytes);
  if (!raw && &f == &model::binary16) type = "float16";
  if (!raw && &f == &model::binary32) type = "float32";
  if (!raw && &f == &model::binary64) type = "float64";
  return py::array(py::dtype(type), shape);
}

py::array array_of(const std::vector<std::uint64_t>& bits, const std::vector<py::ssize_t>& shape,
                   const model::Format& f, bool raw) {
  py::array out = array_for(shape, f, raw);
  char* p = static_cast<char*>(out.mutable_data());
  with_width(std::size_t(out.itemsize()), [&]<class T>(T) {
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const auto v = T(bits[i]);  // (little-endian: the low bytes)
      std::memcpy(p + i * sizeof v, &v, sizeof v);
    }
  });
  return out;
}

}  // namespace gp::python

#include "model/mma_config_name.hpp"

#include <charconv>

#include "model/mma_algorithms.hpp"

namespace gp::model {

std::size_t read_mma_shape(std::string_view text, MmaShape& shape) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* p = begin;
  int* const dims[3] = {&shape.m, &shape.n, &shape.k};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (p == end || *p != 'x') return 0;
      ++p;
    }
    if (p == end || *p < '0' || *p > '9') return 0;
    const auto [next, ec] = std::from_chars(p, end, *dims[i]);
    if (ec != std::errc() || *dims[i] < 1) return 0;
    p = next;
  }
  return std::size_t(p - begin);
}

MmaConfigName parse_mma_config_name(std::string_view text) {
  MmaConfigName out;
  const std::size_t colon = text.find(':');
  const std::string_view shape = text.substr(0, colon);
  if (read_mma_shape(shape, out.shape) != shape.size() || shape.empty()) {
    out.fault = MmaNameFault::shape;
    return out;
  }
  const MmaShape& s = out.shape;
  if (s.m > kMaxMmaTile || s.n > kMaxMmaTile || s.k > kMaxDotK) {
    out.fault = MmaNameFault::size;
    return out;
  }
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t comma = rest.find(',');
    if ((i < 3) == (comma == std::string_view::npos)) {
      out.fault = MmaNameFault::format_count;
      return out;
    }
    out.names[i] = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  for (std::size_t i = 0; i < 4; ++i) {
    const auto f = find_format(out.names[i]);
    if (!f) {
      out.fault = MmaNameFault::unknown_format;
      out.bad = int(i);
      out.formats = {};
      return out;
    }
    out.formats[i] = *f;
  }
  return out;
}

}  // namespace gp::model

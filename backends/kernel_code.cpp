#include "backends/kernel_code.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <system_error>

#include "backends/file_write.hpp"

namespace gp::backends {

namespace {

// FNV-1a: the same names on every platform and compiler, unlike std::hash.
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

}  // namespace

std::string file_stem(std::string_view label) {
  constexpr std::size_t kept = 160;  // with the hash and a suffix, within 255 bytes
  std::string name;
  bool lossy = label.find('_') != std::string_view::npos;
  for (const char ch : label) {
    const bool allowed = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '+' || ch == '-';
    lossy = lossy || (!allowed && ch != ':');
    name += allowed ? ch : '_';
  }
  if (!lossy && name.size() <= kept) return name;
  name.resize(std::min(name.size(), kept));
  return name + fmt::format("-{:016x}", fnv1a(label));
}

KernelCode::KernelCode(const std::filesystem::path& root, std::string_view device_id) {
  if (!root.empty()) folder_ = root / file_stem(device_id);
}

bool KernelCode::keep(std::string_view label, std::string_view suffix, std::string_view bytes) const {
  if (!on()) return true;
  std::error_code ec;
  std::filesystem::create_directories(folder_, ec);
  const std::filesystem::path path = folder_ / (file_stem(label) + std::string(suffix));
  const auto written =
      ec ? Expected<bool>(Error{fmt::format("cannot make {}: {}", folder_.string(), ec.message()), ErrorKind::io})
         : write_atomically(path, bytes);
  if (written) return true;
  fmt::print(stderr, "gpuparanoia: warning: the compiled code of '{}' is not kept: {}\n", label,
             written.error().message);
  return false;
}

}  // namespace gp::backends

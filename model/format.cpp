#include "model/format.hpp"

#include <array>

namespace gp::model {

namespace {
constexpr std::array<const Format*, 15> formats = {&binary64, &binary32, &tf32, &binary16, &bfloat16,
                                                   &fp24,     &e4m3,     &e5m2, &e4m3fnuz, &e5m2fnuz,
                                                   &e2m3,     &e3m2,     &e2m1, &ue8m0,    &ue4m3};
}

std::span<const Format* const> all_formats() { return formats; }

std::optional<const Format*> find_format(std::string_view name) {
  for (const Format* f : formats)
    if (f->name == name) return f;
  return std::nullopt;
}

}  // namespace gp::model

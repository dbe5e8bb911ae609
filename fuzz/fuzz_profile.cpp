// A profile file as `--profile-file` reads it; the units it accepts then compute every operation
// of the scalar model on operands taken from the input (a unit the check lets through must not
// crash the model: guard bits and truncated columns at their limits), and the MMA models it accepts
// one dot product.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "backends/reference/profile.hpp"
#include "fuzz/fuzz_check.hpp"
#include "model/mma_algorithms.hpp"
#include "model/ops.hpp"
#include "model/scalar_unit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gp;
  const auto doc = fuzz::json_or_one_line(data, size);
  if (!doc) return 0;
  const auto profiles = backends::parse_profiles(*doc, "fuzz.json");
  if (!profiles) {
    fuzz::require_one_line(profiles.error().message, "fuzz.json");
    return 0;
  }
  // Operands: the input's last bytes, and values every format has bits for.
  std::uint64_t tail = 0;
  std::memcpy(&tail, data + size - std::min<std::size_t>(size, 8), std::min<std::size_t>(size, 8));
  const std::uint64_t operands[] = {tail, ~tail, tail >> 3, 0, 1, ~std::uint64_t{0}};
  for (const backends::Profile& p : *profiles)
    for (const model::ScalarUnit& u : p.units) {
      const std::uint64_t mask = u.format->storage_mask();
      for (model::Op op : model::all_ops)
        for (std::size_t i = 0; i + 3 <= std::size(operands); ++i) {
          const std::uint64_t x[] = {operands[i] & mask, operands[i + 1] & mask, operands[i + 2] & mask};
          (void)model::unit_evaluate(u, op, std::span(x, std::size_t(model::arity(op))), *u.format);
        }
    }
  for (const backends::Profile& p : *profiles)
    for (const backends::MmaConfig& m : p.mma) {
      const model::DotConfig& cfg = p.models.at(backends::mma_model_key(m));
      const std::vector<std::uint64_t> a(std::size_t(m.k), tail & cfg.a->storage_mask()),
          b(a.size(), (tail >> 8) & cfg.b->storage_mask());
      (void)model::Dot(cfg)(~tail & cfg.c->storage_mask(), a, b);
    }
  return 0;
}

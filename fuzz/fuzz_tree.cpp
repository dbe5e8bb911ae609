// The --tree parser on arbitrary text. A tree it accepts prints as text that parses to the same
// tree, and evaluates (when its formats can) on operands taken from the input.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.hpp"
#include "model/mma_algorithms.hpp"
#include "model/summation_tree.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gp;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const model::TreeParse parsed = model::parse_summation_tree(text);
  if (!parsed.tree) {
    fuzz::require(!parsed.error.empty(), "an error says why");
    fuzz::require_one_line(parsed.error, "");
    return 0;
  }
  const model::SummationTree& t = *parsed.tree;
  const std::string canonical = t.text();
  const model::TreeParse again = model::parse_summation_tree(canonical, t.k);
  fuzz::require(again.tree && again.tree->text() == canonical, "the canonical text parses to the same tree", canonical);
  model::DotConfig cfg = model::default_dot_config(model::MmaAlgorithm::tree, model::binary16, model::binary16,
                                                   model::binary32, model::binary32, t.k);
  cfg.tree = std::make_shared<const model::SummationTree>(t);
  if (!model::check(cfg).empty()) return 0;
  std::vector<std::uint64_t> a(std::size_t(t.k)), b(std::size_t(t.k));
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = data[i % size] * 0x101u;
    b[i] = data[(i * 7 + 3) % size] * 0x3fu;
  }
  const model::Dot dot(cfg);
  (void)dot(0x3f800000, a, b, {}, {});
  return 0;
}

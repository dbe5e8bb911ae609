// A result document as `compare` and `table` read it: parsed within the limits, checked, then
// compared and rendered. The reports must also take documents that fail the check (they read any
// shape), so they run on every parsed document.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "audit/report/compare.hpp"
#include "audit/report/report.hpp"
#include "audit/report/result_check.hpp"
#include "fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gp;
  const auto doc = fuzz::json_or_one_line(data, size);
  if (!doc) return 0;
  if (const auto bad = audit::check_result(*doc)) fuzz::require_one_line(bad->text(), "");
  (void)audit::text_report(*doc);
  (void)audit::markdown_report(*doc);
  (void)audit::headline_lines(*doc);
  (void)audit::results_table({*doc, nlohmann::json::object()});
  const audit::Comparison c = audit::compare_results(*doc, nlohmann::json::object());
  (void)audit::comparison_text(c);
  (void)audit::comparison_markdown(c);
  return 0;
}

#include "backends/kernel_template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gp::backends {

std::string fill_template(std::string_view text, std::initializer_list<TemplateValue> values) {
  std::string out;
  std::size_t pos = 0;
  // Every '@' opens or closes a placeholder: the templates have no other.
  for (std::size_t open; (open = text.find('@', pos)) != std::string_view::npos;) {
    const std::size_t close = text.find('@', open + 1);
    if (close == std::string_view::npos) throw std::logic_error("kernel template: an '@' without its closing '@'");
    const std::string_view name = text.substr(open + 1, close - open - 1);
    const auto v = std::find_if(values.begin(), values.end(), [&](const TemplateValue& t) { return t.name == name; });
    if (v == values.end()) throw std::logic_error(fmt::format("kernel template: no value for @{}@", name));
    const bool whole_line = (open == 0 || text[open - 1] == '\n') && close + 1 < text.size() && text[close + 1] == '\n';
    if (whole_line && !v->value.empty() && v->value.back() != '\n')
      throw std::logic_error(fmt::format("kernel template: the lines of @{}@ do not end in a newline", name));
    out.append(text.substr(pos, open - pos));
    out.append(v->value);
    pos = close + (whole_line ? 2 : 1);
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace gp::backends

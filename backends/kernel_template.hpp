// Filling the kernel templates of shaders/ (embedded at build time as gp::shaders::*, see
// shaders/README.md): the fixed text of a kernel lives there, what depends on the expression or the
// MMA configuration is written here, in C++.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace gp::backends {

struct TemplateValue {
  std::string_view name;  // "BODY" fills @BODY@
  std::string_view value;
};

// The template with every @NAME@ replaced by its value. A placeholder alone on its line stands for
// whole lines: that line is replaced by the value, empty or ending in a newline, so that an empty
// value leaves no blank line. Values that the template does not use are ignored. A placeholder
// without a value, or a whole-line value without its final newline, is a bug of this program
// (the template and its filler disagree): std::logic_error.
std::string fill_template(std::string_view text, std::initializer_list<TemplateValue> values);

}  // namespace gp::backends

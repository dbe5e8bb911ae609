// Graphviz's `dot` drawing a DOT file as SVG, for the reports (summation trees, --out DIR) and the
// results site (python/gpuparanoia/site.py, through the module): run without a shell, its output
// discarded, stopped when it takes too long; whatever happens, the caller gets a note, never an
// exception, and goes on.
#pragma once

#include <filesystem>
#include <string>

namespace gp::audit {

// The note a report shows where `dot` is not on the PATH.
inline constexpr const char* kGraphvizMissing =
    "Graphviz is not installed (no `dot` on the PATH; Debian: graphviz): the trees are given as DOT files";

// `dot -Tsvg -o svg dot_file`: an empty string when svg was written, else why not (kGraphvizMissing,
// the exit status, the signal, the time limit).
std::string draw_svg(const std::filesystem::path& dot_file, const std::filesystem::path& svg, int seconds = 60);

}  // namespace gp::audit

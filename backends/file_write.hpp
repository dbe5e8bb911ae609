// Writing files so that a reader never sees half of one: the result documents and reports
// (audit/result.hpp) and the kernels' compiled code (kernel_code.hpp) go through these. Here, below
// both, because the backends write files too.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "backends/expected.hpp"

namespace gp::backends {

// Writes text to path so that readers never see half a file and a failure loses nothing: a
// temporary file unique to the call in the same folder, every write checked, fsync, then rename
// over path. On failure the temporary is removed, the previous file is untouched, and the Error
// names the path. A path that exists and is not a regular file (/dev/stdout, a pipe, /dev/full)
// cannot be replaced: it is written in place, and every write and the close are checked.
Expected<bool> write_atomically(const std::filesystem::path& path, std::string_view text);

// write(2) until all of text is written (it may write less than asked, or be interrupted by a
// signal); false on an error.
[[nodiscard]] bool write_all_of(int fd, std::string_view text);

// Creates path exclusively (O_EXCL): false when it exists already, an Error when it cannot be
// created. Concurrent runs into one folder claim their file names this way.
Expected<bool> claim_file(const std::filesystem::path& path);

// Whether path exists and is not a regular file (/dev/stdout, a pipe): written in place, never replaced.
bool is_special_file(const std::filesystem::path& path);

// "cannot <what> <path>: <strerror(errno)>".
Error file_error(const std::filesystem::path& path, std::string_view what);

}  // namespace gp::backends

#include "backends/file_write.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gp::backends {

namespace {

Expected<bool> write_in_place(const std::filesystem::path& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return file_error(path, "open");
  const bool ok = write_all_of(fd, text);
  const int saved = errno;
  if (::close(fd) != 0 || !ok) {
    if (!ok) errno = saved;
    return file_error(path, "write");
  }
  return true;
}

// The mode a new file gets from open(2): 0666 less the umask (mkstemp creates 0600).
mode_t new_file_mode() {
  static const mode_t mask = [] {
    const mode_t m = ::umask(0);
    ::umask(m);
    return m;
  }();
  return 0666 & ~mask;
}

}  // namespace

Error file_error(const std::filesystem::path& path, std::string_view what) {
  return Error{fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(errno)), ErrorKind::io};
}

bool is_special_file(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

bool write_all_of(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(std::size_t(n));
  }
  return true;
}

Expected<bool> write_atomically(const std::filesystem::path& path, std::string_view text) {
  if (is_special_file(path)) return write_in_place(path, text);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::string tmp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return file_error(path, "write");
  // A file replaced keeps its mode; a new one gets the mode open(2) would give it.
  struct stat st {};
  const mode_t mode = ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : new_file_mode();
  const bool ok = ::fchmod(fd, mode) == 0 && write_all_of(fd, text) && ::fsync(fd) == 0;
  const int saved = errno;
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (!ok) errno = saved;
    const Error e = file_error(path, "write");
    ::unlink(tmp.c_str());
    return e;
  }
  return true;
}

Expected<bool> claim_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  if (errno == EEXIST) return false;
  return file_error(path, "create");
}

}  // namespace gp::backends

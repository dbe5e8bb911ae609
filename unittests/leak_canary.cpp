// A leak of gpuparanoia's own, on purpose, for the sanitizer build: run with the driver suppressions
// of unittests/driver_leaks.supp, LeakSanitizer must still report it (ctest checks its report), so
// that those suppressions hide only what the drivers leak.
#include <cstring>

// Escapes into a global and is then forgotten, so the compiler cannot drop the allocation.
char* volatile g_forgotten = nullptr;

__attribute__((noinline)) void leak_on_purpose() {
  g_forgotten = new char[4096];
  std::memset(g_forgotten, 1, 4096);
  g_forgotten = nullptr;
}

int main() {
  leak_on_purpose();
  return 0;
}

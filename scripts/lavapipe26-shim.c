/* What Debian 12's libraries lack for trixie's lavapipe 26 (scripts/lavapipe26-fixture links it in;
 * scripts/vulkan-validation-fixture links it into the validation layer's shim for the C23 functions).
 *
 * glibc 2.38's C23 variants of strtol and sscanf, which lavapipe is built to call: they accept a
 * 0b/0B binary prefix where the base is 0 or 2, and are otherwise the classic functions. sscanf
 * forwards to vsscanf and so does not read a 0b prefix under %i; it aborts on C23's %b conversion,
 * which glibc 2.36 does not know, rather than return a silently wrong count.
 *
 * Window-system functions of newer libwayland and libxcb, which compute never calls: they abort,
 * naming themselves, if ever called.
 *
 * patchelf makes this library the driver's first DT_NEEDED: it must define nothing else, lest it
 * shadow the system's own definitions. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where s holds a C23 binary subject for this base ([space][sign]0b followed by a binary digit), the
 * magnitude of its digits (ULLONG_MAX with ERANGE beyond), *end after them and *negative set;
 * otherwise returns 0 with *digits null, and the classic function applies. */
static unsigned long long binary_subject(const char* s, char** end, int base, int* negative, const char** digits) {
  *digits = NULL;
  if (base != 0 && base != 2) return 0;
  while (isspace((unsigned char)*s)) ++s;
  *negative = *s == '-';
  if (*s == '-' || *s == '+') ++s;
  if (s[0] != '0' || (s[1] != 'b' && s[1] != 'B') || (s[2] != '0' && s[2] != '1')) return 0;
  *digits = s + 2;
  char* stop;
  unsigned long long magnitude = strtoull(*digits, &stop, 2);
  if (end) *end = stop;
  return magnitude;
}

static long long to_signed(unsigned long long magnitude, int negative, long long max) {
  if (magnitude > (unsigned long long)max + (unsigned long long)negative) {
    errno = ERANGE;
    return negative ? -max - 1 : max;
  }
  if (!negative || magnitude == 0) return (long long)magnitude;
  return -(long long)(magnitude - 1) - 1;
}

static unsigned long long to_unsigned(unsigned long long magnitude, int negative, unsigned long long max) {
  if (magnitude > max) {
    errno = ERANGE;
    return max;
  }
  return negative ? (0 - magnitude) & max : magnitude;
}

long __isoc23_strtol(const char* s, char** end, int base);
long __isoc23_strtol(const char* s, char** end, int base) {
  int negative;
  const char* digits;
  unsigned long long m = binary_subject(s, end, base, &negative, &digits);
  return digits ? (long)to_signed(m, negative, LONG_MAX) : strtol(s, end, base);
}

long long __isoc23_strtoll(const char* s, char** end, int base);
long long __isoc23_strtoll(const char* s, char** end, int base) {
  int negative;
  const char* digits;
  unsigned long long m = binary_subject(s, end, base, &negative, &digits);
  return digits ? to_signed(m, negative, LLONG_MAX) : strtoll(s, end, base);
}

unsigned long __isoc23_strtoul(const char* s, char** end, int base);
unsigned long __isoc23_strtoul(const char* s, char** end, int base) {
  int negative;
  const char* digits;
  unsigned long long m = binary_subject(s, end, base, &negative, &digits);
  return digits ? (unsigned long)to_unsigned(m, negative, ULONG_MAX) : strtoul(s, end, base);
}

unsigned long long __isoc23_strtoull(const char* s, char** end, int base);
unsigned long long __isoc23_strtoull(const char* s, char** end, int base) {
  int negative;
  const char* digits;
  unsigned long long m = binary_subject(s, end, base, &negative, &digits);
  return digits ? to_unsigned(m, negative, ULLONG_MAX) : strtoull(s, end, base);
}

static _Noreturn void unsupported(const char* what) {
  fprintf(stderr, "lavapipe26-shim: %s is not provided on this system (see scripts/lavapipe26-shim.c)\n", what);
  abort();
}

/* Aborts on a %b conversion; every other conversion means the same in C23 and glibc 2.36. */
static void check_scanf_format(const char* f) {
  while ((f = strchr(f, '%'))) {
    ++f;
    if (*f == '%') {
      ++f;
      continue;
    }
    f += strspn(f, "*$0123456789m'hljztLq");
    if (*f == 'b') unsupported("sscanf's C23 %b conversion");
    if (*f == '[') { /* a scanset: what it lists are characters, not conversions */
      f += 1 + (f[1] == '^');
      f = strchr(f + (*f == ']'), ']');
      if (!f) return;
    }
  }
}

int __isoc23_sscanf(const char* s, const char* format, ...);
int __isoc23_sscanf(const char* s, const char* format, ...) {
  check_scanf_format(format);
  va_list args;
  va_start(args, format);
  int n = vsscanf(s, format, args);
  va_end(args);
  return n;
}

#define NEVER_CALLED(name) \
  void name(void);         \
  void name(void) { unsupported(#name); }
NEVER_CALLED(wl_display_create_queue_with_name)
NEVER_CALLED(xcb_dri3_free_syncobj)
NEVER_CALLED(xcb_dri3_import_syncobj_checked)
NEVER_CALLED(xcb_present_pixmap_synced)

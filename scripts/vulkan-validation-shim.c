/* What Debian 12's libstdc++ (GCC 12) lacks for trixie's Vulkan validation layers, built with GCC 14
 * (scripts/vulkan-validation-fixture links it in, with the C23 functions of lavapipe26-shim.c).
 *
 * std::ios_base_library_init (GLIBCXX_3.4.32): GCC 13's headers call it to make sure the standard
 * streams are initialized; GCC 12's library initializes them when it loads, so there is nothing to do.
 * __cxa_call_terminate (CXXABI_1.3.15): what GCC 14 calls when an exception leaves a noexcept
 * function, std::terminate after catching it, as GCC 12 does inline. */
#include <stddef.h>

void _ZSt21ios_base_library_initv(void);
void _ZSt21ios_base_library_initv(void) {}

void* __cxa_begin_catch(void* exception);
_Noreturn void _ZSt9terminatev(void); /* std::terminate() */
_Noreturn void __cxa_call_terminate(void* exception);
_Noreturn void __cxa_call_terminate(void* exception) {
  if (exception != NULL) __cxa_begin_catch(exception);
  _ZSt9terminatev();
}

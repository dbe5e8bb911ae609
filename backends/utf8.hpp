// Text from drivers (device and driver names, build logs) as valid UTF-8, so that a driver's bytes
// can never make a JSON document fail to serialise: the backends pass every such string through
// valid_utf8() where they take it.
#pragma once

#include <string>
#include <string_view>

namespace gp::backends {

// `s` where it is valid UTF-8; each byte of an invalid sequence (a stray continuation byte, a
// truncated or overlong sequence, a surrogate, a code point past U+10FFFF) written as "\xNN".
std::string valid_utf8(std::string_view s);

}  // namespace gp::backends

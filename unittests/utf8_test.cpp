// valid_utf8(): driver text (names, build logs) made valid UTF-8, so that a JSON result can always
// be written; what is valid passes unchanged, each invalid byte becomes "\xNN".
#include <gtest/gtest.h>

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/utf8.hpp"

namespace gp::backends {
namespace {

TEST(ValidUtf8, ValidTextIsUnchanged) {
  // ASCII, 2-, 3- and 4-byte sequences, the last code point before the surrogates and the last of
  // all, and a NUL (drivers pad names with them).
  const std::initializer_list<std::string> valid = {"",
                                                    "llvmpipe (LLVM 15.0.6, 256 bits)",
                                                    "caf\xc3\xa9",
                                                    "\xe2\x82\xac 1",
                                                    "\xf0\x9f\x98\x80",
                                                    "\xed\x9f\xbf",
                                                    "\xf4\x8f\xbf\xbf",
                                                    std::string("a\0b", 3)};
  for (const std::string& s : valid) EXPECT_EQ(valid_utf8(s), s);
}

TEST(ValidUtf8, InvalidBytesAreEscaped) {
  EXPECT_EQ(valid_utf8("\xff"), "\\xff");
  EXPECT_EQ(valid_utf8("log: \x80 end"), "log: \\x80 end");           // a stray continuation byte
  EXPECT_EQ(valid_utf8("\xc3"), "\\xc3");                             // truncated at the end
  EXPECT_EQ(valid_utf8("\xc3("), "\\xc3(");                           // truncated by another byte
  EXPECT_EQ(valid_utf8("\xe2\x82"), "\\xe2\\x82");                    // truncated 3-byte sequence
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(valid_utf8("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong 3 bytes
  EXPECT_EQ(valid_utf8("\xf0\x80\x80\xaf"), "\\xf0\\x80\\x80\\xaf");  // overlong 4 bytes
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(valid_utf8("\xf8\x88\x80\x80\x80"), "\\xf8\\x88\\x80\\x80\\x80");
  EXPECT_EQ(valid_utf8("\xe9t\xc3\xa9"), "\\xe9t\xc3\xa9");  // Latin-1 beside UTF-8: only the bad byte
}

// Every byte string, made valid, serialises as JSON (nlohmann::json throws on invalid UTF-8).
TEST(ValidUtf8, AnyBytesSerialiseAsJson) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += char(b);
  for (int b = 255; b >= 0; --b) all += char(b);
  const std::string valid = valid_utf8(all);
  nlohmann::json doc = {{"log", valid}};
  EXPECT_NO_THROW((void)doc.dump());
  EXPECT_EQ(valid_utf8(valid), valid);  // idempotent
  EXPECT_THROW((void)nlohmann::json({{"log", all}}).dump(), nlohmann::json::type_error);
}

}  // namespace
}  // namespace gp::backends

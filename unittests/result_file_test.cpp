// Writing results: atomic replacement, every failure named and the previous file untouched (in
// ways that fail as root too), the run's document rewritten seldom, and text that is not UTF-8.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "audit/result.hpp"
#include "unittests/reference_devices.hpp"

namespace gp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Nothing in the folder but the files named: no temporary left behind.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WriteAtomically, ReplacesTheFileAndLeavesNoTemporary) {
  const fs::path dir = fresh_folder("write-replace"), file = dir / "r.json";
  ASSERT_TRUE(audit::write_atomically(file, "one\n").ok());
  ASSERT_TRUE(audit::write_atomically(file, "two\n").ok());
  EXPECT_EQ(read(file), "two\n");
  EXPECT_EQ(listing(dir), std::vector<std::string>{"r.json"});
}

TEST(WriteAtomically, AFolderThatIsAFileIsAnErrorNamingThePath) {
  const fs::path dir = fresh_folder("write-notdir");
  ASSERT_TRUE(audit::write_atomically(dir / "file", "x").ok());
  const auto r = audit::write_atomically(dir / "file" / "r.json", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find((dir / "file" / "r.json").string()), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("Not a directory"), std::string::npos) << r.error().message;
}

TEST(WriteAtomically, AFullDeviceIsAnError) {
  const auto r = audit::write_atomically("/dev/full", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/dev/full"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("No space left"), std::string::npos) << r.error().message;
}

// A write that fails half way (the file size limit, which binds root too, stands for a full disk):
// the previous file is whole, the temporary is gone.
TEST(WriteAtomically, AFailedWriteLeavesThePreviousFileUntouched) {
  const fs::path dir = fresh_folder("write-fsize"), file = dir / "r.json";
  ASSERT_TRUE(audit::write_atomically(file, "previous\n").ok());
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 4096;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write(2) fails with EFBIG instead
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto r = audit::write_atomically(file, std::string(100000, 'x'));
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(file.string()), std::string::npos) << r.error().message;
  EXPECT_EQ(read(file), "previous\n");
  EXPECT_EQ(listing(dir), std::vector<std::string>{"r.json"});
}

TEST(ClaimFile, OnlyOneClaimOfANameSucceeds) {
  const fs::path dir = fresh_folder("claim");
  const auto first = audit::claim_file(dir / "a.json");
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  const auto again = audit::claim_file(dir / "a.json");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_FALSE(audit::claim_file(dir / "a.json" / "c.json").ok());
}

audit::Finding finding(std::string message) {
  audit::Finding f;
  f.probe = "scalar.add.rounding";
  f.format = "binary32";
  f.message = std::move(message);
  return f;
}

// Every finding would rewrite megabytes thousands of times: the document is written when a run
// starts, then at most every few seconds, and at the end with "complete": true.
TEST(ResultDocument, RewrittenAtTheStartAndTheEndNotAfterEveryFinding) {
  const fs::path dir = fresh_folder("document-rewrites"), file = dir / "r.json";
  audit::ResultDocument doc(testing::reference_device("ieee-binary32"), "test", json::object());
  ASSERT_TRUE(doc.write_to(file).ok());
  json written = json::parse(read(file));
  EXPECT_EQ(written["complete"], false);
  for (int i = 0; i < 100; ++i) doc.add(finding("fast"));
  EXPECT_EQ(json::parse(read(file))["findings"].size(), 0u);  // well within kRewriteInterval
  doc.finish();
  written = json::parse(read(file));
  EXPECT_EQ(written["complete"], true);
  EXPECT_EQ(written["findings"].size(), 100u);
  EXPECT_FALSE(written.contains("interrupted"));
  EXPECT_FALSE(doc.write_error());
}

TEST(ResultDocument, AnInterruptedRunSaysSoAndKeepsItsFindings) {
  const fs::path dir = fresh_folder("document-interrupted");
  audit::ResultDocument doc(testing::reference_device("ieee-binary32"), "test", json::object());
  ASSERT_TRUE(doc.write_to(dir / "a.json").ok());
  ASSERT_TRUE(doc.write_to(dir / "b.json").ok());  // --json and --out both
  doc.add(finding("one"));
  doc.interrupt("SIGTERM");
  for (const char* name : {"a.json", "b.json"}) {
    const json written = json::parse(read(dir / name));
    EXPECT_EQ(written["complete"], false) << name;
    EXPECT_EQ(written["interrupted"], "SIGTERM") << name;
    EXPECT_EQ(written["findings"].size(), 1u) << name;
  }
}

TEST(ResultDocument, AFailedWriteIsRemembered) {
  audit::ResultDocument doc(testing::reference_device("ieee-binary32"), "test", json::object());
  ASSERT_TRUE(doc.write_to("/dev/full").ok());  // not a regular file: written in place, at the end
  doc.add(finding("one"));
  EXPECT_FALSE(doc.write_error());
  doc.finish();
  ASSERT_TRUE(doc.write_error());
  EXPECT_NE(doc.write_error()->message.find("/dev/full"), std::string::npos);
  const fs::path dir = fresh_folder("document-notdir");
  ASSERT_TRUE(audit::write_atomically(dir / "file", "x").ok());
  EXPECT_FALSE(doc.write_to(dir / "file" / "r.json").ok());
}

// Driver text is escaped by the backends; the writer is a second line of defence.
TEST(ResultDocument, TextThatIsNotUtf8IsReplacedNotFatal) {
  const fs::path dir = fresh_folder("document-utf8"), file = dir / "r.json";
  audit::ResultDocument doc(testing::reference_device("ieee-binary32"), "test", json::object());
  ASSERT_TRUE(doc.write_to(file).ok());
  doc.add(finding("build log: \xff\xfe end"));
  doc.finish();
  const json written = json::parse(read(file));
  EXPECT_EQ(written["findings"][0]["message"], "build log: \xEF\xBF\xBD\xEF\xBF\xBD end");
}

}  // namespace
}  // namespace gp

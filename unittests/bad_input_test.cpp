// Bad input never crashes: every reader (hex batch lines, result JSON, profile files, --tree
// expressions) rejects it with one line naming the file, line and key or field, and exit 3. The
// inputs that crashed the program, and those the fuzzers (fuzz/) found, are kept here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "audit/report/compare.hpp"
#include "audit/report/report.hpp"
#include "audit/report/result_check.hpp"
#include "backends/reference/profile.hpp"
#include "cli/exit_codes.hpp"
#include "input/json_input.hpp"
#include "input/limits.hpp"
#include "model/mma_algorithms.hpp"
#include "model/summation_tree.hpp"
#include "unittests/cli_run.hpp"

namespace gp {
namespace {

using nlohmann::json;
using testing::run_cli;

// A file of the test's temporary directory with the given text; its path.
std::string write(const std::string& name, const std::string& text) {
  const std::filesystem::path p = std::filesystem::path(::testing::TempDir()) / "bad_input" / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string nested(int depth) { return std::string(std::size_t(depth), '[') + std::string(std::size_t(depth), ']'); }

// `gpuparanoia <args>` rejects its input: exit 3 and exactly `line` (plus its newline) on output.
void expect_rejected(const std::string& args, const std::string& name, const std::string& line) {
  const testing::CliRun r = run_cli(args, name);
  EXPECT_EQ(r.exit_status, cli::kExitBadInput) << args << "\n" << r.tail();
  EXPECT_EQ(r.output, "gpuparanoia: " + line + "\n") << args;
}

TEST(BadInput, JsonErrorsNameTheLineAndKeyPath) {
  input::InputError e;
  EXPECT_FALSE(input::parse_json("{\"a\": [1, {\"b\": 1e400}]}", "x.json", e));
  EXPECT_EQ(e.text(), "x.json: a[1].b: number overflow parsing '1e400'");
  EXPECT_FALSE(input::parse_json("{\n\"a\":\n[1,]}", "x.json", e));
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.field, "a[1]");
  EXPECT_FALSE(input::parse_json("{\"a\\nb\": x}", "x.json", e));
  EXPECT_EQ(e.field, "a\\nb");  // a key that would break the line is shown escaped
  // Nesting: the limit parses, one more level is an error (the parser stops there).
  EXPECT_TRUE(input::parse_json(nested(input::kMaxJsonDepth), "x.json", e));
  EXPECT_FALSE(input::parse_json(nested(input::kMaxJsonDepth + 1), "x.json", e));
  EXPECT_FALSE(input::parse_json(nested(1000000), "x.json", e));
  EXPECT_NE(e.what.find("nested deeper than"), std::string::npos) << e.what;
  EXPECT_FALSE(input::read_json_file(::testing::TempDir(), e));
  EXPECT_EQ(e.what, "is a directory, not a file");
  EXPECT_FALSE(input::read_json_file(write("missing", "") + ".not-there", e));
  EXPECT_NE(e.what.find("cannot be opened"), std::string::npos) << e.what;
}

// Wrong-typed and missing keys in `compare` and `table` (a missing "device" was a heap overflow
// in `table`), a directory, 1e400 and deep nesting: one line naming the key, exit 3.
TEST(BadInput, ResultDocumentsInCompareAndTable) {
  const std::string ok = write("ok.json", R"({"findings": []})");
  const struct {
    const char* name;
    std::string text, error;
  } cases[] = {
      {"no_device.json", R"({"findings": [{"probe": "x", "status": "ok"}], "profile": {"scalar": {}}})", ""},
      {"findings.json", R"({"findings": {"probe": 1}})", "findings: must be an array"},
      {"status.json", R"({"findings": [{"status": 1}]})", "findings[0].status: must be a string"},
      {"device.json", R"({"findings": [], "device": "gpu"})", "device: must be an object"},
      {"device_id.json", R"({"findings": [], "device": {"id": 7}})", "device.id: must be a string"},
      {"scalar.json", R"({"findings": [], "profile": {"scalar": {"binary32": {"subnormals": {"input": 0}}}}})",
       "profile.scalar.binary32.subnormals.input: must be a string"},
      {"mma.json", R"({"findings": [], "profile": {"mma": [{"validation": {"tiles": -1}}]}})",
       "profile.mma[0].validation.tiles: must be a non-negative integer"},
      {"cases.json", R"({"findings": [], "profile": {"scalar": {"binary32": {"validation": {"cases": 1e400}}}}})",
       "profile.scalar.binary32.validation.cases: number overflow parsing '1e400'"},
      {"missing.json", R"({"device": {}})", "findings: missing"},
      {"array.json", "[1, 2]", "not a gpuparanoia result (a JSON object with \"findings\")"},
      {"deep.json", nested(100000), ""},
  };
  for (const auto& c : cases) {
    const std::string file = write(c.name, c.text);
    if (std::string(c.name) == "no_device.json") {  // well-formed: compared and tabled
      EXPECT_EQ(run_cli(fmt::format("compare '{}' '{}'", file, ok), "compare_no_device").exit_status,
                cli::kExitDifferences);
      EXPECT_EQ(run_cli(fmt::format("table '{}'", file), "table_no_device").exit_status, cli::kExitOk);
      continue;
    }
    const std::string error = std::string(c.name) == "deep.json"
                                  ? fmt::format(
                                        "{}: {}: nested deeper than {} arrays or objects", file,
                                        [] {
                                          std::string s;
                                          for (int i = 0; i < input::kMaxJsonDepth; ++i) s += "[0]";
                                          return s;
                                        }(),
                                        input::kMaxJsonDepth)
                                  : fmt::format("{}: {}", file, c.error);
    expect_rejected(fmt::format("compare '{}' '{}'", file, ok), "compare_bad", error);
    expect_rejected(fmt::format("compare '{}' '{}'", ok, file), "compare_bad", error);
    expect_rejected(fmt::format("table '{}' '{}'", ok, file), "table_bad", error);
  }
  expect_rejected(fmt::format("table '{}'", ::testing::TempDir()), "table_dir",
                  ::testing::TempDir() + ": is a directory, not a file");
}

// The reports read any shape safely: a document from elsewhere, not checked, renders.
TEST(BadInput, ReportsReadAnyShape) {
  const json odd[] = {
      json::object(),
      json::array(),
      json(3),
      json::parse(R"({"findings": [{"status": "ok"}]})"),  // no device, tool or profile: a heap overflow
      json::parse(R"({"findings": 1, "device": 2, "tool": [], "profile": {"scalar": 3, "mma": {"a": 1}}})"),
      json::parse(R"({"findings": [1, {"config": 2}], "duration_s": "long",
                      "profile": {"scalar": {"binary32": {"add": 1, "fma": {"fused": 2}, "div": {"method": 3},
                                                          "subnormals": {"input": 4}, "validation": {"cases": "x"}}},
                                  "mma": [1, {"validation": 2, "parameters": 3}]}})"),
  };
  for (const json& doc : odd) {
    EXPECT_NE(audit::text_report(doc).find("findings:"), std::string::npos) << doc.dump();
    EXPECT_NE(audit::markdown_report(doc).find("error."), std::string::npos) << doc.dump();
    EXPECT_NE(audit::results_table({doc, doc}).find("| device |"), std::string::npos) << doc.dump();
    (void)audit::headline_lines(doc);
    const audit::Comparison c = audit::compare_results(doc, json::object());
    EXPECT_NE(audit::comparison_text(c).find("difference"), std::string::npos) << doc.dump();
    EXPECT_EQ(audit::check_result(doc).has_value(), &doc != &odd[3]) << doc.dump();  // only one is well-formed
  }
}

// Profile files: 1e400 as a guard-bit count, an unknown key, a directory, deep nesting, a result
// document whose device is not an object.
TEST(BadInput, ProfileFiles) {
  const auto error = [](const std::string& name, const std::string& text) {
    const std::string file = write(name, text);
    auto r = backends::load_profile_file(file);
    return r ? std::string() : r.error().message.substr(file.size());
  };
  EXPECT_EQ(error("p1.json", "{\"name\": \"x\",\n \"scalar\": {\"binary32\": {\"add\": {\"guard_bits\": 1e400}}}}"),
            ": scalar.binary32.add.guard_bits: number overflow parsing '1e400'");
  EXPECT_EQ(error("p2.json", R"({"name": "x", "scalar": {"binary32": {"add": {"guard_bits": 2.5}}}})"),
            ": scalar.binary32.add.guard_bits: must be null or an integer from 0 to 64");
  EXPECT_EQ(error("p3.json", R"({"name": "x", "scalar": {"binary32": {"add": {"guard_bits": -1}}}})"),
            ": scalar.binary32.add.guard_bits: must be null or an integer from 0 to 64");
  EXPECT_EQ(error("p4.json", R"({"name": "x", "scalar": {"binary32": {"add": {"sticky": true, "guard": 1}}}})"),
            ": scalar.binary32.add.guard: unknown key (known: rounding, guard_bits, sticky, equivalent_roundings, "
            "subnormals)");
  EXPECT_EQ(error("p13.json", R"({"name": "x", "scalar": {"binary32": {"nan": {"fma_order": "bad"}}}})"),
            ": scalar.binary32.nan.fma_order: must be a permutation of a, b, c (\"abc\", \"acb\", \"bac\", \"bca\", "
            "\"cab\" or \"cba\"), not \"bad\"");
  EXPECT_EQ(error("p8.json", R"({"name": "x", "scalar": {}, "mma": [], "colour": 1})"),
            ": colour: unknown key (known: name, description, device_name, vendor, published, scalar, mma)");
  EXPECT_EQ(error("p9.json", R"({"mma": [{"config": "16x8x16:binary16,binary16,binary32,binary32", "algorithm": "fda",
                                 "parameters": {"F": "wide"}}]})"),
            ": mma[0]: parameters.F: must be an integer, not \"wide\"");
  // A fuzzer finding: a huge number converted to int (undefined behaviour); a float likewise.
  EXPECT_EQ(error("p10.json", R"({"mma": [{"config": "16x8x16:binary16,binary16,binary32,binary32", "algorithm": "fda",
                                  "parameters": {"F": 12, "out_fraction_bits": 211111111111111111111111111111113}}]})"),
            ": mma[0]: parameters.out_fraction_bits: must be an integer, not 2.1111111111111112e+32");
  EXPECT_EQ(error("p11.json", R"({"mma": [{"config": "16x8x16:binary16,binary16,binary32,binary32", "algorithm": "fda",
                                  "parameters": {"align_floor": -2.5}}]})"),
            ": mma[0]: parameters.align_floor: must be null or an integer, not -2.5");
  EXPECT_EQ(error("p12.json", R"({"mma": [{"config": "16x8x16:binary16,binary16,binary32,binary32", "algorithm": "fda",
                                  "parameters": {"block": 4294967312}}]})"),
            ": mma[0]: parameters.block: must be an integer, not 4294967312");
  EXPECT_EQ(error("p5.json", R"({"schema": "gpuparanoia-result/1", "profile": {}, "device": 3})"),
            ": device: must be an object");
  EXPECT_EQ(error("p6.json", R"([{"name": "x", "scalar": {}}, {"name": "y"}])"),
            ": [1].scalar: missing (an object of formats)");
  EXPECT_NE(error("p7.json", nested(5000)).find(": nested deeper than"), std::string::npos);
  auto dir = backends::load_profile_file(::testing::TempDir());
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, ::testing::TempDir() + ": is a directory, not a file");
}

// A deeply nested --tree overflowed the parser's stack; a chain over the most products parses.
TEST(BadInput, TreeNesting) {
  std::string chain = "p0";
  for (int k = 1; k < model::kMaxDotK; ++k) chain = "(" + chain + "+p" + std::to_string(k) + ")";
  EXPECT_TRUE(model::parse_summation_tree(chain + "+c").tree);
  const std::string deep = std::string(1000000, '(') + "p0+c" + std::string(1000000, ')');
  const model::TreeParse t = model::parse_summation_tree(deep);
  ASSERT_FALSE(t.tree);
  EXPECT_EQ(t.error, fmt::format("parentheses nested deeper than {} at character {} of text", input::kMaxTreeDepth,
                                 input::kMaxTreeDepth + 2));
  expect_rejected(
      "model dot --algorithm tree --a-format binary16 --b-format binary16 --c-format binary32 "
      "--d-format binary32 --tree '" +
          std::string(60000, '(') + "p0+c" + std::string(60000, ')') + "' < /dev/null",
      "tree_deep",
      fmt::format("--tree: parentheses nested deeper than {} at character {} of text", input::kMaxTreeDepth,
                  input::kMaxTreeDepth + 2));
}

// What the program echoes of its input (keys, fields, values, option values) is escaped: a newline
// or a terminal escape sequence in a profile's key, a result's key, a batch field, a --tree or an
// option value gives one line holding its escaped form (a fuzzer finding: a parameter key "bloc\n"
// split the error over two lines); reports and comparisons of a result holding them likewise.
TEST(BadInput, EchoedInputIsEscaped) {
  const auto one_line = [](const testing::CliRun& r, const std::string& needle) {
    EXPECT_TRUE(r.exit_status == cli::kExitBadInput || r.exit_status == cli::kExitUsage) << r.output;
    EXPECT_TRUE(r.output.starts_with("gpuparanoia: ")) << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << r.output;
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output << "\n  expected: " << needle;
  };
  const std::string mma =
      R"({"config": "16x8x16:binary16,binary16,binary32,binary32", "algorithm": "fda", "parameters": )";
  one_line(run_cli("devices --profile-file '" +
                       write("key_newline.json", "{\"mma\": [" + mma + "{\"F\": 25, \"bloc\\n\": \"nvidia\"}}]}") + "'",
                   "esc1"),
           "parameters.bloc\\n: unknown parameter");
  one_line(run_cli("devices --profile-file '" +
                       write("key_escape.json", "{\"name\": \"x\", \"scalar\": {}, \"\\u001b[2J\": 1}") + "'",
                   "esc2"),
           ": \\x1b[2J: unknown key");
  one_line(run_cli("devices --profile-file '" +
                       write("value_escape.json", "{\"mma\": [" + mma + "{\"nan\": \"\\u001b[31m\"}}]}") + "'",
                   "esc3"),
           "\\x1b[31m");
  // A result's odd key is no error: compare shows it escaped among the differences.
  const testing::CliRun compared = run_cli(
      "compare '" +
          write("result_key.json",
                "{\"findings\": [], \"profile\": {\"scalar\": {\"binary32\": {\"add\": {\"a\\nb\\u001b\": 1}}}}}") +
          "' '" + write("result_ok.json", "{\"findings\": []}") + "'",
      "esc4");
  EXPECT_EQ(compared.exit_status, cli::kExitDifferences) << compared.output;
  EXPECT_NE(compared.output.find("profile.scalar.binary32.add.a\\nb\\x1b\n"), std::string::npos) << compared.output;
  EXPECT_EQ(compared.output.find('\x1b'), std::string::npos) << compared.output;
  one_line(run_cli("model scalar --format binary16 --op add < '" + write("batch.txt", "3c00 \x1b[31m\n") + "'", "esc5"),
           "'\\x1b[31m' is not a hex bit pattern");
  one_line(
      run_cli(
          "model dot --algorithm tree --a-format binary16 --b-format binary16 --c-format binary32 --d-format binary32 "
          "--tree \"$(printf 'p0+\\033[31m')\" < /dev/null",
          "esc6"),
      "\\x1b[31m");
  one_line(run_cli("model scalar --format \"$(printf 'binary\\033[31m')\" --op add < /dev/null", "esc7"),
           "'binary\\x1b[31m'");
  // Reports of a document holding them: the same lines as of a plain one, the text escaped.
  json doc = json::parse(R"({"device": {"id": "x", "name": "plain"}, "findings": [{"probe": "p", "status": "ok",
                             "verdict": "plain", "format": "binary32"}], "profile": {"scalar": {"binary32": {"add": {"k": "v"}}}}})");
  const json plain = doc;
  doc["device"]["name"] = "a\nb\x1b[2J";
  doc["findings"][0]["verdict"] = "line\none";
  doc["profile"]["scalar"]["binary32"]["add"] = {{"k\n", "v\x1b"}};
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  for (const std::string& shown : {audit::text_report(doc), audit::markdown_report(doc),
                                   audit::comparison_text(audit::compare_results(doc, plain)),
                                   audit::comparison_markdown(audit::compare_results(doc, plain))})
    EXPECT_EQ(shown.find('\x1b'), std::string::npos) << shown;
  const std::string text = audit::text_report(doc);
  EXPECT_EQ(lines(text), lines(audit::text_report(plain))) << text;
  EXPECT_NE(text.find("line\\none"), std::string::npos) << text;
  EXPECT_EQ(input::escaped("a\nb\t\\\x01\x7f\xc2\x9b\xff\xc3\xa9"), "a\\nb\\t\\\\\\x01\\x7f\\u009b\\xff\xc3\xa9");
  EXPECT_EQ(input::key_text("bloc\n"), "bloc\\n");
  EXPECT_EQ(input::quoted("\x1b[2J"), "'\\x1b[2J'");
}

// Batch lines through the program: exit 3, the results before the bad line written.
TEST(BadInput, BatchLines) {
  const std::string lines = write("lines.txt", "3c00 3c00\n3c00 3c00 3c00\n");
  const testing::CliRun r = run_cli("model scalar --format binary16 --op add < '" + lines + "'", "batch");
  EXPECT_EQ(r.exit_status, cli::kExitBadInput);
  EXPECT_EQ(r.output, "4000\ngpuparanoia: <stdin>:2: field 3: expected 2 fields, found more\n");
  expect_rejected("model scalar --format binary16 --op add < '" + ::testing::TempDir() + "'", "batch_dir",
                  "<stdin>: is a directory, not a file");
  expect_rejected("model dot --instruction volta:HMMA.884.F32.F32 < '" + ::testing::TempDir() + "'", "dot_dir",
                  "<stdin>: is a directory, not a file");
}

}  // namespace
}  // namespace gp

// The program as a Unix tool: one table of exit codes, the whole command line checked before any
// work, results never lost (unwritable targets, signals, concurrent runs into one folder), and
// `devices` as short as `vulkaninfo --summary`.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "unittests/cli_run.hpp"

namespace gp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_cli_split;
using testing::start_cli;

fs::path fresh_folder(const std::string& name) { return testing::fresh_folder("gpuparanoia-cli", name); }
using testing::read_json;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A short audit: one device, a few probes.
const std::vector<std::string> kShortRun = {"run",    "--device", "ref:ieee-binary32", "--quick",
                                            "--seed", "1",        "--probe",           "scalar.add.*"};

std::vector<std::string> short_run(std::vector<std::string> more) {
  std::vector<std::string> args = kShortRun;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(ExitCodes, UsageErrorsAreTwoAndNameTheArgument) {
  const fs::path dir = fresh_folder("usage"), json_file = dir / "r.json";
  const struct {
    std::vector<std::string> args;
    std::string named;
  } cases[] = {
      {{"frobnicate"}, "frobnicate"},
      {{}, "subcommand"},
      {{"model", "frob"}, "frob"},
      {{"model"}, "subcommand of model"},
      {{"run", "--bogus"}, "--bogus"},
      {{"run", "--suite", "sclar"}, "sclar"},
      {{"run", "--seed", "twelve"}, "twelve"},
      {{"run", "--quick", "--full"}, "--quick"},
      {{"devices", "--all", "--json"}, "--json"},
      {{"run", "--device", "nosuch:0", "--json", json_file.string()}, "nosuch:0"},
      {{"run", "--device", "ref:ieee-binary32", "--probe", "scalar.nosuch*", "--json", json_file.string()},
       "scalar.nosuch*"},
      {{"run", "--device", "ref:*", "--json", json_file.string()}, "--json"},
      {{"run", "--device", "ref:ieee-binary32", "--config", "16x8x16*", "--json", json_file.string()}, "16x8x16*"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const auto r = run_cli_split(c.args, dir, fmt::format("case{}", i++));
    EXPECT_EQ(r.exit_status, 2) << c.named << ": " << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(json_file)) << c.named << ": nothing runs on a bad command line";
  }
}

TEST(ExitCodes, HelpAndVersionSucceedAndTheHelpHasTheTable) {
  const fs::path dir = fresh_folder("help");
  auto r = run_cli_split({"--help"}, dir, "help");
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_NE(r.out.find("Exit status"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("128+n"), std::string::npos) << r.out;
  r = run_cli_split({"--version"}, dir, "version");
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_EQ(r.out.rfind("gpuparanoia ", 0), 0u) << r.out;
  EXPECT_EQ(run_cli_split({"run", "--help"}, dir, "run-help").exit_status, 0);
}

TEST(ExitCodes, AProfileFileThatDoesNotLoadIsBadInput) {
  const fs::path dir = fresh_folder("profile"), profile = dir / "p.json";
  std::ofstream(profile) << "{\"name\": \"x\", \"scalar\": {\"binary32\": {\"add\": {\"rounding\": \"sideways\"}}}}";
  for (const char* command : {"devices", "run"}) {
    const auto r = run_cli_split({command, "--profile-file", profile.string()}, dir, command);
    EXPECT_EQ(r.exit_status, 3) << command << ": " << r.err;
    EXPECT_NE(r.err.find("scalar.binary32.add.rounding"), std::string::npos) << r.err;
  }
}

TEST(Outputs, AnUnwritableTargetIsFourAndNamed) {
  const fs::path dir = fresh_folder("unwritable"), file = dir / "file";
  std::ofstream(file) << "a regular file\n";
  const struct {
    std::vector<std::string> more;
    std::string named;
  } cases[] = {
      {{"--json", "/dev/full"}, "/dev/full"},
      {{"--json", (file / "r.json").string()}, (file / "r.json").string()},
      {{"--out", (file / "results").string()}, (file / "results").string()},
      {{"--code", (file / "code").string()}, (file / "code").string()},
  };
  int i = 0;
  for (const auto& c : cases) {
    const auto r = run_cli_split(short_run(c.more), dir, fmt::format("case{}", i++));
    EXPECT_EQ(r.exit_status, 4) << c.named << ": " << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << r.err;
  }
}

// A disk that fills during the run (a file size limit, which binds root too, and which the program
// inherits): the final write fails, the exit status says so, and the file written at the start is
// whole, marked incomplete.
TEST(Outputs, AWriteThatFailsAtTheEndIsFourAndKeepsTheFileBefore) {
  const fs::path dir = fresh_folder("fsize"), json_file = dir / "r.json";
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 16384;  // the document at the start and the text report fit; the findings do not
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // inherited: write(2) fails with EFBIG
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto child = start_cli(short_run({"--json", json_file.string()}), dir, "run");
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(child.wait(), 4) << child.errors();
  EXPECT_NE(child.errors().find(json_file.string()), std::string::npos) << child.errors();
  const json doc = read_json(json_file);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["complete"], false);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".r.json"), std::string::npos) << "a temporary left: " << e.path();
}

TEST(Outputs, AFullStandardOutputIsFour) {
  const fs::path dir = fresh_folder("stdout");
  const int status =
      std::system(fmt::format("'{}' devices > /dev/full 2> '{}'", GPUPARANOIA_BINARY, (dir / "err").string()).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 4);
}

TEST(Outputs, JsonAndOutAreBothWrittenComplete) {
  const fs::path dir = fresh_folder("both"), json_file = dir / "r.json", out = dir / "out";
  const auto r = run_cli_split(short_run({"--json", json_file.string(), "--out", out.string()}), dir, "run");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const json a = read_json(json_file), b = read_json(out / "ref-ieee-binary32.json");
  EXPECT_EQ(a["complete"], true);
  EXPECT_FALSE(a["findings"].empty());
  EXPECT_EQ(a["findings"], b["findings"]);
  EXPECT_GT(fs::file_size(out / "ref-ieee-binary32.md"), 0u);
  EXPECT_GT(fs::file_size(out / "ref-ieee-binary32.txt"), 0u);
}

// --out draws each summation tree of a result as DOT and, where Graphviz is installed, as SVG, both
// linked from the Markdown report beside its Mermaid source; without dot on the PATH the report says
// so and the run succeeds. The unit: Mesa 26's lavapipe's recorded profile (chains of additions).
TEST(Outputs, SummationTreesAreDrawnBesideTheReport) {
  const fs::path dir = fresh_folder("trees");
  const std::vector<std::string> args = {
      "run",      "--profile-file", GPUPARANOIA_RESULTS_DIR "/lavapipe-mesa-26.1.6/vulkan-0.json",
      "--device", "ref:vulkan-0",   "--suite",
      "mma",      "--quick",        "--seed",
      "1",        "--out"};
  auto with_out = [&](const char* name) {
    auto a = args;
    a.push_back((dir / name).string());
    return a;
  };
  const auto r = run_cli_split(with_out("drawn"), dir, "drawn");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::ifstream dot_file(dir / "drawn" / "ref-vulkan-0-tree1.dot");
  const std::string dot{std::istreambuf_iterator<char>(dot_file), {}};
  EXPECT_EQ(dot.rfind("digraph summation_tree {\n", 0), 0u) << dot;
  std::ifstream md_file(dir / "drawn" / "ref-vulkan-0.md");
  const std::string md{std::istreambuf_iterator<char>(md_file), {}};
  EXPECT_NE(md.find("```mermaid"), std::string::npos);
  EXPECT_NE(md.find("Graphviz source: [ref-vulkan-0-tree1.dot](ref-vulkan-0-tree1.dot)"), std::string::npos) << md;
  if (fs::exists(dir / "drawn" / "ref-vulkan-0-tree1.svg"))
    EXPECT_NE(md.find("](ref-vulkan-0-tree1.svg)"), std::string::npos) << md;
  else
    EXPECT_NE(md.find("No drawing: Graphviz is not installed"), std::string::npos) << md;
  // No dot on the PATH: the same run, the note instead of the SVG.
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  ::setenv("PATH", dir.c_str(), 1);
  const auto bare = run_cli_split(with_out("bare"), dir, "bare");
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_EQ(bare.exit_status, 0) << bare.err;
  EXPECT_FALSE(fs::exists(dir / "bare" / "ref-vulkan-0-tree1.svg"));
  std::ifstream bare_md(dir / "bare" / "ref-vulkan-0.md");
  EXPECT_NE(std::string(std::istreambuf_iterator<char>(bare_md), {}).find("No drawing: Graphviz is not installed"),
            std::string::npos);
}

// --config selects MMA configurations by name or instruction, on each device that has them.
TEST(Outputs, ConfigSelectsTheMmaConfigurations) {
  const fs::path dir = fresh_folder("config"), out = dir / "out";
  const auto r = run_cli_split(
      {"run", "--device", "ref:hopper:HMMA.16816.F32", "--device", "ref:hopper:DMMA.884", "--suite", "mma", "--quick",
       "--probe", "mma.identify", "--config", "*binary64*", "--seed", "1", "--out", out.string()},
      dir, "run");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const json chosen = read_json(out / "ref-hopper-DMMA.884.json"),
             other = read_json(out / "ref-hopper-HMMA.16816.F32.json");
  ASSERT_EQ(chosen["findings"].size(), 1u);
  EXPECT_EQ(chosen["findings"][0]["probe"], "mma.identify");
  EXPECT_EQ(chosen["run"]["configs"], json::array({"*binary64*"}));
  EXPECT_TRUE(other["findings"].empty());
  EXPECT_EQ(other["complete"], true);
}

// Two runs at once into one folder, then a third: each keeps its own files, none is clobbered.
TEST(Outputs, ConcurrentRunsIntoOneFolderKeepEveryResult) {
  const fs::path dir = fresh_folder("concurrent"), out = dir / "out";
  const auto args = short_run({"--out", out.string()});
  const auto one = start_cli(args, dir, "one"), two = start_cli(args, dir, "two");
  EXPECT_EQ(one.wait(), 0) << one.errors();
  EXPECT_EQ(two.wait(), 0) << two.errors();
  const auto three = run_cli_split(args, dir, "three");
  EXPECT_EQ(three.exit_status, 0);
  EXPECT_NE(three.err.find("ref-ieee-binary32-3.json"), std::string::npos) << three.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<std::string> expected;
  for (const char* stem : {"ref-ieee-binary32", "ref-ieee-binary32-2", "ref-ieee-binary32-3"})
    for (const char* ext : {".json", ".md", ".txt"}) expected.push_back(std::string(stem) + ext);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);  // and no temporary left behind
  for (const char* stem : {"ref-ieee-binary32", "ref-ieee-binary32-2", "ref-ieee-binary32-3"}) {
    const json doc = read_json(out / (std::string(stem) + ".json"));
    EXPECT_EQ(doc["complete"], true) << stem;
    EXPECT_FALSE(doc["findings"].empty()) << stem;
  }
}

// Waits until the run's JSON holds `findings` findings (it is rewritten every few seconds).
json wait_for_findings(const fs::path& file, std::size_t findings) {
  for (int i = 0; i < 600; ++i) {
    const json doc = read_json(file);
    if (doc.is_object() && doc["findings"].size() >= findings) return doc;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return json();
}

// A signal stops the run between probes; what was done is written, marked incomplete, to every
// output, and the exit status is 128 + the signal.
TEST(Signals, AnInterruptedRunSavesWhatItDidAndExits128PlusN) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const std::string name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    const fs::path dir = fresh_folder(name), json_file = dir / "r.json", out = dir / "out";
    const auto child = start_cli({"run", "--device", "ref:ieee-binary32", "--full", "--seed", "1", "--json",
                                  json_file.string(), "--out", out.string()},
                                 dir, "run");
    // The first periodic rewrite shows the run under way.
    const json during = wait_for_findings(json_file, sig == SIGINT ? 1 : 0);
    ASSERT_TRUE(during.is_object()) << child.errors();
    EXPECT_EQ(during["complete"], false);
    kill(child.pid, sig);
    EXPECT_EQ(child.wait(), 128 + sig) << child.errors();
    for (const fs::path& p : {json_file, out / "ref-ieee-binary32.json"}) {
      const json doc = read_json(p);
      EXPECT_EQ(doc["complete"], false) << p;
      EXPECT_EQ(doc["interrupted"], name) << p;
      EXPECT_GE(doc["findings"].size(), during["findings"].size()) << p;
    }
    EXPECT_GT(fs::file_size(out / "ref-ieee-binary32.md"), 0u);
    EXPECT_GT(fs::file_size(out / "ref-ieee-binary32.txt"), 0u);
  }
}

TEST(Devices, RealDevicesFirstThenTheReferenceDevicesByFamily) {
  const fs::path dir = fresh_folder("devices");
  const auto r = run_cli_split({"devices"}, dir, "summary");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto lines = lines_of(r.out);
  EXPECT_LT(lines.size(), 80u) << r.out;
  bool reference_seen = false;
  for (const std::string& l : lines) {
    const bool reference = l.rfind("reference", 0) == 0;
    EXPECT_TRUE(reference || !reference_seen) << "a real device after the reference ones: " << l;
    reference_seen |= reference;
  }
  EXPECT_NE(r.out.find("ref:ieee-binary32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ref:hopper:*"), std::string::npos) << r.out;

  const auto all = run_cli_split({"devices", "--all"}, dir, "all");
  EXPECT_EQ(all.exit_status, 0);
  EXPECT_NE(all.out.find("ref:hopper:HMMA.16816.F32"), std::string::npos);
  EXPECT_GT(lines_of(all.out).size(), 305u);

  const auto js = run_cli_split({"devices", "--json"}, dir, "json");
  EXPECT_EQ(js.exit_status, 0);
  const json doc = json::parse(js.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << js.out.substr(0, 2000);
  EXPECT_GT(doc["devices"].size(), 305u);
  EXPECT_TRUE(doc["unavailable"].is_array());
  for (const json& d : doc["devices"]) EXPECT_TRUE(d["id"].is_string() && d["capabilities"].is_object());
}

}  // namespace
}  // namespace gp

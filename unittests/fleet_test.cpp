// `gpuparanoia check` and `gpuparanoia fleet` through the command line, on reference devices: a
// device checked against its own audit computes as recorded; against a result whose profile was
// changed in one parameter it does not, and the check names the operation or configuration; a fleet
// of audits and checks flags exactly the device whose arithmetic or check differs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "unittests/cli_run.hpp"

namespace gp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_cli;

void write(const fs::path& p, const json& doc) { std::ofstream(p) << doc.dump(1); }

// The quick audit of a device, seed 1.
json audit(const std::string& device, const std::string& suite, const std::string& name) {
  const auto run =
      run_cli(fmt::format("run --device '{}' --suite {} --quick --seed 1 --json {{json}}", device, suite), name);
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  return run.result;
}

TEST(Check, AScalarUnitAsRecordedAndChanged) {
  const json recorded = audit("ref:ati-r520", "scalar", "check-r520-audit");
  ASSERT_TRUE(recorded.is_object());
  const fs::path dir = testing::fresh_folder("fleet", "check-r520");
  write(dir / "r520.json", recorded);
  const auto same =
      run_cli(fmt::format("check --against '{}' --seconds 1 --seed 3 --json {{json}}", (dir / "r520.json").string()),
              "check-r520-same");
  EXPECT_EQ(same.exit_status, 0) << same.tail();
  EXPECT_NE(same.output.find("seed 3"), std::string::npos) << same.tail();
  EXPECT_NE(same.output.find("ref:ati-r520: computes as recorded"), std::string::npos) << same.tail();
  ASSERT_TRUE(same.result.is_object()) << same.tail();
  std::size_t checked = 0;
  for (const json& f : same.result["findings"]) {
    EXPECT_EQ(f["probe"], "check.scalar");
    if (f["status"] != "ok") continue;
    ++checked;
    EXPECT_GT(f["parameters"]["cases"].get<int>(), 0) << f.dump();
    EXPECT_EQ(f["parameters"]["mismatches"], 0) << f.dump();
  }
  EXPECT_GT(checked, 0u);

  // One parameter changed: the adder of binary32 rounds to nearest instead of chopping.
  json changed = recorded;
  json& add = changed["profile"]["scalar"]["binary32"]["add"];
  ASSERT_TRUE(add.is_object()) << changed["profile"].dump();
  add["rounding"] = add["rounding"] == "rne" ? "rz" : "rne";
  add["guard_bits"] = nullptr;
  write(dir / "changed.json", changed);
  const auto differs =
      run_cli(fmt::format("check --against '{}' --seconds 1 --seed 3 --json {{json}}", (dir / "changed.json").string()),
              "check-r520-changed");
  EXPECT_EQ(differs.exit_status, 1) << differs.tail();
  EXPECT_NE(differs.output.find("DOES NOT compute as recorded"), std::string::npos) << differs.tail();
  EXPECT_NE(differs.output.find("binary32: CHECK:"), std::string::npos) << differs.tail();
  EXPECT_NE(differs.output.find("differ from the recorded profile: add"), std::string::npos) << differs.tail();
  EXPECT_NE(differs.output.find("first: add: inputs"), std::string::npos) << differs.tail();

  // What the command refuses: no such device, a bad shard, a file that is no result.
  EXPECT_EQ(run_cli(fmt::format("check --against '{}' --device 'ref:nothing*'", (dir / "r520.json").string()),
                    "check-r520-nodevice")
                .exit_status,
            2);
  EXPECT_EQ(run_cli(fmt::format("check --against '{}' --shard 3/3", (dir / "r520.json").string()), "check-r520-shard")
                .exit_status,
            2);
  std::ofstream(dir / "broken.json") << "{\"findings\": 3";
  EXPECT_EQ(
      run_cli(fmt::format("check --against '{}'", (dir / "broken.json").string()), "check-r520-broken").exit_status, 3);
}

TEST(Check, AnMmaConfigurationAsRecordedAndChanged) {
  const json recorded = audit("ref:hopper:HMMA.16816.F32", "mma", "check-hmma-audit");
  ASSERT_TRUE(recorded.is_object());
  ASSERT_TRUE(recorded["profile"]["mma"].is_array() && !recorded["profile"]["mma"].empty()) << recorded["profile"];
  const fs::path dir = testing::fresh_folder("fleet", "check-hmma");
  write(dir / "hmma.json", recorded);
  const auto same = run_cli(fmt::format("check --against '{}' --seconds 1 --seed 4", (dir / "hmma.json").string()),
                            "check-hmma-same");
  EXPECT_EQ(same.exit_status, 0) << same.tail();
  EXPECT_NE(same.output.find("dot products computed as recorded"), std::string::npos) << same.tail();

  // Two fraction bits fewer on alignment: the model of another unit.
  json changed = recorded;
  json& params = changed["profile"]["mma"][0]["parameters"];
  ASSERT_TRUE(params.contains("F")) << params.dump();
  params["F"] = params["F"].get<int>() - 2;
  write(dir / "changed.json", changed);
  const auto differs =
      run_cli(fmt::format("check --against '{}' --seconds 1 --seed 4 --shard 1/4", (dir / "changed.json").string()),
              "check-hmma-changed");
  EXPECT_EQ(differs.exit_status, 1) << differs.tail();
  EXPECT_NE(differs.output.find(recorded["profile"]["mma"][0]["config"].get<std::string>() + ": CHECK:"),
            std::string::npos)
      << differs.tail();
  EXPECT_NE(differs.output.find("validation mismatch"), std::string::npos) << differs.tail();
}

TEST(Fleet, FlagsExactlyThePlantedOutlier) {
  const json recorded = audit("ref:ati-r520", "scalar", "fleet-audit");
  ASSERT_TRUE(recorded.is_object());
  const fs::path dir = testing::fresh_folder("fleet", "fleet");
  // Four nodes of one model and driver, one of which computes binary32 products otherwise.
  for (const char* node : {"node1", "node2", "node3", "node4"}) {
    json doc = recorded;
    doc["host"]["hostname"] = node;
    if (std::string(node) == "node3") doc["profile"]["scalar"]["binary32"]["mul"]["rounding"] = "rne";
    write(dir / (std::string(node) + ".json"), doc);
  }
  const auto run = run_cli(fmt::format("fleet '{}' --json", dir.string()), "fleet-json");
  EXPECT_EQ(run.exit_status, 1) << run.tail();
  const json report = json::parse(run.output.substr(run.output.find('{')), nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.tail();
  EXPECT_EQ(report["results"], 4);
  ASSERT_EQ(report["outliers"], 1) << report.dump(1);
  const json& outlier = report["groups"][0]["outliers"][0];
  EXPECT_EQ(outlier["device"], "node3 ref:ati-r520");
  EXPECT_EQ(outlier["why"], "arithmetic differs");
  ASSERT_GE(outlier["differences"].size(), 1u) << outlier.dump(1);
  EXPECT_EQ(outlier["differences"][0]["where"], "profile.scalar.binary32.mul.rounding");
  // Its profile also contradicts its own multiplier finding, which the planting left as it was.
  bool contradicts = false;
  for (const json& d : outlier["differences"])
    contradicts |= d["device"].get<std::string>().find("contradicts scalar.mul.") != std::string::npos;
  EXPECT_TRUE(contradicts) << outlier.dump(1);

  // Two results of one device that differ: the one whose profile contradicts its own findings is the
  // outlier (results/ holds one result a device: one planted copy makes such a pair).
  const fs::path pair = testing::fresh_folder("fleet", "pair");
  for (const char* node : {"node1", "node3"})
    fs::copy(dir / (std::string(node) + ".json"), pair / (std::string(node) + ".json"));
  const auto two = run_cli(fmt::format("fleet '{}' --json", pair.string()), "fleet-pair-run");
  EXPECT_EQ(two.exit_status, 1) << two.tail();
  const json pair_report = json::parse(two.output.substr(two.output.find('{')), nullptr, false);
  ASSERT_EQ(pair_report.value("outliers", 0), 1) << two.tail();
  EXPECT_EQ(pair_report["groups"][0]["outliers"][0]["device"], "node3 ref:ati-r520");
  EXPECT_EQ(pair_report["groups"][0]["outliers"][0]["why"], "arithmetic differs");

  // The same fleet without it passes; a failed check of a node is an outlier of its own.
  fs::remove(dir / "node3.json");
  EXPECT_EQ(run_cli(fmt::format("fleet '{}'", dir.string()), "fleet-clean").exit_status, 0);
  json check = recorded;
  check["run"] = {{"check", {{"against", "node1.json"}}}};
  check["host"]["hostname"] = "node2";
  check["profile"] = {{"scalar", json::object()}, {"mma", json::array()}};
  check["findings"] = json::array({{{"probe", "check.scalar"},
                                    {"format", "binary32"},
                                    {"status", "ok"},
                                    {"verdict", "CHECK: 3 of 800 random operations differ from the recorded profile"},
                                    {"parameters", {{"cases", 800}, {"mismatches", 3}}}}});
  write(dir / "node2-check.json", check);
  const auto text = run_cli(fmt::format("fleet '{}'", dir.string()), "fleet-check");
  EXPECT_EQ(text.exit_status, 1) << text.tail();
  EXPECT_NE(text.output.find("OUTLIER node2 ref:ati-r520"), std::string::npos) << text.tail();
  EXPECT_NE(text.output.find("check failed"), std::string::npos) << text.tail();
  EXPECT_NE(text.output.find("1 outlier"), std::string::npos) << text.tail();
}

// A sharded campaign: three runs of one device with the same seed, each validating its share from
// seeds of its own, merge into one result whose validations count every shard's cases and whose
// findings are otherwise the shards' own; what is not a set of shards of one run is refused.
TEST(Shards, MergeIntoOneResult) {
  const fs::path dir = testing::fresh_folder("fleet", "shards");
  for (const auto& [device, suite] :
       {std::pair{"ref:ati-r520", "scalar"}, std::pair{"ref:volta:HMMA.884.F16.F16", "mma"}}) {
    std::vector<json> shards;
    std::string files;
    for (int i = 0; i < 3; ++i) {
      const std::string name = fmt::format("shard-{}-{}", suite, i);
      const auto run = run_cli(
          fmt::format("run --device '{}' --suite {} --quick --seed 5 --shard {}/3 --json {{json}}", device, suite, i),
          name);
      ASSERT_EQ(run.exit_status, 0) << run.tail();
      EXPECT_EQ(run.result["run"]["shard"]["index"], i);
      const fs::path p = dir / fmt::format("{}-{}.json", suite, i);
      write(p, run.result);
      files += " '" + p.string() + "'";
      shards.push_back(run.result);
    }
    const auto merge = run_cli(fmt::format("merge{} --json {{json}}", files), fmt::format("shard-merge-{}", suite));
    ASSERT_EQ(merge.exit_status, 0) << merge.tail();
    const json& m = merge.result;
    EXPECT_FALSE(m["run"].contains("shard"));
    EXPECT_EQ(m["run"]["merged_shards"]["count"], 3);
    if (std::string(suite) == "scalar") {
      std::uint64_t cases = 0;
      for (const json& s : shards)
        cases += s["profile"]["scalar"]["binary32"]["validation"]["cases"].get<std::uint64_t>();
      EXPECT_GE(cases, 10000u);  // the quick tier's 10^4 over three shards, each its share
      EXPECT_EQ(m["profile"]["scalar"]["binary32"]["validation"]["cases"], cases);
      bool said = false;
      for (const json& f : m["findings"])
        if (f["probe"] == "scalar.profile.validation" && f["format"] == "binary32")
          said = f["verdict"].get<std::string>().find(fmt::format("all {} random cases", cases)) != std::string::npos;
      EXPECT_TRUE(said) << m["findings"].dump().substr(0, 2000);
    } else {
      std::uint64_t tiles = 0;
      for (const json& s : shards) tiles += s["profile"]["mma"][0]["validation"]["tiles"].get<std::uint64_t>();
      EXPECT_EQ(m["profile"]["mma"][0]["validation"]["tiles"], tiles);
      bool said = false;
      for (const json& f : m["findings"])
        if (f["probe"] == "mma.identify")
          said = f["verdict"].get<std::string>().find(fmt::format("; {} random tiles, 0 mismatches", tiles)) !=
                 std::string::npos;
      EXPECT_TRUE(said);
    }
    // A shard twice, or a shard of another run, is no set of shards.
    const fs::path first = dir / fmt::format("{}-0.json", suite);
    EXPECT_EQ(run_cli(fmt::format("merge '{}' '{}' --json {{json}}", first.string(), first.string()), "shard-twice")
                  .exit_status,
              3);
    json other = shards[1];
    other["run"]["seed"] = 6;
    write(dir / "other.json", other);
    const auto refused = run_cli(
        fmt::format("merge '{}' '{}' --json {{json}}", first.string(), (dir / "other.json").string()), "shard-other");
    EXPECT_EQ(refused.exit_status, 3);
    EXPECT_NE(refused.output.find("another run"), std::string::npos) << refused.tail();
  }
  EXPECT_EQ(run_cli("run --device ref:ati-r520 --shard 1/3", "shard-noseed").exit_status, 2) << "--shard needs --seed";
  EXPECT_EQ(run_cli("run --device ref:ati-r520 --seed 1 --shard 3/3", "shard-bad").exit_status, 2);
}

}  // namespace
}  // namespace gp

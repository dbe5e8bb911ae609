// The closed loop of profiles: the profile a run infers, loaded back with --profile-file, is a
// virtual device whose audit finds the same arithmetic (`compare` shows no difference). A family
// left out here is one whose probes infer a wrong parameter, named beside it. Also the names of
// loaded devices: the file's stem, never a name given twice. And profile_json, the writer of the
// whole schema (the Python module's profile()), read back by parse_profiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "backends/reference/reference_backend.hpp"
#include "unittests/cli_run.hpp"

namespace gp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_cli_split;

fs::path fresh_folder(const std::string& name) { return testing::fresh_folder("gpuparanoia-loop", name); }
using testing::read_json;

class ClosedLoop : public ::testing::TestWithParam<std::string> {};

TEST_P(ClosedLoop, TheLoadedResultAuditsTheSame) {
  const std::string device = GetParam();
  std::string slug = device;
  for (char& ch : slug)
    if (ch == ':') ch = '_';
  const fs::path dir = fresh_folder(slug), a = dir / "A.json", b = dir / "B.json";
  const auto first =
      run_cli_split({"run", "--quick", "--seed", "7", "--json", a.string(), "--device", device}, dir, "a");
  ASSERT_EQ(first.exit_status, 0) << first.err;
  const auto again = run_cli_split(
      {"run", "--quick", "--seed", "7", "--profile-file", a.string(), "--device", "ref:A", "--json", b.string()}, dir,
      "b");
  ASSERT_EQ(again.exit_status, 0) << again.err;
  const auto diff = run_cli_split({"compare", a.string(), b.string()}, dir, "compare");
  EXPECT_EQ(diff.exit_status, 0) << diff.out << diff.err;
  EXPECT_NE(diff.out.find("\n0 differences"), std::string::npos) << diff.out;

  // The loaded device is named after the file and says what it was measured on; every MMA
  // configuration the first run identified was audited again.
  const json ja = read_json(a), jb = read_json(b);
  EXPECT_EQ(jb["device"]["id"], "ref:A");
  EXPECT_NE(jb["device"]["description"].get<std::string>().find("measured on " + device), std::string::npos)
      << jb["device"];
  EXPECT_EQ(jb["profile"]["mma"].size(), ja["profile"]["mma"].size());
  // The formats in any order: a profile's scalar part is a JSON object.
  const auto formats = [](const json& doc) {
    return doc["device"]["capabilities"]["formats"].get<std::set<std::string>>();
  };
  EXPECT_EQ(formats(jb), formats(ja));
}

// Scalar units of the four kinds (IEEE, chopping with a truncated multiplier, a cascaded adder,
// fp24), and one MMA instruction of each algorithm family: sfma, gps, fda, fdrda, a chained
// cofdrda and a tree (CDNA1's fused groups). Small-K binary32 instructions keep the run short (CI
// runs on 2 cores): a binary64 sfma (ampere:DMMA.884) closes the loop too, but its alignment-floor
// probe alone takes 4 to 10 s a run.
INSTANTIATE_TEST_SUITE_P(Families, ClosedLoop,
                         ::testing::Values("ref:ieee-binary32", "ref:nvidia-g70", "ref:ati-r520", "ref:ati-r300",
                                           "ref:cdna2:v_mfma_f32_4x4x1_16b_f32", "ref:cdna2:v_mfma_f32_4x4x4_16b_f16",
                                           "ref:hopper:HMMA.16816.F32", "ref:cdna3:v_mfma_f32_4x4x4_16b_f16",
                                           "ref:cdna3:v_mfma_f32_16x16x8_xf32", "ref:cdna1:v_mfma_f32_4x4x4f16"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (char ch : param.param.substr(4))
                             name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

// Units whose multiplier keeps one column and chops: rnz, the nearest mode that rounds its ties as
// chop does, overflows to infinity where chop gives the largest value, so the probes state chop
// (no class to merge), and the inferred profile validates mul and the unfused MAD. The second is the
// unit of the issue that found it: binary32 adds chopped with 3 guard bits, that multiplier, an
// unfused MAD, a fused FMA and flushed results.
class RecoveredUnit : public ::testing::TestWithParam<std::string> {};

TEST_P(RecoveredUnit, ItsProfileValidatesEveryOperation) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();  // "...Operation/0"
  std::replace(name.begin(), name.end(), '/', '_');
  const fs::path dir = fresh_folder(name), unit = dir / "unit.json", out = dir / "out.json";
  std::ofstream(unit) << GetParam();
  const auto r = run_cli_split({"run", "--quick", "--seed", "7", "--profile-file", unit.string(), "--device",
                                "ref:unit", "--json", out.string()},
                               dir, "run");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const json truth = json::parse(GetParam())["scalar"]["binary32"];
  const json profile = read_json(out)["profile"]["scalar"]["binary32"];
  EXPECT_EQ(profile["mul"]["rounding"], "chop") << profile;
  EXPECT_EQ(profile["mul"]["truncated_columns"], 0) << profile;
  EXPECT_EQ(profile["mad"]["fused"], truth.value("mad", json::object()).value("fused", false)) << profile;
  EXPECT_EQ(profile["validation"]["mismatches"], 0) << profile;
  EXPECT_GT(profile["validation"]["cases"], 0) << profile;
  EXPECT_FALSE(profile["validation"].contains("not_validated")) << profile;
}

INSTANTIATE_TEST_SUITE_P(
    ChopOneColumn, RecoveredUnit,
    ::testing::Values(R"({"scalar": {"binary32": {"mul": {"rounding": "chop", "truncated_columns": 0}}}})",
                      R"({"scalar": {"binary32": {"add": {"rounding": "chop", "guard_bits": 3, "sticky": false},
                           "mul": {"rounding": "chop", "truncated_columns": 0}, "mad": {"fused": false},
                           "fma": {"fused": true}, "subnormals": {"output": "flush"}}}})"));

// One device per name: two files with one stem, or a file named after a built-in device, are bad
// input naming both sources.
TEST(LoadedNames, ANameGivenTwiceIsBadInput) {
  const fs::path dir = fresh_folder("names");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  const std::string unit = R"({"scalar": {"binary32": {"add": {"rounding": "rz"}}}})";
  for (const char* f : {"a/g70.json", "b/g70.json", "nvidia-g70.json"}) std::ofstream(dir / f) << unit;
  const fs::path a = dir / "a/g70.json", b = dir / "b/g70.json", builtin = dir / "nvidia-g70.json";

  const auto one = run_cli_split({"devices", "--profile-file", a.string()}, dir, "one");
  EXPECT_EQ(one.exit_status, 0) << one.err;
  EXPECT_NE(one.out.find("ref:g70"), std::string::npos) << one.out;

  for (const char* command : {"devices", "run"}) {
    const auto twice =
        run_cli_split({command, "--profile-file", a.string(), "--profile-file", b.string()}, dir, "twice");
    EXPECT_EQ(twice.exit_status, 3) << twice.err;
    EXPECT_EQ(twice.err,
              fmt::format("gpuparanoia: {}: device ref:g70 is also loaded from {}\n", b.string(), a.string()));
    const auto clash = run_cli_split({command, "--profile-file", builtin.string()}, dir, "clash");
    EXPECT_EQ(clash.exit_status, 3) << clash.err;
    EXPECT_EQ(clash.err,
              fmt::format("gpuparanoia: {}: device ref:nvidia-g70 is also a built-in device\n", builtin.string()));
  }
}

// A result's MMA entries: each becomes a configuration computing with the model it describes,
// an instruction or not; one with no algorithm is a note in the description.
TEST(LoadedMma, EntriesBecomeConfigurations) {
  const json doc = {
      {"schema", "gpuparanoia-result/1"},
      {"device", {{"id", "vulkan:0"}, {"name", "some GPU"}}},
      {"profile",
       {{"scalar", json::object()},
        {"mma",
         {{{"config", "4x4x4:binary16,binary16,binary32,binary32"},
           {"algorithm", "fda"},
           {"parameters",
            {{"F", 3}, {"block", 4}, {"out_rounding", "rz"}, {"out_fraction_bits", 23}, {"nan", "nvidia"}}}},
          {{"config", "8x8x4:binary64,binary64,binary64,binary64"}, {"algorithm", nullptr}}}}}}};
  auto profiles = backends::parse_profiles(doc, "dir/gpu.json");
  ASSERT_TRUE(profiles) << profiles.error().message;
  ASSERT_EQ(profiles->size(), 1u);
  backends::ReferenceDevice device(profiles->front());
  EXPECT_EQ(device.info().id, "ref:gpu");
  EXPECT_EQ(device.info().name, "inferred profile of vulkan:0 (some GPU)");
  EXPECT_EQ(device.info().description,
            "from dir/gpu.json, measured on vulkan:0 (some GPU); MMA 8x8x4:binary64,binary64,binary64,binary64 left "
            "out, no algorithm identified");
  ASSERT_EQ(device.caps().mma.size(), 1u);
  const backends::MmaConfig& cfg = device.caps().mma[0];
  EXPECT_EQ(cfg.name(), "4x4x4:binary16,binary16,binary32,binary32");
  EXPECT_TRUE(cfg.instruction.empty());

  // F = 3: 1 + 2^-4 + 2^-4 loses both small products in the alignment, which F = 24 keeps.
  const std::uint64_t one = 0x3C00, sixteenth = 0x2C00;
  std::vector<std::uint64_t> a(16, 0), b(16, 0), c(16, 0);
  a[0] = one, a[1] = sixteenth, a[2] = sixteenth;  // row 0 of A
  b[0] = one, b[4] = one, b[8] = one;              // column 0 of B
  auto d = device.mma({&cfg, a, b, c});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ((*d)[0], 0x3F800000u);  // 1.0f
  // Written back, the entry's parameters are those read, with the defaults it left out.
  const json& entry = doc["profile"]["mma"][0];
  const auto model = backends::config_from_entry(cfg, entry);
  ASSERT_TRUE(model) << model.error().message;
  json written = entry["parameters"];
  written["align_floor"] = nullptr;
  EXPECT_EQ(backends::parameters_json(*model, cfg.k), written);
  EXPECT_EQ(backends::algorithm_name(*model, cfg.k), "fda");
}

// Every built-in device written by profile_json reads back to the same document, and each MMA
// configuration to the model its instruction's row holds: formats, scale factors, parameters.
// builtin_profile finds each by its name, and nothing by another.
TEST(ProfileJson, EveryBuiltinDeviceReadsBack) {
  EXPECT_FALSE(backends::builtin_profile("hopper:HMMA.16816.F33"));
  EXPECT_FALSE(backends::builtin_profile("ref:ieee-binary32"));
  for (const backends::Profile& p : backends::builtin_profiles()) {
    const json doc = backends::profile_json(p);
    auto read = backends::parse_profiles(doc, "written");
    ASSERT_TRUE(read) << p.name << ": " << read.error().message;
    ASSERT_EQ(read->size(), 1u);
    const backends::Profile& q = read->front();
    EXPECT_EQ(backends::profile_json(q), doc) << p.name;
    const auto named = backends::builtin_profile(p.name);  // the lookup by name finds the same device
    ASSERT_TRUE(named) << p.name;
    EXPECT_EQ(backends::profile_json(*named), doc) << p.name;
    EXPECT_EQ(q.units.size(), p.units.size()) << p.name;
    ASSERT_EQ(q.mma.size(), p.mma.size()) << p.name;
    for (std::size_t i = 0; i < p.mma.size(); ++i) {
      const model::DotConfig* want = backends::mma_model(p.models, p.mma[i]);
      const model::DotConfig* got = backends::mma_model(q.models, q.mma[i]);
      ASSERT_TRUE(want && got) << p.name;
      EXPECT_EQ(got, &q.models.at(backends::mma_model_key(q.mma[i]))) << p.name << ": not the loaded entry";
      EXPECT_EQ(q.mma[i].name(), p.mma[i].name());
      EXPECT_EQ(got->algorithm, want->algorithm) << p.name;
      EXPECT_EQ(got->scale, want->scale) << p.name;
      if (want->scale) {
        EXPECT_EQ(got->scale_block, want->scale_block) << p.name;
      }
      EXPECT_EQ(backends::parameters_json(*got, q.mma[i].k), backends::parameters_json(*want, p.mma[i].k)) << p.name;
    }
  }
}

}  // namespace
}  // namespace gp

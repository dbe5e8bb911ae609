// Profile files, result documents and the reports rendered from them: what a user of the reference
// backend writes and reads. The 7800GTX log's error bounds appear beside the probe's own.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "audit/report/compare.hpp"
#include "audit/report/graphviz.hpp"
#include "audit/report/report.hpp"
#include "audit/result.hpp"
#include "audit/runner.hpp"
#include "audit/validation.hpp"
#include "backends/api_accuracy.hpp"
#include "backends/reference/profile.hpp"
#include "backends/reference/reference_backend.hpp"
#include "tests_mma/layout.hpp"
#include "tests_mma/suite.hpp"
#include "unittests/reference_devices.hpp"

namespace gp {
namespace {

using nlohmann::json;

// The quick scalar (or MMA) suite on a device, its result document.
json audit(backends::Device& device, std::vector<std::string> probes, std::string suite = "scalar") {
  audit::RunSettings settings;
  settings.suite = suite;
  settings.tier = audit::Tier::quick;
  settings.probes = std::move(probes);
  audit::ResultDocument doc(device, "test", settings.to_json());
  if (suite == "mma")
    audit::run_mma_suite(device, settings, doc);
  else
    audit::run_scalar_suite(device, settings, doc);
  doc.finish();
  return doc.json();
}

// A device with MMA configurations that also names some it cannot run (a CUDA compiler without
// the architecture): the left-out ones are a finding of their own, beside the others'.
TEST(Runner, ConfigurationsLeftOutAreAFinding) {
  class Partial final : public backends::Device {
   public:
    explicit Partial(backends::Device& d) : d_(d), caps_(d.caps()) {
      caps_.mma_unsupported = "m8n8k4: no sm_70 in NVRTC";
    }
    const backends::DeviceInfo& info() const override { return d_.info(); }
    const backends::Capabilities& caps() const override { return caps_; }
    Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch& b) override { return d_.scalar(b); }
    Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch& b) override { return d_.mma(b); }

   private:
    backends::Device& d_;
    backends::Capabilities caps_;
  } partial(testing::reference_device("hopper:HMMA.16816.F32"));
  const json doc = audit(partial, {"mma.configurations", "mma.elements"}, "mma");
  std::map<std::string, json> by_probe;
  for (const json& f : doc["findings"]) by_probe[f["probe"].get<std::string>()] = f;
  ASSERT_TRUE(by_probe.count("mma.configurations")) << doc.dump();
  EXPECT_EQ(by_probe["mma.configurations"]["status"], "unsupported");
  EXPECT_NE(by_probe["mma.configurations"]["message"].get<std::string>().find("no sm_70"), std::string::npos);
  EXPECT_EQ(by_probe["mma.elements"]["status"], "ok");
}

// A device that runs the first `good` MMA batches and loses itself after: the identification,
// which runs after the probes, ends early. The probes' findings must not keep readings no model
// judged: each says the identification ended, and mma.identify is the error.
TEST(Runner, AnIdentificationEndedEarlyJudgesNoFinding) {
  class Losing final : public backends::Device {
   public:
    Losing(backends::Device& d, int good) : d_(d), good_(good) {}
    const backends::DeviceInfo& info() const override { return d_.info(); }
    const backends::Capabilities& caps() const override { return d_.caps(); }
    Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch& b) override { return d_.scalar(b); }
    Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch& b) override {
      if (good_ >= 0 && batches_ >= good_) return Error{"device lost"};
      ++batches_;
      return d_.mma(b);
    }
    int batches() const { return batches_; }

   private:
    backends::Device& d_;
    int good_;
    int batches_ = 0;
  };
  backends::Device& truth = testing::reference_device("ampere:HMMA.16816.F32");
  ASSERT_EQ(truth.caps().mma.size(), 1u);
  // The batches the layout check and the two probes take, run as the runner runs them.
  audit::RunSettings settings;
  settings.tier = audit::Tier::quick;
  const audit::ProbeContext ctx{settings.tier, settings.seed, settings.mma_validation_tiles};
  Losing counting(truth, -1);
  ASSERT_EQ(mma::LayoutCheck().run(counting, truth.caps().mma.front(), ctx).status, audit::Status::ok);
  for (const audit::MmaProbe* p : mma::probes())
    if (p->id() == "mma.elements" || p->id() == "mma.rounding") {
      ASSERT_EQ(p->run(counting, truth.caps().mma.front(), ctx).status, audit::Status::ok);
    }
  Losing losing(truth, counting.batches());
  const json doc = audit(losing, {"mma.elements", "mma.rounding", "mma.identify"}, "mma");
  int judged = 0;
  for (const json& f : doc["findings"]) {
    if (f["config"] != truth.caps().mma.front().name()) continue;
    if (f["probe"] == "mma.identify") {
      EXPECT_EQ(f["status"], "error") << f.dump();
      continue;
    }
    ASSERT_EQ(f["status"], "ok") << f.dump();
    const std::string verdict = f["verdict"];
    EXPECT_EQ(verdict.rfind("inconclusive: no candidate model was judged, the identification ended: device lost", 0),
              0u)
        << verdict;
    EXPECT_EQ(f["parameters"]["conclusion"], "inconclusive");
    ++judged;
  }
  EXPECT_EQ(judged, 2) << doc.dump();
}

TEST(Reports, PublishedBoundsBesideTheMeasuredOnes) {
  backends::Device& g70 = testing::reference_device("nvidia-g70");
  const json doc = audit(g70, {"scalar.*.ulp_error"});
  int published = 0;
  for (const json& f : doc["findings"]) {
    ASSERT_EQ(f["status"], "ok") << f.dump();
    if (f["format"] == "binary32" && f["probe"] != "scalar.sqrt.ulp_error") {
      ASSERT_TRUE(f.contains("published")) << f["probe"];
      EXPECT_NE(f["published"].get<std::string>().find("Error bound for"), std::string::npos);
      ++published;
    } else {
      EXPECT_FALSE(f.contains("published")) << f["probe"] << " " << f["format"];
    }
  }
  EXPECT_EQ(published, 4);
  const std::string text = audit::text_report(doc);
  // The measured bound, then the logged one under it.
  const std::size_t mul = text.find("[scalar.mul.ulp_error]");
  ASSERT_NE(mul, std::string::npos) << text;
  EXPECT_EQ(text.find("    published: 7800GTX log (Daumas et al. 2006, appendix A): Error bound for mult= "
                      "[-0.78125,0.625] ULPs",
                      mul),
            text.find('\n', mul) + 1)
      << text;
  EXPECT_NE(audit::markdown_report(doc).find("<br>published: 7800GTX log"), std::string::npos);
}

// The virtual V100 and T4: Fasi et al.'s conclusions beside the probes that test them, the table's
// row beside the identification.
TEST(Reports, PapersWordsBesideTheMmaFindings) {
  for (const char* id : {"volta:HMMA.884.F32.F32", "turing:HMMA.884.F32.F32"}) {
    const json doc = audit(testing::reference_device(id), {"mma.fasi.*", "mma.identify"}, "mma");
    std::map<std::string, std::string> words;
    for (const json& f : doc["findings"])
      if (f.contains("published")) words[f["probe"]] = f["published"];
    EXPECT_EQ(words["mma.fasi.rounding"],
              "Fasi et al. 2021, section 4 (V100): The additions in (2) are performed using binary32 arithmetic with "
              "round-towards-zero.")
        << id;
    EXPECT_EQ(words.count("mma.fasi.monotonicity"), 1u) << id;
    EXPECT_EQ(words.count("mma.fasi.alignment_bits"), std::string_view(id).starts_with("turing") ? 1u : 0u) << id;
    EXPECT_TRUE(words["mma.identify"].starts_with("MMA-Sim Table III: fda(F=")) << words["mma.identify"];
    EXPECT_NE(audit::text_report(doc).find("    published: Fasi et al. 2021"), std::string::npos);
  }
}

TEST(ProfileFiles, PublishedValuesAndUnitsAreRead) {
  const json file = {
      {"name", "my-gpu"},
      {"published", {{"scalar.add.ulp_error binary32", "vendor: 0.5 ulp"}}},
      {"scalar", {{"binary32", {{"add", {{"rounding", "chop"}, {"guard_bits", 1}, {"sticky", false}}}}}}}};
  auto profiles = backends::parse_profiles(file, "test.json");
  ASSERT_TRUE(profiles) << profiles.error().message;
  ASSERT_EQ(profiles->size(), 1u);
  const backends::Profile& p = profiles->front();
  EXPECT_EQ(p.name, "my-gpu");
  EXPECT_EQ(p.published.at("scalar.add.ulp_error binary32"), "vendor: 0.5 ulp");
  ASSERT_EQ(p.units.size(), 1u);
  EXPECT_EQ(p.units[0].add.guard_bits, 1);
  EXPECT_TRUE(p.units[0].add.rounding.chop);
  backends::ReferenceDevice device(p);
  EXPECT_EQ(device.info().id, "ref:my-gpu");
  EXPECT_EQ(device.info().published.size(), 1u);
}

// Per-operation flushing is written only where an operation differs from the unit, and read back.
TEST(ProfileFiles, PerOperationFlushingRoundTrips) {
  model::ScalarUnit u = model::ieee_unit(model::binary32);
  u.op_flush[std::size_t(model::FlushOp::fma)] = model::OpFlush{true, false};
  const json j = backends::unit_to_json(u);
  EXPECT_EQ(j["fma"]["subnormals"], json({{"input", "flush"}, {"output", "preserve"}})) << j.dump();
  EXPECT_FALSE(j["add"].contains("subnormals")) << j.dump();
  auto back = backends::unit_from_json(model::binary32, j, "test");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->op_flush, u.op_flush);
  // An operation's flushing equal to the unit's is no override.
  json same = j;
  same["add"]["subnormals"] = {{"input", "preserve"}, {"output", "preserve"}};
  auto s = backends::unit_from_json(model::binary32, same, "test");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_FALSE(s->op_flush[std::size_t(model::FlushOp::add)].has_value());
  json bad = j;
  bad["fma"]["subnormals"]["sideways"] = "flush";
  auto e = backends::unit_from_json(model::binary32, bad, "p");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("p.fma.subnormals.sideways"), std::string::npos) << e.error().message;
}

// The APIs' allowances for x / y and sqrt: OpenCL's by format and build option, Vulkan's and
// OpenGL's, none for reference devices; a driver's message names the compiled operation.
TEST(ApiAllowance, PerBackendFormatAndBuild) {
  using model::Op;
  backends::DeviceInfo cl;
  cl.backend = "opencl";
  backends::Capabilities plain, crds, relaxed;
  plain.float_controls["build_options"] = "none";
  crds.float_controls["build_options"] = "-cl-fp32-correctly-rounded-divide-sqrt";
  relaxed.float_controls["build_options"] = "-cl-fast-relaxed-math";
  EXPECT_EQ(backends::api_allowance(cl, plain, model::binary32, Op::div)->ulps, 2.5);
  EXPECT_EQ(backends::api_allowance(cl, plain, model::binary32, Op::sqrt)->ulps, 3.0);
  EXPECT_EQ(backends::api_allowance(cl, plain, model::binary64, Op::div)->ulps, 0.0);
  EXPECT_EQ(backends::api_allowance(cl, crds, model::binary32, Op::sqrt)->text, "correctly rounded");
  EXPECT_FALSE(backends::api_allowance(cl, relaxed, model::binary32, Op::div)->ulps);
  EXPECT_FALSE(backends::api_allowance(cl, plain, model::binary32, Op::mul));
  backends::DeviceInfo vk;
  vk.backend = "vulkan";
  EXPECT_EQ(backends::api_allowance(vk, plain, model::binary16, Op::div)->text, "2.5 ulp for |y| in [2^-14, 2^14]");
  EXPECT_FALSE(backends::api_allowance(vk, plain, model::binary32, Op::sqrt)->ulps);  // inherited from inversesqrt
  EXPECT_EQ(backends::compiled_operation_note(cl, plain, model::binary32, Op::div),
            "describes x / y as the driver compiles it; OpenCL's allowance in binary32: 2.5 ulp");
  backends::DeviceInfo ref;
  ref.backend = "reference";
  EXPECT_EQ(backends::compiled_operation_note(ref, plain, model::binary32, Op::div), "");
}

// An approximate division's and square root's bounds (div.max_ulps with the method "approximate",
// sqrt.max_ulps) are written only where set, read back exactly, and checked.
TEST(ProfileFiles, ApproximateBoundsRoundTrip) {
  model::ScalarUnit u = model::ieee_unit(model::binary32);
  EXPECT_FALSE(backends::unit_to_json(u)["div"].contains("max_ulps"));
  EXPECT_FALSE(backends::unit_to_json(u)["sqrt"].contains("max_ulps"));
  u.div = {model::DivMethod::approximate, model::UnitRounding::ieee(model::Rounding::rne), {640}};
  u.sqrt_max_error = model::UlpBound{768};
  const json j = backends::unit_to_json(u);
  EXPECT_EQ(j["div"], json({{"method", "approximate"}, {"rounding", "rne"}, {"max_ulps", 2.5}})) << j.dump();
  EXPECT_EQ(j["sqrt"]["max_ulps"], 3.0) << j.dump();
  auto back = backends::unit_from_json(model::binary32, j, "test");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->div, u.div);
  EXPECT_EQ(back->sqrt_max_error, u.sqrt_max_error);
  const auto error = [](json bad) {
    auto e = backends::unit_from_json(model::binary32, bad, "p");
    return e ? std::string() : e.error().message;
  };
  json no_bound = j;
  no_bound["div"].erase("max_ulps");
  EXPECT_EQ(error(no_bound), "p.div: max_ulps goes with the method \"approximate\", and only there");
  json exact_with_bound = j;
  exact_with_bound["div"]["method"] = "correctly_rounded";
  EXPECT_EQ(error(exact_with_bound), "p.div: max_ulps goes with the method \"approximate\", and only there");
  json negative = j;
  negative["sqrt"]["max_ulps"] = -1;
  EXPECT_EQ(error(negative), "p.sqrt.max_ulps: must be a number of ulps, 0 or more and below 2^23");
  json method = j;
  method["div"]["method"] = "newton";
  EXPECT_EQ(error(method), "p.div.method: must be \"correctly_rounded\", \"reciprocal\" or \"approximate\"");
}

// fma.zero_addend is written only when it is not IEEE's, read back, and a bad value is an error
// naming the key; mad has no such key.
TEST(ProfileFiles, FmaZeroAddendRoundTrips) {
  model::ScalarUnit u = model::ieee_unit(model::binary32);
  EXPECT_FALSE(backends::unit_to_json(u)["fma"].contains("zero_addend"));
  u.fma_zero_addend = model::ZeroAddend::product;
  const json j = backends::unit_to_json(u);
  EXPECT_EQ(j["fma"]["zero_addend"], "product") << j.dump();
  auto back = backends::unit_from_json(model::binary32, j, "test");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->fma_zero_addend, model::ZeroAddend::product);
  for (const json& v : {json("sum"), json(true)}) {
    json bad = j;
    bad["fma"]["zero_addend"] = v;
    auto e = backends::unit_from_json(model::binary32, bad, "p");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message, "p.fma.zero_addend: must be \"ieee\" or \"product\"");
  }
  json mad = j;
  mad["mad"]["zero_addend"] = "product";
  auto e = backends::unit_from_json(model::binary32, mad, "p");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("p.mad.zero_addend: unknown key"), std::string::npos) << e.error().message;
}

// The NaN keys beyond canonical and quiet_on_transfer are written only where they are not the IEEE
// unit's, read back to the same policy, and a bad value is one line naming the key.
TEST(ProfileFiles, NanPolicyRoundTrips) {
  const json ieee = backends::unit_to_json(model::ieee_unit(model::binary32));
  EXPECT_EQ(ieee["nan"], json({{"canonical", false}, {"quiet_on_transfer", false}})) << ieee.dump();
  model::ScalarUnit u = model::ieee_unit(model::binary32);
  u.nan.propagation = model::NanPropagation::larger_payload;
  u.nan.quiet = false;
  u.nan.sub_flips = true;
  u.nan.default_nan = model::DefaultNan::negative_quiet;
  const json j = backends::unit_to_json(u);
  EXPECT_EQ(j["nan"], json({{"canonical", false},
                            {"quiet_on_transfer", false},
                            {"propagation", "larger_payload"},
                            {"quiet", false},
                            {"sub_flips", true},
                            {"default", "negative_quiet"}}))
      << j.dump();
  auto back = backends::unit_from_json(model::binary32, j, "test");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->nan, u.nan);
  for (const auto& [key, value] :
       {std::pair{"propagation", json("x87")}, {"default", json("nvidia")}, {"default", json(1)}}) {
    json bad = j;
    bad["nan"][key] = value;
    auto e = backends::unit_from_json(model::binary32, bad, "p");
    ASSERT_FALSE(e) << key;
    EXPECT_EQ(e.error().message.find('\n'), std::string::npos) << e.error().message;
    EXPECT_EQ(e.error().message.rfind(std::string("p.nan.") + key + ": must be ", 0), 0u) << e.error().message;
  }
}

// nan.fma_order: written only when set, read back, a bad value named with its key.
TEST(ProfileFiles, FmaNanOrderRoundTrips) {
  EXPECT_FALSE(backends::unit_to_json(model::ieee_unit(model::binary32))["nan"].contains("fma_order"));
  model::ScalarUnit u = model::ieee_unit(model::binary16);
  for (model::FmaNanOrder o : model::all_fma_nan_orders) {
    u.nan.fma_order = o;
    const json j = backends::unit_to_json(u);
    EXPECT_EQ(j["nan"]["fma_order"], std::string(model::name(o))) << j.dump();
    auto back = backends::unit_from_json(model::binary16, j, "test");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->nan, u.nan);
  }
  for (const json& value : {json("abd"), json("ABC"), json("ba"), json(1), json(nullptr)}) {
    json bad = backends::unit_to_json(u);
    bad["nan"]["fma_order"] = value;
    auto e = backends::unit_from_json(model::binary16, bad, "p");
    ASSERT_FALSE(e) << value.dump();
    EXPECT_EQ(e.error().message,
              "p.nan.fma_order: must be a permutation of a, b, c (\"abc\", \"acb\", \"bac\", \"bca\", "
              "\"cab\" or \"cba\"), not " +
                  value.dump());
  }
}

TEST(ProfileFiles, ErrorsNameTheKey) {
  const auto error = [](const json& j) {
    auto r = backends::parse_profiles(j, "f.json");
    return r ? std::string() : r.error().message;
  };
  EXPECT_EQ(error({{"name", "x"}, {"colour", 1}, {"scalar", json::object()}}),
            "f.json: colour: unknown key (known: name, description, device_name, vendor, published, scalar, mma)");
  EXPECT_NE(error({{"name", "x"}, {"published", {{"k", 1}}}, {"scalar", json::object()}}).find("published.k"),
            std::string::npos);
  EXPECT_NE(error({{"name", "x"}, {"scalar", {{"binary99", json::object()}}}}).find("binary99"), std::string::npos);
  const std::string bad_key = error({{"name", "x"}, {"scalar", {{"binary32", {{"add", {{"guard", 1}}}}}}}});
  EXPECT_NE(bad_key.find("guard"), std::string::npos) << bad_key;
  EXPECT_EQ(error(json::array({{{"scalar", json::object()}}})), "f.json: [0].name: missing");
  EXPECT_EQ(error(json::array(
                {{{"name", "x"}, {"scalar", json::object()}}, {{"name", "ref:x"}, {"scalar", json::object()}}})),
            "f.json: [1].name: device ref:x is also loaded from f.json [0]");
  EXPECT_EQ(error({{"name", "x"}, {"mma", {{{"config", "16x8x99:binary16"}}}}}),
            "f.json: mma[0].config: must be \"MxNxK:a,b,c,d\" (format names; M and N at most 256, K at most 1024)");
  EXPECT_NE(error({{"name", "x"}, {"mma", {{{"config", "99999999999x8x4:binary16,binary16,binary32,binary32"}}}}})
                .find("mma[0].config"),
            std::string::npos);
  EXPECT_EQ(error({{"name", "x"},
                   {"mma",
                    {{{"config", "8x8x4:binary64,binary64,binary64,binary64"},
                      {"algorithm", "sfma"},
                      {"parameters", json::object()}},
                     {{"config", "8x8x4:binary64,binary64,binary64,binary64"},
                      {"algorithm", "sfma"},
                      {"parameters", json::object()}}}}}),
            "f.json: mma[1].config: 8x8x4:binary64,binary64,binary64,binary64 is listed twice");
  EXPECT_EQ(error({{"name", "x"}, {"mma", {{{"config", "8x8x4:binary64,binary64,binary64,binary64"}, {"colour", 1}}}}}),
            "f.json: mma[0].colour: unknown key (known: config, instruction, algorithm, parameters, validation)");
}

// A unit's errors are invalid input and name the unit's key at fault as data (Error::key): the
// validation leaves out that operation by it. With no `where`, the key paths start at the unit.
TEST(ProfileFiles, UnitErrorsCarryTheKeyAtFault) {
  const json ieee = backends::unit_to_json(model::ieee_unit(model::binary32));
  json bad = ieee;
  bad["div"]["rounding"] = "sideways";
  auto e = backends::unit_from_json(model::binary32, bad, "p");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, ErrorKind::invalid);
  EXPECT_EQ(e.error().key, "div");
  EXPECT_EQ(e.error().message,
            "p.div.rounding: must be chop or a rounding name (rne rna rnz rnu rnd rno rz ru rd ra ro)");
  auto relative = backends::unit_from_json(model::binary32, bad, "");
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error().message,
            "div.rounding: must be chop or a rounding name (rne rna rnz rnu rnd rno rz ru rd ra ro)");
  json flush = ieee;
  flush["fma"]["subnormals"] = {{"input", "sometimes"}};
  auto f = backends::unit_from_json(model::binary32, flush, "p");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().key, "fma") << f.error().message;
  json unknown = ieee;
  unknown["transfer"] = json::object();
  auto u = backends::unit_from_json(model::binary32, unknown, "p");
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().key, "transfer") << u.error().message;
  auto whole = backends::unit_from_json(model::binary32, json::array(), "p");
  ASSERT_FALSE(whole);
  EXPECT_EQ(whole.error().key, "") << whole.error().message;
  EXPECT_EQ(whole.error().message, "p: must be a JSON object");
}

// A run stopped part way and resumed from its document (a contained run after a crash) ends with
// the profile of a run never stopped: the held profile is read back, and the held register findings
// still make the G70's binary16 compute in its binary32 unit, whichever side of the stop they fell.
TEST(Runner, AResumedRunAssemblesTheSameProfile) {
  backends::Device& g70 = testing::reference_device("nvidia-g70");
  const json whole = audit(g70, {});
  ASSERT_EQ(whole["profile"]["scalar"]["binary16"].value("registers", ""), "binary32");
  for (const int after : {5, 30, 60, 90}) {  // probes asked before the stop
    audit::RunSettings settings;
    settings.suite = "scalar";
    settings.tier = audit::Tier::quick;
    int asked = 0;
    settings.stop = [&] { return ++asked > after; };
    audit::ResultDocument part(g70, "test", settings.to_json());
    audit::run_scalar_suite(g70, settings, part);
    settings.stop = nullptr;
    audit::ResultDocument resumed(g70, "test", settings.to_json());
    resumed.resume(part.json());
    audit::run_scalar_suite(g70, settings, resumed);
    EXPECT_EQ(resumed.json()["profile"]["scalar"], whole["profile"]["scalar"]) << "stopped after " << after;
    EXPECT_EQ(resumed.json()["findings"].size(), whole["findings"].size()) << "stopped after " << after;
  }
}

// The validation leaves out the operation whose keys the model refuses, saying why in the words of
// the error relative to the unit; a key that is no operation makes the profile incomplete.
TEST(ProfileValidation, LeavesOutTheOperationTheErrorNames) {
  backends::Device& device = testing::reference_device("ieee-binary32");
  audit::ProbeContext ctx;
  ctx.tier = audit::Tier::quick;
  backends::ScalarProfile profile = backends::profile_of(model::ieee_unit(model::binary32));
  profile.stated(backends::UnitOp::div).method = model::DivMethod::approximate;  // and no bound
  const audit::Finding f = audit::validate_scalar_profile(device, model::binary32, profile, ctx);
  EXPECT_EQ(f.status, audit::Status::ok) << f.message;
  EXPECT_EQ(f.parameters.value("not_validated", json()),
            json({{"div", "div: max_ulps goes with the method \"approximate\", and only there"}}))
      << f.parameters.dump();
  EXPECT_EQ(f.parameters.value("mismatches", -1), 0) << f.verdict;
  ASSERT_TRUE(profile.validation);
  EXPECT_EQ(profile.validation->not_validated.size(), 1u);
  backends::ScalarProfile guard = backends::profile_of(model::ieee_unit(model::binary32));
  guard.stated(backends::UnitOp::add).guard_bits = model::max_guard_bits + 1;
  const audit::Finding g = audit::validate_scalar_profile(device, model::binary32, guard, ctx);
  EXPECT_EQ(g.status, audit::Status::unsupported);
  EXPECT_EQ(g.message,
            "the probes did not describe a complete unit: profile.scalar.binary32: guard_bits must lie in 0..60");
}

// An inferred profile is a profile file: the audit of a device, read back as a virtual device named
// after the file, audits the same.
TEST(ProfileFiles, AResultDocumentBecomesAVirtualDevice) {
  backends::Device& r520 = testing::reference_device("ati-r520");
  const json doc = audit(r520, {});
  auto profiles = backends::parse_profiles(doc, "r520.json");
  ASSERT_TRUE(profiles) << profiles.error().message;
  backends::ReferenceDevice copy(profiles->front());
  EXPECT_EQ(copy.info().id, "ref:r520");
  EXPECT_NE(copy.info().description.find("measured on ref:ati-r520"), std::string::npos) << copy.info().description;
  const json again = audit(copy, {});
  EXPECT_EQ(again["profile"]["scalar"], doc["profile"]["scalar"]);
}

// compare: two runs of one device with one seed are the same; what changes in a parameter, a
// verdict, a profile key or the set of findings is reported where it is, with both values; times
// are not differences.
TEST(Compare, DifferencesAreNamedWithBothValues) {
  backends::Device& r520 = testing::reference_device("ati-r520");
  const json a = audit(r520, {"scalar.add.*", "scalar.mul.*"});
  const json again = audit(r520, {"scalar.add.*", "scalar.mul.*"});
  const audit::Comparison same = audit::compare_results(a, again);
  EXPECT_TRUE(same.differences.empty()) << audit::comparison_text(same);
  EXPECT_GT(same.compared_findings, 10);

  json b = a;
  for (json& f : b["findings"])
    if (f["probe"] == "scalar.add.guard_bits") {
      f["parameters"]["guard_bits"] = 1;
      f["parameters"]["validation"] = {{"seconds", 2.5}};  // a time: no difference
      f["verdict"] = "ADDITION: changed";
    }
  b["profile"]["scalar"]["binary32"]["mul"]["correction"] = 4;
  b["findings"].erase(b["findings"].begin());
  const audit::Comparison c = audit::compare_results(a, b);
  std::map<std::string, std::pair<std::string, std::string>> d;
  for (const audit::Difference& x : c.differences) d[x.where] = {x.a, x.b};
  EXPECT_EQ(d.size(), 4u) << audit::comparison_text(c);
  EXPECT_EQ(d["scalar.add.guard_bits [binary32] parameters.guard_bits"],
            std::make_pair(std::string("2"), std::string("1")));
  EXPECT_EQ(d["scalar.add.guard_bits [binary32] verdict"].second, "ADDITION: changed");
  EXPECT_EQ(d["profile.scalar.binary32.mul.correction"], std::make_pair(std::string("3"), std::string("4")));
  const std::string first = a["findings"][0]["probe"].get<std::string>() + " [binary32]";
  EXPECT_EQ(d[first], std::make_pair(std::string("ok"), std::string("(absent)")));
  const std::string md = audit::comparison_markdown(c);
  EXPECT_NE(md.find("| `profile.scalar.binary32.mul.correction` | 3 | 4 |"), std::string::npos) << md;
}

// The table of results/README.md: a row per device and format with the profile's headline.
TEST(Reports, ResultsSideBySide) {
  backends::Device& r520 = testing::reference_device("ati-r520");
  backends::Device& ieee = testing::reference_device("ieee-binary32");
  const std::string t = audit::results_table({audit(r520, {}), audit(ieee, {})});
  EXPECT_NE(
      t.find("| ref:ati-r520 | gpuparanoia reference model | binary32 | chop, 2 guard bits | chop, 9 columns + 3 | "
             "x * (1/y rz) | unfused | unfused |"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("| ref:ieee-binary32 | gpuparanoia reference model | binary32 | rne | rne | rne | fused | unfused | "
                   "preserve/preserve/preserve | 0 mismatches in 10000 |"),
            std::string::npos)
      << t;
}

// The MMA rows: MMA-Sim's row of an instruction against the device; a configuration of no row (a
// cooperative matrix) beside the instructions whose identified model is the same, and no other.
TEST(Reports, MmaRowsSayWhatTheTableRowsPredict) {
  const json hmma = audit(testing::reference_device("hopper:HMMA.16816.F32"), {"mma.identify"}, "mma");
  json coopmat = hmma;
  coopmat["device"]["id"] = "vulkan:0";
  for (json& e : coopmat["profile"]["mma"]) e.erase("instruction");
  for (json& f : coopmat["findings"]) f["parameters"].erase("table");
  json other = coopmat;
  other["device"]["id"] = "vulkan:1";
  for (json& e : other["profile"]["mma"]) e["parameters"]["F"] = 24;
  const std::string t = audit::results_table({hmma, coopmat, other});
  EXPECT_NE(t.find("| 0 mismatches in 10000 tiles | hopper:HMMA.16816.F32: the same (128000 elements of 1000 tiles "
                   "predicted) |"),
            std::string::npos)
      << t;
  EXPECT_NE(
      t.find(
          "| 0 mismatches in 10000 tiles | none; the same model as ref:hopper:HMMA.16816.F32 hopper:HMMA.16816.F32 |"),
      std::string::npos)
      << t;
  EXPECT_EQ(t.find("the same model as vulkan"), std::string::npos) << t;
  EXPECT_NE(t.find("\"F\":24,"), std::string::npos) << t;
  EXPECT_NE(t.find("| 0 mismatches in 10000 tiles | none |"), std::string::npos) << t;
}

// A summation tree, the tree-shape probe's or the identified model's, drawn under its finding:
// Mermaid in Markdown, an indented tree in text. Trees that do not parse over the configuration's
// K (a result is outside input) are drawn nowhere, and break nothing.
TEST(Reports, SummationTreesAreDrawn) {
  const auto finding = [](const char* probe, const char* config, json parameters) {
    return json{{"probe", probe}, {"config", config}, {"status", "ok"}, {"verdict", "V"}, {"parameters", parameters}};
  };
  const char* config = "2x2x2:binary16,binary16,binary16,binary16";
  const json doc = {{"device", {{"id", "ref:trees"}, {"name", "trees"}}},
                    {"findings",
                     {finding("mma.summation_tree", config, {{"tree", "(p0+p1)+c"}}),
                      finding("mma.identify", config,
                              {{"algorithm", "tree"}, {"parameters", {{"tree", "p0+(p1+c)"}, {"sums", "binary16"}}}}),
                      finding("mma.identify", config, {{"algorithm", "fda"}, {"parameters", {{"tree", "p1+p0+c"}}}}),
                      finding("mma.summation_tree", config, {{"tree", "(p0+p1)+p1+c"}}),
                      finding("mma.summation_tree", config, {{"tree", "(p0+p1+p2)+c"}}),
                      finding("mma.summation_tree", config, {{"tree", 5}}),
                      finding("mma.summation_tree", "2x2:binary16", {{"tree", "(p0+p1)+c"}}),
                      finding("mma.summation_tree", "2x2x99999999999:binary16", {{"tree", "(p0+p1)+c"}})}}};
  const auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  const std::string text = audit::text_report(doc);
  EXPECT_NE(text.find("[mma.summation_tree]\n    summation tree:\n      +\n        +\n          p0\n          p1\n"
                      "        c\n  V"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("[mma.identify]\n    summation tree:\n      +\n        p0\n        +\n          p1\n          c\n  V"),
      std::string::npos)
      << text;
  EXPECT_EQ(count(text, "summation tree:"), 2u) << text;
  const std::string md = audit::markdown_report(doc);
  EXPECT_NE(md.find("`mma.summation_tree`: the summation tree `(p0+p1)+c`\n\n```mermaid\ngraph TD\n  s0[\"+\"]\n"
                    "  p0 --> s0\n  p1 --> s0\n  s1[\"+\"]\n  s0 --> s1\n  c --> s1\n```\n\n"
                    "`mma.identify`: the summation tree `p0+(p1+c)`\n\n```mermaid\ngraph TD\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(count(md, "```mermaid"), 2u) << md;
  // With drawings (run --out): each tree's SVG or the note why there is none, and its DOT, linked
  // relative to the report after its Mermaid block; the trees numbered in the order of the findings.
  ASSERT_EQ(audit::result_trees(doc).size(), 2u);
  EXPECT_EQ(audit::result_trees(doc)[1].text(), "p0+(p1+c)");
  const audit::TreeDrawings drawn{"trees", {"", audit::kGraphvizMissing}};
  const std::string md_drawn = audit::markdown_report(doc, &drawn);
  EXPECT_NE(md_drawn.find("c --> s1\n```\n\n![the summation tree (p0+p1)+c](trees-tree1.svg)\n\n"
                          "Graphviz source: [trees-tree1.dot](trees-tree1.dot)\n\n`mma.identify`"),
            std::string::npos)
      << md_drawn;
  EXPECT_NE(md_drawn.find(std::string("```\n\nNo drawing: ") + audit::kGraphvizMissing +
                          ".\n\nGraphviz source: [trees-tree2.dot](trees-tree2.dot)\n\n"),
            std::string::npos)
      << md_drawn;
  EXPECT_EQ(count(md_drawn, "```mermaid"), 2u) << md_drawn;
}

// Graphviz's dot on a tree's DOT (where it is installed): an SVG with a node per leaf and sum; a
// file that is not DOT, and a PATH without dot, give notes and no SVG.
TEST(ReportTrees, GraphvizDrawsTheDot) {
  const auto dir = std::filesystem::temp_directory_path() / ("gp_graphviz_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const model::SummationTree t = *model::parse_summation_tree("((p0+p1)+(p2+p3))+c", 4).tree;
  const auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const std::string note = audit::draw_svg(write("t.dot", t.dot()), dir / "t.svg");
  if (note == audit::kGraphvizMissing) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << note;
  }
  ASSERT_EQ(note, "");
  std::stringstream svg;
  svg << std::ifstream(dir / "t.svg").rdbuf();
  std::size_t nodes = 0;
  for (std::size_t at = svg.str().find("class=\"node\""); at != std::string::npos;
       at = svg.str().find("class=\"node\"", at + 1))
    ++nodes;
  EXPECT_EQ(nodes, 5u + 4u) << svg.str();
  EXPECT_NE(audit::draw_svg(write("bad.dot", "digraph { -> }"), dir / "bad.svg").find("dot failed"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.svg"));
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", dir.c_str(), 1);
  EXPECT_EQ(audit::draw_svg(dir / "t.dot", dir / "t2.svg"), audit::kGraphvizMissing);
  ::setenv("PATH", path.c_str(), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gp

// The compiler canaries (tests_scalar/compiler.hpp): silent on every unit of the model, whatever its
// parameters (no unit of the model contracts or folds: its expressions are the operations they
// say), and loud on a device whose "compiler" contracts a multiply into the add that follows it, or
// folds an operation into a narrowing conversion; a probe whose expressions have that shape then
// states nothing of the unit.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "audit/runner.hpp"
#include "backends/reference/profile.hpp"
#include "backends/reference/reference_backend.hpp"
#include "tests_scalar/compiler.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "unittests/drawn_seed.hpp"
#include "unittests/random_unit.hpp"
#include "unittests/reference_devices.hpp"

namespace gp {
namespace {

using backends::Expr;
using backends::Instr;
using backends::Node;

// What LLVM's contraction does to an expression: an add or a subtraction of a product of its own
// format becomes one fma (a*b - x as fma(a, b, -x), x - a*b as fma(-a, b, x)).
Expr contracted(const Expr& e) {
  Expr out = e;
  out.code.clear();
  std::vector<std::uint8_t> at;  // where each instruction of e went
  for (const Instr& in : e.code) {
    Instr c = in;
    for (int k = 0; k < backends::arity(in.op) && in.op != Node::input; ++k) c.arg[k] = at[in.arg[k]];
    const auto product = [&](int k) {
      const Instr& arg = e.code[in.arg[k]];
      return (in.op == Node::add || in.op == Node::sub) && arg.op == Node::mul && arg.format == in.format;
    };
    const int k = product(0) ? 0 : product(1) ? 1 : -1;
    if (k >= 0) {
      const Instr& mul = e.code[in.arg[k]];
      std::uint8_t a = at[mul.arg[0]], b = at[mul.arg[1]], x = c.arg[1 - k];
      const auto neg = [&](std::uint8_t v) {
        out.code.push_back({Node::neg, {v, 0, 0}, in.format});
        return std::uint8_t(out.code.size() - 1);
      };
      if (in.op == Node::sub) (k == 0 ? x : a) = neg(k == 0 ? x : a);
      c = {Node::fma, {a, b, x}, in.format};
    }
    out.code.push_back(c);
    at.push_back(std::uint8_t(out.code.size() - 1));
  }
  return out;
}

// A compiler folding a product or a sum into the narrowing conversion it feeds (v_fma_mixlo_f16):
// cvt(a op b) with one rounding of the exact value, which binary64 holds for the formats used here.
std::vector<std::uint64_t> folded(const backends::ScalarBatch& b, const model::Format& w) {
  const Expr& e = *b.expr;
  const model::Options o;
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i + 1 < b.operands.size(); i += 2) {
    const auto x = model::cvt(model::binary64, w, o, b.operands[i]).bits;
    const auto y = model::cvt(model::binary64, w, o, b.operands[i + 1]).bits;
    const auto exact =
        e.code[2].op == Node::mul ? model::mul(model::binary64, o, x, y) : model::add(model::binary64, o, x, y);
    out.push_back(model::cvt(*e.output_format, model::binary64, o, exact.bits).bits);
  }
  return out;
}

enum class Compiler { contracting, folding };

class Compiled final : public backends::Device {
 public:
  Compiled(backends::Device& inner, Compiler c) : inner_(&inner), compiler_(c) {}
  const backends::DeviceInfo& info() const override { return inner_->info(); }
  const backends::Capabilities& caps() const override { return inner_->caps(); }
  Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch& b) override {
    const Expr& e = *b.expr;
    if (compiler_ == Compiler::folding) {
      if (e.code.size() == 4 && e.code[3].op == Node::cvt && (e.code[2].op == Node::mul || e.code[2].op == Node::add))
        return folded(b, *e.input_format);
      return inner_->scalar(b);
    }
    const Expr c = contracted(e);
    return inner_->scalar({&c, b.operands});
  }
  Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch& b) override { return inner_->mma(b); }

 private:
  backends::Device* inner_;
  Compiler compiler_;
};

audit::ProbeContext quick() { return {audit::Tier::quick, 1}; }

TEST(CompilerCanaries, SilentOnEveryReferenceDevice) {
  int devices = 0;
  for (const auto& d : testing::reference_devices()) {
    if (!d->caps().mma.empty()) continue;
    ++devices;
    for (const model::Format* f : d->caps().formats)
      for (const audit::ScalarProbe* canary : scalar::canaries()) {
        if (!canary->applies(*f)) continue;
        audit::Finding fi = canary->run(*d, *f, quick());
        fi.probe = canary->id();
        fi.format = f->name;
        SCOPED_TRACE(fmt::format("{} {} {}: {}{}", d->info().id, canary->id(), f->name, fi.verdict, fi.message));
        ASSERT_NE(fi.status, audit::Status::error);
        scalar::CompiledCode code;
        code.learn(audit::to_json(fi));
        EXPECT_TRUE(code.empty());
        if (canary->id() != "scalar.compiler.contraction" || fi.status != audit::Status::ok) continue;
        // The G70 keeps binary16 products in binary32 registers: told apart from a fusion.
        if (d->info().id.starts_with("ref:nvidia-g70") && f == &model::binary16) {
          EXPECT_TRUE(fi.parameters["contracted"].is_null());
        } else {
          EXPECT_EQ(fi.parameters["contracted"], false);
        }
      }
  }
  EXPECT_GE(devices, 6);
}

// Random units of the model, with wider registers or not, never make a canary claim a compiler.
TEST(CompilerCanaries, SilentOnRandomUnits) {
  std::mt19937_64 rng(testing::drawn_seed(20261129));
  const int n = testing::drawn_count(40, 400);
  for (int i = 0; i < n; ++i) {
    const model::Format& f = i % 2 ? model::binary16 : model::binary32;
    const model::ScalarUnit hidden = testing::random_unit_with_registers(rng, f);
    backends::ReferenceDevice device(
        backends::Profile{"blind", "blind device", "test", "hidden", testing::device_units(hidden), {}, {}, {}});
    scalar::CompiledCode code;
    for (const model::Format* g : device.caps().formats)
      for (const audit::ScalarProbe* canary : scalar::canaries()) {
        if (!canary->applies(*g)) continue;
        audit::Finding fi = canary->run(device, *g, {audit::Tier::quick, rng()});
        fi.probe = canary->id();
        fi.format = g->name;
        ASSERT_EQ(fi.status, audit::Status::ok) << fi.message;
        code.learn(audit::to_json(fi));
        EXPECT_TRUE(code.empty()) << "unit " << i << ": " << fi.verdict;
      }
  }
}

// (On a unit whose fma rounds twice, as ati-r520's, a contraction changes nothing, and nothing is seen.)
TEST(CompilerCanaries, AContractingCompilerIsSeen) {
  for (const char* id : {"ieee-binary32", "ieee-binary16", "ieee-binary64"}) {
    Compiled device(testing::reference_device(id), Compiler::contracting);
    for (const model::Format* f : device.caps().formats) {
      const scalar::ContractionCanary canary;
      audit::Finding fi = canary.run(device, *f, quick());
      fi.probe = canary.id();
      fi.format = f->name;
      SCOPED_TRACE(fmt::format("{} {}: {}", id, f->name, fi.verdict));
      ASSERT_EQ(fi.status, audit::Status::ok);
      EXPECT_EQ(fi.parameters["contracted"], true);
      EXPECT_GT(fi.parameters["one_rounding"].get<int>(), 0);
      EXPECT_FALSE(fi.observations.empty());
      scalar::CompiledCode code;
      code.learn(audit::to_json(fi));
      EXPECT_NE(code.altered(scalar::compound(Node::mul, Node::sub, *f)), "");
      EXPECT_EQ(code.altered(scalar::compound(Node::mul, Node::mul, *f)), "");
      EXPECT_EQ(code.altered(scalar::compound(Node::add, Node::add, *f)), "");
    }
  }
}

TEST(CompilerCanaries, AFoldingCompilerIsSeen) {
  backends::Device& plain = testing::reference_device("ieee-binary16");
  ASSERT_TRUE(plain.caps().has(model::binary32));
  Compiled device(plain, Compiler::folding);
  const scalar::NarrowingCanary canary;
  audit::Finding fi = canary.run(device, model::binary16, quick());
  fi.probe = canary.id();
  fi.format = "binary16";
  ASSERT_EQ(fi.status, audit::Status::ok) << fi.message;
  EXPECT_EQ(fi.parameters["from"]["binary32"]["folded"], true) << fi.verdict;
  EXPECT_EQ(fi.parameters["from"]["binary32"]["differ"], fi.parameters["from"]["binary32"]["cases"]);
  scalar::CompiledCode code;
  code.learn(audit::to_json(fi));
  backends::ExprBuilder e(model::binary32, 2);
  e.cvt(e.op(Node::mul, e.in(0), e.in(1)), model::binary16);
  EXPECT_NE(code.altered(e.done(&model::binary16)), "");
  EXPECT_EQ(code.altered(backends::conversion(model::binary32, model::binary16)), "");
  EXPECT_EQ(code.altered(scalar::compound(Node::mul, Node::add, model::binary32)), "");
}

// Under a contracting compiler, every finding of a probe whose expressions multiply then add states
// nothing of the unit and says why; every other finding is the plain device's.
TEST(CompilerCanaries, AProbeOfContractedExpressionsStatesNothing) {
  backends::Device& plain = testing::reference_device("ieee-binary32");
  Compiled device(plain, Compiler::contracting);
  audit::RunSettings settings;
  settings.suite = "scalar";
  settings.tier = audit::Tier::quick;
  settings.probes = {"scalar.paranoia.*", "scalar.register.*", "scalar.compiler.*"};
  audit::ResultDocument as_compiled(device, "test", settings.to_json()), as_is(plain, "test", settings.to_json());
  audit::run_scalar_suite(device, settings, as_compiled);
  audit::run_scalar_suite(plain, settings, as_is);
  const auto& got = as_compiled.json()["findings"];
  const auto& want = as_is.json()["findings"];
  ASSERT_EQ(got.size(), want.size());
  int altered = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i]["probe"].get<std::string>() + " " + got[i]["verdict"].get<std::string>());
    ASSERT_EQ(got[i]["probe"], want[i]["probe"]);
    if (got[i]["probe"] == "scalar.compiler.contraction") {
      EXPECT_EQ(got[i]["parameters"]["contracted"], true);
      continue;
    }
    if (got[i]["verdict"] == want[i]["verdict"]) continue;
    ++altered;
    EXPECT_TRUE(got[i]["verdict"].get<std::string>().starts_with("inconclusive: the compiled code fuses a multiply"));
    EXPECT_EQ(got[i]["parameters"]["conclusion"], "inconclusive");
    EXPECT_TRUE(got[i]["parameters"].contains("as_measured"));
  }
  EXPECT_GT(altered, 0);
  // Nothing of the downgraded findings reached the profile: it holds at most what the plain run's does.
  for (const auto& [key, value] : as_compiled.profile()["scalar"]["binary32"].items())
    EXPECT_EQ(value, as_is.profile()["scalar"]["binary32"][key]) << key;
}

}  // namespace
}  // namespace gp

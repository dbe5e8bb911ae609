// Storage and transfer of special values (Daumas, da Graca, Defour 2006, section 2.1): subnormals,
// NaNs (signalling and quiet, with payloads and both signs) and infinities sent to the device and
// read back, first through a load and a store with no operation, then through x*1 and x+(-0), the
// operations that leave every value unchanged in IEEE arithmetic. The paper found subnormals
// replaced by zeros on both its GPUs, infinities kept, NaNs kept on NVIDIA and signalling NaNs
// quieted on ATI. Each class of value is decided apart, by hypotheses on what happens to it.
#include <fmt/format.h>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

struct Category {
  std::string name;  // "subnormals"
  std::vector<Case> cases;
  std::vector<Hypothesis> hypotheses;
  std::vector<std::string> consistent;
};

// The special values of f, by category; `extra` are the operands that follow x (1 for x*1).
std::vector<Category> categories(const Format& f, const std::vector<std::uint64_t>& extra) {
  const auto with = [&](std::uint64_t x, std::string note) {
    Case c{{x}, std::move(note)};
    c.operands.insert(c.operands.end(), extra.begin(), extra.end());
    return c;
  };
  std::vector<Category> out;
  if (f.has_subnormals() && f.man_bits > 0) {
    Category c{"subnormals", {}, {}, {}};
    const std::uint64_t mid = model::pack(f, false, (f.man_mask() & 0x5555555555555555ULL) | 1);
    for (bool neg : {false, true}) {
      c.cases.push_back(with(smallest_subnormal(f, neg), fmt::format("{}smallest subnormal", neg ? "-" : "")));
      c.cases.push_back(with(mid ^ (neg ? f.sign_mask() : 0), fmt::format("{}subnormal, alternate bits", neg ? "-" : "")));
      c.cases.push_back(with(model::pack(f, neg, f.man_mask()), fmt::format("{}largest subnormal", neg ? "-" : "")));
    }
    const auto x = [](const Case& k) { return k.operands[0]; };
    c.hypotheses = {
        {"kept", x},
        {"flushed to zero", [&f, x](const Case& k) { return model::zero(f, model::sign_of(f, x(k))).bits; }},
        {"flushed to +0", [&f](const Case&) { return model::zero(f, false).bits; }},
    };
    out.push_back(std::move(c));
  }
  if (f.has_nan()) {
    Category c{"NaNs", {}, {}, {}};
    if (f.nan == model::NanStyle::ieee && f.man_bits >= 2) {
      const std::uint64_t q = f.quiet_bit(), low = f.man_mask() >> 1;  // payload bits below the quiet bit
      for (bool neg : {false, true}) {
        const char* s = neg ? "-" : "";
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | q), fmt::format("{}qNaN, no payload", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | q | 1), fmt::format("{}qNaN, payload 1", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | q | (low & 0x5555555555555555ULL)),
                               fmt::format("{}qNaN, alternate payload", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | 1), fmt::format("{}sNaN, payload 1", s)));
        c.cases.push_back(with(model::pack(f, neg, f.inf_magnitude() | low), fmt::format("{}sNaN, full payload", s)));
      }
    } else {
      c.cases.push_back(with(model::canonical_nan(f), "NaN"));
      if (f.nan == model::NanStyle::all_ones && f.has_sign()) c.cases.push_back(with(model::pack(f, true, f.magnitude_mask()), "-NaN"));
    }
    const auto x = [](const Case& k) { return k.operands[0]; };
    c.hypotheses = {
        {"kept", x},
        {"signalling ones quieted",
         [&f, x](const Case& k) {
           return model::classify(f, x(k)) == model::Class::signaling_nan ? x(k) | (f.quiet_bit() << f.pad_bits) : x(k);
         }},
        {"made canonical", [&f](const Case&) { return model::canonical_nan(f); }},
    };
    out.push_back(std::move(c));
  }
  if (f.has_inf()) {
    Category c{"infinities", {}, {}, {}};
    c.cases.push_back(with(model::pack(f, false, f.inf_magnitude()), "+inf"));
    c.cases.push_back(with(model::pack(f, true, f.inf_magnitude()), "-inf"));
    c.hypotheses = {{"kept", [](const Case& k) { return k.operands[0]; }}};
    out.push_back(std::move(c));
  }
  return out;
}

// Runs every category through `expr`; fills `consistent` per category.
Expected<bool> run_categories(backends::Device& device, const Expr& expr, std::vector<Category>& cats,
                              audit::Finding& finding) {
  for (Category& c : cats) {
    auto sel = select(device, expr, c.cases, c.hypotheses, finding);
    if (!sel) return sel.error();
    c.consistent = sel->consistent;
  }
  return true;
}

std::string describe(const Category& c) {
  if (c.consistent.empty()) return c.name + ": altered (neither kept, quieted nor flushed)";
  return c.name + ": " + join(c.consistent, " or ");
}

// "preserve" / "flush" / "quiet" / "canonical" / "other" for the parameters.
std::string key_of(const Category& c) {
  if (c.consistent.empty()) return "other";
  const std::string& h = c.consistent.front();
  if (h == "kept") return "preserve";
  if (h == "flushed to zero" || h == "flushed to +0") return "flush";
  if (h == "signalling ones quieted") return "quiet";
  if (h == "made canonical") return "canonical";
  return "other";
}

// The transfer policy's answer, for the classes of values f has.
nlohmann::json transfer_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  nlohmann::json j = nlohmann::json::object();
  if (f.has_subnormals() && f.man_bits > 0) j["subnormals"] = u.subnormals.flush_transfer ? "flush" : "preserve";
  if (f.has_nan() && f.nan == model::NanStyle::ieee && f.man_bits >= 2) j["nan"] = u.nan.quiet_on_transfer ? "quiet" : "preserve";
  return j;
}

class TransferProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.storage.transfer"; }
  std::string_view title() const override { return "Transfer of subnormals, NaNs and infinities, no operation"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{
        {"TRANSFER (load and store, no operation)", "the transfer of special values",
         [](const nlohmann::json& a) {
           std::vector<std::string> parts;
           if (a.contains("subnormals")) parts.push_back(a["subnormals"] == "flush" ? "subnormals: flushed to zero" : "subnormals: kept");
           if (a.contains("nan")) parts.push_back(a["nan"] == "quiet" ? "NaNs: signalling ones quieted" : "NaNs: kept");
           return parts.empty() ? std::string("nothing to transfer but normal numbers") : join(parts);
         }},
        transfer_answer,
        [](const nlohmann::json& a) {
          nlohmann::json p = nlohmann::json::object();
          if (a.contains("subnormals")) p["subnormals"]["transfer"] = a["subnormals"];
          if (a.contains("nan")) p["nan"]["quiet_on_transfer"] = a["nan"] == "quiet";
          return p;
        }};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const Expr expr = backends::transfer(f);
    std::vector<Group> groups;
    for (Category& c : categories(f, {})) groups.push_back({expr, std::move(c.cases)});
    const SpaceOf space = [](const Format&) {
      Space s;
      s.subnormals = {{false, false, false}, {false, false, true}};
      s.nans = {{false, false}, {false, true}};
      return s;
    };
    audit::Finding finding;
    auto out = conclude(device, groups, candidates(device, f, space, {model::UnitRounding::ieee(model::Rounding::rne)}), question(),
                        finding, {}, false);
    if (!out) return audit::failed(out.error().message);
    // Infinities: a measurement (every unit of the model keeps them).
    if (f.has_inf()) {
      const std::vector<std::uint64_t>& inf = out->back();
      const bool kept = inf.size() == 2 && inf[0] == model::pack(f, false, f.inf_magnitude()) &&
                        inf[1] == model::pack(f, true, f.inf_magnitude());
      finding.parameters["infinities"] = kept ? "preserve" : "other";
      finding.verdict += kept ? "; infinities: kept" : "; infinities: altered";
    }
    return finding;
  }
};

class OperationProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.storage.operation"; }
  std::string_view title() const override { return "Subnormals, NaNs and infinities through x*1 and x+(-0)"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    audit::Finding finding;
    std::vector<std::string> verdicts;
    struct Op {
      Node node;
      std::uint64_t operand;
      const char* name;
      const char* key;
    };
    const Op ops[] = {{Node::mul, one(f), "x*1", "mul_one"}, {Node::add, model::zero(f, true).bits, "x+(-0)", "add_minus_zero"}};
    for (const Op& op : ops) {
      const Expr expr = backends::binary(op.node, f);
      std::vector<Category> cats = categories(f, {op.operand});
      if (auto r = run_categories(device, expr, cats, finding); !r) return audit::failed(r.error().message);
      std::vector<std::string> parts;
      for (const Category& c : cats) {
        parts.push_back(describe(c));
        finding.parameters[op.key][c.name == "NaNs" ? "nan" : c.name] = key_of(c);
      }
      verdicts.push_back(fmt::format("{}: {}", op.name, join(parts)));
    }
    finding.verdict = "OPERATIONS THAT CHANGE NOTHING: " + join(verdicts, "; ");
    return finding;
  }
};

}  // namespace

void add_storage_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const TransferProbe transfer;
  static const OperationProbe operation;
  out.push_back(&transfer);
  out.push_back(&operation);
}

}  // namespace gp::scalar

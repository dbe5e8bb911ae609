#include "tests_scalar/paranoia_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace gp::scalar::paranoia {

audit::Finding guarded(const std::function<audit::Finding()>& body) {
  try {
    return body();
  } catch (const DeviceFailure& e) {
    return audit::failed(e.error);
  }
}

bool paranoid_format(const Format& f) {
  return f.has_sign() && f.has_zero() && f.has_subnormals() && f.man_bits >= 5 && f.man_bits <= 52 &&
         f.nan == model::NanStyle::ieee;
}

u64 exact(const Format& f, std::int64_t n, int e) {
  const bool neg = n < 0;
  const u64 mag = neg ? u64(0) - u64(n) : u64(n);
  if (mag == 0) return model::zero(f, neg).bits;
  const model::Result r = model::round_pack(f, model::Options{}, neg, e, mag);
  if (r.flags != 0) throw std::logic_error(fmt::format("{} * 2^{} is not exact in {}", n, e, f.name));
  return r.bits;
}

Consts::Consts(const Format& fmt_)
    : f(fmt_),
      P(fmt_.man_bits),
      zero(exact(f, 0, 0)),
      one(exact(f, 1, 0)),
      two(exact(f, 1, 1)),
      three(exact(f, 3, 0)),
      half(exact(f, 1, -1)),
      onehalf(exact(f, 3, -1)),
      U1(exact(f, 1, -(P + 1))),
      U2(exact(f, 1, -P)),
      F9(one_minus(1)),
      B9(two_minus(1)),
      max(model::pack(f, false, f.max_finite_magnitude())),
      minnorm(model::pack(f, false, f.man_mask() + 1)),
      minsub(model::pack(f, false, 1)) {}

std::vector<Hyp> ieee_and_chopped(const Format& f) {
  return {{"ieee", model::ieee_unit(f)}, {"chopped", model::ieee_unit(f, model::Rounding::rz)}};
}

std::vector<Hyp> guard_bit_adders(const Format& f) {
  std::vector<Hyp> v;
  for (model::Rounding r : {model::Rounding::rz, model::Rounding::rne})
    for (int g = 1; g <= 3; ++g) {
      Hyp h{fmt::format("{}, {} guard bit{}, no sticky", r == model::Rounding::rz ? "chopped" : "nearest", g,
                        g > 1 ? "s" : ""),
            model::ieee_unit(f, r)};
      h.unit.add.guard_bits = g;
      v.push_back(h);
    }
  return v;
}

int compare(const Format& f, u64 a, u64 b) {
  const auto key = [&](u64 x) {
    const std::int64_t m = std::int64_t(model::magnitude_of(f, x));
    return model::sign_of(f, x) ? -m : m;
  };
  const std::int64_t ka = key(a), kb = key(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

bool same_value(const Format& f, u64 a, u64 b) {
  const bool na = model::is_nan(model::classify(f, a)), nb = model::is_nan(model::classify(f, b));
  if (na || nb) return na && nb;
  return compare(f, a, b) == 0;
}

double host_value(const Format& f, u64 x) {
  const u64 d = f.storage_bits == 64 && f.man_bits == 52 ? x : model::cvt(model::binary64, f, {}, x).bits;
  return std::bit_cast<double>(d);
}

std::string show(const Format& f, u64 x) {
  const model::Class c = model::classify(f, x);
  if (model::is_nan(c)) return "NaN";
  if (c == model::Class::infinite) return model::sign_of(f, x) ? "-inf" : "inf";
  const int digits = int(std::ceil(f.precision() * 0.30103)) + 1;
  return fmt::format("{:.{}g}", host_value(f, x), digits);
}

std::string show_pow2(const Format& f, u64 x) {
  const model::Unpacked u = model::unpack(f, x);
  if (model::is_finite_nonzero(u.cls) && std::has_single_bit(u.sig))
    return fmt::format("{}2^{}", u.neg ? "-" : "", u.exp + model::msb(u.sig));
  return show(f, x);
}

Bench::Bench(backends::Device& device, const Format& f, audit::Finding& finding, std::vector<Hyp> hyps)
    : device_(device), f_(f), finding_(finding), hyps_(std::move(hyps)), alive_(hyps_.size(), true) {
  ops_.resize(10);
  for (Node n : {Node::add, Node::sub, Node::mul, Node::div}) ops_[std::size_t(n)] = backends::binary(n, f);
  ops_[std::size_t(Node::sqrt)] = backends::unary(Node::sqrt, f);
  for (Node n : {Node::fma, Node::mad}) ops_[std::size_t(n)] = backends::ternary(n, f);
}

const Expr& Bench::op(Node n) const { return ops_.at(std::size_t(n)); }

std::vector<u64> Bench::run(const std::vector<Item>& items, bool record) {
  std::vector<u64> out(items.size());
  std::vector<const Expr*> exprs;
  for (const Item& it : items)
    if (std::find(exprs.begin(), exprs.end(), it.expr) == exprs.end()) exprs.push_back(it.expr);
  for (const Expr* e : exprs) {
    std::vector<std::size_t> idx;
    std::vector<u64> operands;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].expr != e) continue;
      if (items[i].x.size() != std::size_t(e->inputs))
        throw std::logic_error(
            fmt::format("'{}' has {} operands for {}", items[i].note, items[i].x.size(), e->to_string()));
      idx.push_back(i);
      operands.insert(operands.end(), items[i].x.begin(), items[i].x.end());
    }
    auto r = device_.scalar({e, operands});
    if (!r) throw DeviceFailure(r.error().retold(fmt::format("{}: {}", e->to_string(), r.error().message)));
    if (r->size() != idx.size())
      throw DeviceFailure(
          fmt::format("{}: the device returned {} results for {} cases", e->to_string(), r->size(), idx.size()));
    for (std::size_t k = 0; k < idx.size(); ++k) out[idx[k]] = (*r)[k];
  }
  std::vector<std::vector<u64>> predicted(hyps_.size());
  for (std::size_t h = 0; h < hyps_.size(); ++h) predicted[h] = predict(hyps_[h], items);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const Format& of = *it.expr->output_format;
    audit::Observation o;
    for (std::size_t h = 0; h < hyps_.size(); ++h) {
      const u64 p = predicted[h][i];
      const bool same =
          p == out[i] || (model::is_nan(model::classify(of, p)) && model::is_nan(model::classify(of, out[i])));
      if (!same) alive_[h] = false;
      if (record) o.predictions.emplace_back(hyps_[h].name, p);
    }
    if (!record) continue;
    o.inputs = it.x;
    o.output = out[i];
    o.input_bits = it.expr->input_format->storage_bits;
    o.output_bits = of.storage_bits;
    o.note = it.note;
    finding_.observations.push_back(std::move(o));
  }
  return out;
}

u64 Bench::run1(const Expr& e, std::vector<u64> x, std::string note) {
  return run({Item{&e, std::move(x), std::move(note)}})[0];
}

std::vector<std::string> Bench::consistent() const {
  std::vector<std::string> v;
  for (std::size_t h = 0; h < hyps_.size(); ++h)
    if (alive_[h]) v.push_back(hyps_[h].name);
  return v;
}

u64 Bench::predict(const std::string& hyp, const Item& item) const {
  for (const Hyp& h : hyps_)
    if (h.name == hyp) return predict(h, {item})[0];
  throw std::logic_error("no hypothesis " + hyp);
}

std::vector<u64> Bench::predict(const Hyp& h, const std::vector<Item>& items) {
  std::vector<const Format*> formats;
  for (const Item& it : items)
    for (const Format* f : it.expr->formats())
      if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  const std::unique_ptr<backends::Device> model = unit_device(h.unit, formats);
  std::vector<u64> out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto r = model->scalar({items[i].expr, items[i].x});
    // The model evaluates every expression the device was given: a failure is a probe bug.
    if (!r) throw std::logic_error(fmt::format("'{}' under {}: {}", items[i].note, h.name, r.error().message));
    out[i] = r->front();
  }
  return out;
}

nlohmann::json checks_json(const std::vector<Check>& checks) {
  nlohmann::json j = nlohmann::json::object();
  for (const Check& c : checks) j[c.what] = c.pass;
  return j;
}

bool all_pass(const std::vector<Check>& checks) {
  return std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.pass; });
}

std::string failures(const std::vector<Check>& checks) {
  std::vector<std::string> v;
  for (const Check& c : checks)
    if (!c.pass) v.push_back(c.what);
  return join(v, "; ");
}

}  // namespace gp::scalar::paranoia

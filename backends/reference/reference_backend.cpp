#include "backends/reference/reference_backend.hpp"

#include <fmt/format.h>

#include "model/gemm.hpp"

namespace gp::backends {

ReferenceDevice::ReferenceDevice(Profile profile) : profile_(std::move(profile)) {
  info_.id = "ref:" + profile_.name;
  info_.backend = "reference";
  info_.name = profile_.device_name;
  info_.vendor = profile_.vendor;
  info_.driver = "gpuparanoia reference model";
  info_.api = "model";
  info_.description = profile_.description;
  info_.published = profile_.published;
  for (const model::ScalarUnit& u : profile_.units) caps_.formats.push_back(&u.storage_format());
  caps_.mma = profile_.mma;
  models_ = profile_.models;
}

ReferenceDevice::ReferenceDevice(Profile profile, std::map<std::string, model::DotConfig> models)
    : ReferenceDevice(std::move(profile)) {
  for (auto& [key, config] : models) models_.insert_or_assign(key, std::move(config));
}

Expected<std::vector<std::uint64_t>> ReferenceDevice::scalar(const ScalarBatch& batch) {
  const Expr& e = *batch.expr;
  if (const std::string why = e.check(); !why.empty()) return Error{why, ErrorKind::invalid};
  if (batch.operands.size() % std::size_t(e.inputs) != 0)
    return Error{"operand count is not a multiple of the inputs", ErrorKind::invalid};
  // Resolve every node's unit once: a format the device lacks is an error, not a guess.
  std::vector<const model::ScalarUnit*> units(e.code.size());
  for (std::size_t i = 0; i < e.code.size(); ++i) {
    units[i] = unit_for(profile_, *e.format_of(i));
    if (!units[i])
      return Error{fmt::format("{} does not compute in {}", info_.id, e.format_of(i)->name), ErrorKind::unsupported};
  }
  // The first of two dependent additions runs on the unit's cascaded adder (Daumas et al. 2.3).
  const auto is_sum = [&](std::size_t i) { return e.code[i].op == Node::add || e.code[i].op == Node::sub; };
  std::vector<model::Adder> adder(e.code.size(), model::Adder::single);
  for (std::size_t i = 0; i < e.code.size(); ++i)
    if (is_sum(i))
      for (int k = 0; k < 2; ++k)
        if (is_sum(e.code[i].arg[k])) adder[e.code[i].arg[k]] = model::Adder::cascaded_first;
  const std::size_t n = batch.operands.size() / std::size_t(e.inputs);
  std::vector<std::uint64_t> result(n), r(e.code.size());
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint64_t* x = &batch.operands[t * std::size_t(e.inputs)];
    for (std::size_t i = 0; i < e.code.size(); ++i) {
      const Instr& in = e.code[i];
      const model::ScalarUnit& u = *units[i];
      const auto a = [&](int k) { return r[in.arg[k]]; };
      switch (in.op) {
        case Node::input: r[i] = model::unit_load(u, x[in.arg[0]]).bits; break;
        case Node::add: r[i] = model::unit_add(u, a(0), a(1), adder[i]).bits; break;
        case Node::sub: r[i] = model::unit_sub(u, a(0), a(1), adder[i]).bits; break;
        case Node::mul: r[i] = model::unit_mul(u, a(0), a(1)).bits; break;
        case Node::div: r[i] = model::unit_div(u, a(0), a(1)).bits; break;
        case Node::sqrt: r[i] = model::unit_sqrt(u, a(0)).bits; break;
        case Node::fma: r[i] = model::unit_fma(u, a(0), a(1), a(2)).bits; break;
        case Node::mad: r[i] = model::unit_mad(u, a(0), a(1), a(2)).bits; break;
        case Node::neg: r[i] = a(0) ^ u.format->sign_mask(); break;
        case Node::cvt: r[i] = model::unit_cvt(u, *u.format, *units[in.arg[0]]->format, a(0)).bits; break;
      }
    }
    result[t] = model::unit_store(*units.back(), r.back()).bits;
  }
  return result;
}

Expected<std::vector<std::uint64_t>> ReferenceDevice::mma(const MmaBatch& batch) {
  const MmaConfig& cfg = *batch.config;
  const model::DotConfig* model = mma_model(models_, cfg);
  if (!model) return Error{fmt::format("{} has no MMA configuration {}", info_.id, cfg.name()), ErrorKind::unsupported};
  const model::DotConfig& dot_config = *model;
  const auto n = tiles(batch);
  if (!n) return n.error();
  const std::size_t sa = std::size_t(cfg.m) * cfg.k, sb = std::size_t(cfg.k) * cfg.n, sc = std::size_t(cfg.m) * cfg.n;
  if (const std::string why = model::check(dot_config); !why.empty()) return Error{why, ErrorKind::invalid};
  // Each tile is a GEMM of one K step (the batch carries no scale factors: a scaled configuration
  // computes with none, as Dot does without them).
  std::vector<std::uint64_t> d(*n * sc);
  for (std::size_t t = 0; t < *n; ++t) {
    const model::GemmOperands g{.m = std::size_t(cfg.m),
                                .n = std::size_t(cfg.n),
                                .k = std::size_t(cfg.k),
                                .kstep = cfg.k,
                                .a = model::BitMatrix::row_major(batch.a.subspan(t * sa, sa), std::size_t(cfg.k)),
                                .b = model::BitMatrix::row_major(batch.b.subspan(t * sb, sb), std::size_t(cfg.n)),
                                .c = model::BitMatrix::row_major(batch.c.subspan(t * sc, sc), std::size_t(cfg.n)),
                                .sa = {},
                                .sb = {}};
    model::gemm(dot_config, g, model::OutBitMatrix::row_major(std::span(d).subspan(t * sc, sc), std::size_t(cfg.n)), 1);
  }
  return d;
}

ReferenceBackend::ReferenceBackend(std::vector<std::filesystem::path> files) : files_(std::move(files)) {}

Expected<std::vector<std::unique_ptr<Device>>> ReferenceBackend::enumerate() {
  std::vector<Profile> profiles = builtin_profiles();
  // Where each name comes from ("" built in): a name given twice would select two devices.
  std::map<std::string, std::string> source;
  for (const Profile& p : profiles) source.emplace(p.name, "");
  for (const auto& file : files_) {
    auto loaded = load_profile_file(file);
    if (!loaded) return loaded.error();
    for (Profile& p : *loaded) {
      const auto [it, fresh] = source.emplace(p.name, file.string());
      if (!fresh)
        return Error{fmt::format("{}: device ref:{} is also {}", file.string(), p.name,
                                 it->second.empty() ? "a built-in device" : "loaded from " + it->second),
                     ErrorKind::invalid};
      profiles.push_back(std::move(p));
    }
  }
  std::vector<std::unique_ptr<Device>> devices;
  for (Profile& p : profiles) devices.push_back(std::make_unique<ReferenceDevice>(std::move(p)));
  return devices;
}

}  // namespace gp::backends

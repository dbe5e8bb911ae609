// gpuparanoia.error_analysis and gpuparanoia.error_inputs: `gpuparanoia error` from Python
// (model/error_analysis.hpp), its report the JSON document's content (model/error_report.hpp) with
// numpy arrays, the unit stated as matmul states it (python/unit.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/error_analysis.hpp"
#include "model/error_report.hpp"
#include "python/numpy_bits.hpp"
#include "python/unit.hpp"

namespace py = pybind11;

namespace gp::python {

namespace {

// The unit the arguments state (matmul's keywords): an instruction's or a profile's configuration,
// or an algorithm whose defaults follow K.
model::ErrorUnit error_unit(const py::object& instruction, const py::object& profile, const py::object& config,
                            const py::object& algorithm, const py::object& a_format, const py::object& b_format,
                            const py::object& c_format, const py::object& d_format, const py::kwargs& parameters) {
  const Unit unit =
      resolve_unit(instruction, profile, config, algorithm, a_format, b_format, c_format, d_format, parameters, 16);
  if (algorithm.is_none()) return model::instruction_error_unit(unit.name, unit.cfg, unit.k);
  model::DotParameters p;
  for (const auto& [key, v] : parameters) p[key.cast<std::string>()] = parameter_value(key.cast<std::string>(), v);
  const model::DotConfig& c = unit.cfg;
  return model::algorithm_error_unit(c.algorithm, *c.a, *c.b, *c.c, *c.d, p);
}

model::ErrorDistribution distribution_of(const std::string& name) {
  const auto* d = model::find_error_distribution(name);
  if (!d) {
    std::string known;
    for (const auto& x : model::error_distributions()) known += (known.empty() ? "" : ", ") + std::string(x.name);
    throw py::value_error("distribution: unknown '" + name + "' (" + known + ")");
  }
  return d->id;
}

// what_if=: a str "KEY=VALUE[,KEY=VALUE]" or a dict {key: value}, or a list of them.
std::vector<model::WhatIf> what_ifs_of(const py::object& v) {
  std::vector<model::WhatIf> out;
  if (v.is_none()) return out;
  const auto one = [&](const py::handle& x) {
    if (py::isinstance<py::str>(x)) {
      std::string why;
      auto w = model::parse_what_if(x.cast<std::string>(), why);
      if (!w) throw py::value_error(why.substr(why.find(' ') + 1));
      out.push_back(std::move(*w));
    } else if (py::isinstance<py::dict>(x)) {
      model::WhatIf w;
      for (const auto& [key, value] : x.cast<py::dict>()) {
        const std::string k = py::str(key);
        w.parameters[k] = parameter_value(k, value);
        std::string text = py::isinstance<py::str>(value) ? value.cast<std::string>() : std::string(py::repr(value));
        if (value.is_none()) text = "none";
        if (py::isinstance<py::bool_>(value)) text = value.cast<bool>() ? "true" : "false";
        w.label += (w.label.empty() ? "" : ",") + k + "=" + text;
      }
      out.push_back(std::move(w));
    } else {
      throw py::type_error("what_if: a str 'KEY=VALUE[,KEY=VALUE]', a dict, or a list of them");
    }
  };
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    for (const py::handle x : v) one(x);
  } else {
    one(v);
  }
  return out;
}

py::array_t<double> values(const std::vector<double>& v, py::ssize_t rows = 0) {
  py::array_t<double> a(py::ssize_t(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  if (rows > 0) a.resize({rows, py::ssize_t(v.size()) / rows});
  return a;
}

py::dict error_analysis(const py::object& instruction, const py::object& profile, const py::object& config,
                        const py::object& algorithm, const py::object& a_format, const py::object& b_format,
                        const py::object& c_format, const py::object& d_format, const py::object& ks, int k_max,
                        int trials, std::uint64_t seed, const py::object& distributions, const py::object& what_if,
                        double lambda, const py::object& threads, bool samples, const py::kwargs& parameters) {
  const model::ErrorUnit u =
      error_unit(instruction, profile, config, algorithm, a_format, b_format, c_format, d_format, parameters);
  model::ErrorRequest r;
  if (!ks.is_none()) {
    r.ks = ks.cast<std::vector<int>>();
  } else {
    if (k_max < u.k_min)
      throw py::value_error("k_max " + std::to_string(k_max) + " is below the unit's K = " + std::to_string(u.k_min));
    for (long k = u.k_min; k <= k_max; k *= 2) r.ks.push_back(int(k));
  }
  if (distributions.is_none()) {
    for (const auto& d : model::error_distributions())
      if (model::default_distribution(d.id)) r.distributions.push_back(d.id);
  } else {
    for (const std::string& name : distributions.cast<std::vector<std::string>>())
      r.distributions.push_back(distribution_of(name));
  }
  r.what_ifs = what_ifs_of(what_if);
  r.trials = trials;
  r.seed = seed;
  if (!(lambda > 0)) throw py::value_error("lambda_: a positive number");
  r.lambda = lambda;
  if (!threads.is_none()) {
    const long t = threads.cast<long>();
    if (t < 1) throw py::value_error("threads: a positive int");
    r.threads = unsigned(t);
  }
  if (const std::string why = model::check(u, r); !why.empty()) throw py::value_error(why);
  model::ErrorReport rep;
  {
    py::gil_scoped_release release;
    rep = model::analyse_error(u, r);
  }
  // The JSON document's content, its statistics as numpy arrays (NaN for null).
  py::dict out = py::module_::import("json").attr("loads")(model::error_json(u, rep).dump());
  out["ks"] = py::array_t<std::int64_t>(py::ssize_t(rep.ks.size()),
                                        std::vector<std::int64_t>(rep.ks.begin(), rep.ks.end()).data());
  py::list series = out["series"];
  for (std::size_t i = 0; i < rep.series.size(); ++i) {
    const model::ErrorSeries& s = rep.series[i];
    py::dict d = series[i];
    d["max_rel"] = values(s.max_rel);
    d["mean_rel"] = values(s.mean_rel);
    d["mean_signed_rel"] = values(s.mean_signed_rel);
    d["correctly_rounded"] = values(s.correctly_rounded);
    d["max_normwise"] = values(s.max_normwise);
    if (!d["bound_deterministic"].is_none()) d["bound_deterministic"] = values(s.bound_deterministic);
    if (!d["bound_probabilistic"].is_none()) d["bound_probabilistic"] = values(s.bound_probabilistic);
    if (samples) {
      const auto rows = py::ssize_t(rep.ks.size());
      d["d"] = values(s.trial_d, rows);
      d["exact"] = values(s.trial_exact, rows);
      d["rel"] = values(s.trial_rel, rows);
      d["normwise"] = values(s.trial_normwise, rows);
    }
  }
  return out;
}

py::dict error_inputs(int k, const std::string& distribution, int trial, std::uint64_t seed,
                      const py::object& instruction, const py::object& profile, const py::object& config,
                      const py::object& algorithm, const py::object& a_format, const py::object& b_format,
                      const py::object& c_format, const py::object& d_format, bool bits, const py::kwargs& parameters) {
  const model::ErrorUnit u =
      error_unit(instruction, profile, config, algorithm, a_format, b_format, c_format, d_format, parameters);
  if (k < 1 || (u.kstep > 0 && k % u.kstep != 0))
    throw py::value_error("k: a positive multiple of the unit's K = " + std::to_string(u.kstep));
  if (trial < 0) throw py::value_error("trial: 0 or more");
  const model::DotConfigOrError cfg = u.variant(u.kstep > 0 ? u.kstep : k, {});
  if (!cfg.config) throw py::value_error(cfg.error);
  const model::DotConfig& c = *cfg.config;
  const model::ErrorInputs in = model::error_inputs(c, u.kstep, distribution_of(distribution), k, trial, seed);
  py::dict out;
  const py::ssize_t n = k;
  out["a"] = array_of(in.a, {n}, *c.a, bits);
  out["b"] = array_of(in.b, {n}, *c.b, bits);
  out["c"] = array_of({in.c}, {}, *c.c, bits);
  if (c.scale) {
    out["a_scale"] = array_of(in.scale_a, {py::ssize_t(in.scale_a.size())}, *c.scale, bits);
    out["b_scale"] = array_of(in.scale_b, {py::ssize_t(in.scale_b.size())}, *c.scale, bits);
  }
  return out;
}

const char* const kErrorAnalysisDoc =
    R"(What a unit's arithmetic costs, as `gpuparanoia error` reports it (README, Error analysis).

For each K and input distribution, `trials` dot products of K products are computed by the unit
chained as a GEMM kernel chains its instruction (each call's d the next call's c), by a binary32
FMA chain and by numpy's pairwise binary32 sum (np.add.reduce of c and the binary32 products), and
measured against the exact result. The unit is stated as matmul states it.

Parameters
----------
instruction : str or None
    An instruction by its id, e.g. 'hopper:HMMA.16816.F32' (instructions() lists them).
profile : str, os.PathLike, dict or None
    A device profile or result whose MMA configuration (config=) is the unit.
config : str or None
    profile='s MMA configuration, by name or by its instruction.
algorithm : str or None
    An algorithm (sfma gps fda cofda gdfs fdrda cofdrda gfdrda cogfdrda tree ocfda), one call taking
    all K products, with its formats and **parameters.
a_format, b_format, c_format, d_format : str or None
    algorithm='s formats.
ks : list of int or None
    The K values; None: powers of two from the unit's K to k_max.
k_max : int
    The largest K of the default list.
trials : int
    Dot products per K and distribution.
seed : int
    The inputs' seed: error_inputs() gives any trial's inputs.
distributions : list of str or None
    normal, uniform-positive, cancellation, ml (None: these four), large-products.
what_if : str, dict, list or None
    Variants of the unit: 'out_rounding=rne', {'F': 26}, or a list of them.
lambda_ : float
    The probabilistic bound's lambda.
threads : int or None
    The most worker threads; None: one per core.
samples : bool
    Add each trial's d, exact result (binary64), relative error and normwise error to every series,
    arrays of shape (len(ks), trials).
**parameters
    algorithm='s parameters, named as matmul names them.

Returns
-------
dict
    The JSON document of `gpuparanoia error --json` (schema gpuparanoia-error/1): ks and every
    statistic as numpy arrays (NaN where the JSON has null).

Raises
------
ValueError
    Not exactly one unit; an unknown distribution, what-if key or value; a K that is no multiple of
    the unit's; trials below 1.
TypeError
    An argument of the wrong type.)";

const char* const kErrorInputsDoc =
    R"(The inputs of one trial of error_analysis(): a and b (K each) and c, in the unit's formats.

Parameters
----------
k : int
    K, a multiple of the unit's K.
distribution : str
    normal, uniform-positive, cancellation, ml or large-products.
trial : int
    The trial's index, from 0.
seed : int
    error_analysis()'s seed.
instruction, profile, config, algorithm, a_format, b_format, c_format, d_format
    The unit, as error_analysis() takes it.
bits : bool
    Raw bits even where numpy has the format.
**parameters
    algorithm='s parameters.

Returns
-------
dict
    a, b (shape (K,)), c (shape ()), and a_scale, b_scale where the unit takes scale factors: values
    (float16, float32, float64) where numpy has the format, else raw bits.)";

}  // namespace

void register_error_analysis(py::module_& m) {
  m.def("error_analysis", &error_analysis, kErrorAnalysisDoc, py::kw_only(), py::arg("instruction") = py::none(),
        py::arg("profile") = py::none(), py::arg("config") = py::none(), py::arg("algorithm") = py::none(),
        py::arg("a_format") = py::none(), py::arg("b_format") = py::none(), py::arg("c_format") = py::none(),
        py::arg("d_format") = py::none(), py::arg("ks") = py::none(), py::arg("k_max") = 65536, py::arg("trials") = 20,
        py::arg("seed") = 1, py::arg("distributions") = py::none(), py::arg("what_if") = py::none(),
        py::arg("lambda_") = 6.0, py::arg("threads") = py::none(), py::arg("samples") = false);
  m.def("error_inputs", &error_inputs, kErrorInputsDoc, py::arg("k"), py::arg("distribution"), py::arg("trial"),
        py::kw_only(), py::arg("seed") = 1, py::arg("instruction") = py::none(), py::arg("profile") = py::none(),
        py::arg("config") = py::none(), py::arg("algorithm") = py::none(), py::arg("a_format") = py::none(),
        py::arg("b_format") = py::none(), py::arg("c_format") = py::none(), py::arg("d_format") = py::none(),
        py::arg("bits") = false);
}

}  // namespace gp::python

// The extension `gpuparanoia._core`, which the package `gpuparanoia` re-exports (python/gpuparanoia/):
// the reference model's MMA units as a numpy matmul (README, From Python). Arrays are converted to raw bits of the
// unit's formats under the GIL, every check done there; the dot products then run on worker threads with the GIL
// released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "audit/report/compare.hpp"
#include "audit/report/graphviz.hpp"
#include "audit/report/report.hpp"
#include "audit/report/result_check.hpp"
#include "backends/reference/profile.hpp"
#include "model/dot_parameters.hpp"
#include "model/gemm.hpp"
#include "model/mma_instructions.hpp"
#include "model/ops.hpp"
#include "model/summation_tree.hpp"
#include "model/scalar_unit.hpp"
#include "python/numpy_bits.hpp"
#include "python/unit.hpp"
#include "tests_mma/identify/fit.hpp"

namespace py = pybind11;

namespace gp::python {

namespace {

using model::DotConfig;
using model::Format;

}  // namespace

model::DotParameterValue parameter_value(const std::string& key, const py::handle& v) {
  if (v.is_none()) return std::monostate{};
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow) return v.cast<double>();  // refused by the model with the value named
    return std::int64_t(i);
  }
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::vector<std::string> out;
    for (const py::handle x : v) {
      if (!py::isinstance<py::str>(x))
        throw py::type_error(key + ": a list of strings, found " + std::string(py::repr(x)));
      out.push_back(x.cast<std::string>());
    }
    return out;
  }
  throw py::type_error(key + ": None, a bool, an int, a str or a list of str, not " +
                       std::string(py::str(v.get_type().attr("__name__"))));
}

namespace {

// Python objects and nlohmann's JSON, through Python's json module (a NaN or another value JSON
// cannot hold is a ValueError).
nlohmann::json to_json(const py::handle& v, const char* key) {
  std::string text;
  try {
    text = py::str(py::module_::import("json").attr("dumps")(v, py::arg("allow_nan") = false));
  } catch (py::error_already_set& e) {
    throw py::value_error(std::string(key) + ": not a JSON document: " + std::string(py::str(e.value())));
  }
  return nlohmann::json::parse(text);
}
py::object from_json(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// The profiles a profile= argument or profile() names: a dict (a profile or a result document, or
// a list of them), a path (str or os.PathLike) of a profile or result file, or a built-in device's
// name (with or without "ref:"). ValueError naming the file and key for what does not load.
std::vector<backends::Profile> profiles_of(const py::handle& v, const char* key) {
  if (py::isinstance<py::dict>(v) || py::isinstance<py::list>(v)) {
    auto p = backends::parse_profiles(to_json(v, key), key);
    if (!p) throw py::value_error(p.error().message);
    return std::move(*p);
  }
  const bool path_like = py::hasattr(v, "__fspath__");
  if (!py::isinstance<py::str>(v) && !path_like)
    throw py::type_error(std::string(key) + ": a profile dict, a file's path or a built-in device's name, not " +
                         std::string(py::str(v.get_type().attr("__name__"))));
  const std::string text = py::str(py::module_::import("os").attr("fspath")(v));
  std::error_code ec;
  if (path_like || std::filesystem::exists(text, ec)) {
    auto p = backends::load_profile_file(text);
    if (!p) throw py::value_error(p.error().message);
    return std::move(*p);
  }
  if (auto p = backends::builtin_profile(text.starts_with("ref:") ? text.substr(4) : text)) return {std::move(*p)};
  std::string names;  // the built-in devices: the scalar ones, then the first instruction's
  for (const backends::Profile& p : backends::builtin_profiles()) {
    if (!p.mma.empty()) {
      names += ", and one per row of instructions(), e.g. " + p.name;
      break;
    }
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw py::value_error(std::string(key) + ": '" + text + "' is neither a file nor a built-in device (" + names + ")");
}

// One profile: a file or a list holding several is a ValueError naming them.
backends::Profile profile_of(const py::handle& v, const char* key) {
  std::vector<backends::Profile> all = profiles_of(v, key);
  if (all.size() != 1) {
    std::string names;
    for (const backends::Profile& p : all) names += (names.empty() ? "" : ", ") + p.name;
    throw py::value_error(std::string(key) + ": holds " + std::to_string(all.size()) + " profiles (" + names +
                          "); pass one of them, e.g. gpuparanoia.profile(path)[0]");
  }
  return std::move(all[0]);
}

// The MMA configuration config= names in a profile (its `config` key or its instruction); None
// when the profile has exactly one.
Unit profile_unit(const backends::Profile& p, const py::object& config) {
  if (!config.is_none() && !py::isinstance<py::str>(config))
    throw py::type_error("config: a str such as '16x8x16:binary16,binary16,binary32,binary32'");
  const std::string want = config.is_none() ? "" : config.cast<std::string>();
  std::string known;
  for (const backends::MmaConfig& m : p.mma) {
    known += (known.empty() ? "" : ", ") + m.name() + (m.instruction.empty() ? "" : " (" + m.instruction + ")");
    if (want.empty() ? p.mma.size() == 1 : want == m.name() || want == m.instruction) {
      const model::DotConfig* cfg = backends::mma_model(p.models, m);
      if (!cfg) break;  // not reached: a loaded configuration has its model, a built-in one its row
      return {*cfg, m.k, "ref:" + p.name + " " + m.name()};
    }
  }
  if (p.mma.empty()) throw py::value_error("profile ref:" + p.name + " has no MMA configuration");
  throw py::value_error(want.empty() ? "config: profile ref:" + p.name + " has " + std::to_string(p.mma.size()) +
                                           " MMA configurations, name one: " + known
                                     : "config: profile ref:" + p.name + " has no configuration '" + want +
                                           "' (it has " + known + ")");
}

const Format& format_arg(const char* key, const py::object& v) {
  if (v.is_none()) throw py::value_error(std::string("algorithm= needs ") + key);
  if (!py::isinstance<py::str>(v)) throw py::type_error(std::string(key) + ": a format name (str)");
  return named_format(v.cast<std::string>(), key);
}

}  // namespace

Unit resolve_unit(const py::object& instruction, const py::object& profile, const py::object& config,
                  const py::object& algorithm, const py::object& a_format, const py::object& b_format,
                  const py::object& c_format, const py::object& d_format, const py::kwargs& parameters, int k) {
  if (int(!instruction.is_none()) + int(!profile.is_none()) + int(!algorithm.is_none()) != 1)
    throw py::value_error(
        "matmul needs one of instruction= (a row of gpuparanoia.instructions()), profile= (with "
        "config=) or algorithm=");
  if (!config.is_none() && profile.is_none()) throw py::value_error("config= names a configuration of profile=");
  if (algorithm.is_none()) {
    const std::string id =
        !instruction.is_none() && py::isinstance<py::str>(instruction) ? instruction.cast<std::string>() : "";
    std::string extra;
    for (const auto& [key, v] : {std::pair<const char*, const py::object*>{"a_format", &a_format},
                                 {"b_format", &b_format},
                                 {"c_format", &c_format},
                                 {"d_format", &d_format}})
      if (!v->is_none()) extra += (extra.empty() ? "" : ", ") + std::string(key);
    for (const auto& item : parameters) extra += (extra.empty() ? "" : ", ") + item.first.cast<std::string>();
    if (!extra.empty())
      throw py::value_error(extra + ": the formats and parameters of " +
                            (id.empty() ? "a profile's configuration" : id) +
                            " are its own; they belong to algorithm=");
    if (!profile.is_none()) return profile_unit(profile_of(profile, "profile"), config);
    if (!py::isinstance<py::str>(instruction))
      throw py::type_error("instruction: a str such as 'hopper:HMMA.16816.F32'");
    const model::MmaInstruction* ins = model::find_mma_instruction(id);
    if (!ins)
      throw py::value_error("unknown instruction '" + id +
                            "' (arch:name, e.g. hopper:HMMA.16816.F32; gpuparanoia.instructions() lists them)");
    return {ins->config, ins->k, id};
  }
  if (!py::isinstance<py::str>(algorithm)) throw py::type_error("algorithm: a str such as 'fda'");
  const std::string alg_name = algorithm.cast<std::string>();
  const auto alg = model::find_mma_algorithm(alg_name);
  if (!alg) {
    std::string known;
    for (model::MmaAlgorithm x : model::all_mma_algorithms) known += std::string(model::name(x)) + " ";
    throw py::value_error("unknown algorithm '" + alg_name + "' (known: " + known + "tree ocfda)");
  }
  const Format &a = format_arg("a_format", a_format), &b = format_arg("b_format", b_format),
               &c = format_arg("c_format", c_format), &d = format_arg("d_format", d_format);
  model::DotParameters p;
  for (const auto& [key, v] : parameters) {
    const std::string name = key.cast<std::string>();
    p[name] = parameter_value(name, v);
  }
  // The tree fixes its own K (0: the tree's); the other algorithms take all of K at once.
  const model::DotConfigOrError cfg =
      model::dot_config_from_parameters(*alg, a, b, c, d, *alg == model::MmaAlgorithm::tree ? 0 : k, p);
  if (!cfg.config) throw py::value_error(cfg.error);
  return {*cfg.config, cfg.config->tree ? cfg.config->tree->k : 0, alg_name};
}

namespace {

// round_inputs=: None (values must be exact) or 'rne'.
bool round_inputs_of(const py::object& v) {
  if (v.is_none()) return false;
  if (!py::isinstance<py::str>(v) || v.cast<std::string>() != "rne")
    throw py::value_error("round_inputs: 'rne' or None, not " + std::string(py::repr(v)));
  return true;
}

// The docstrings: numpy's layout (Parameters, Returns, Raises), after the signature pybind11 writes
// from the arguments. python/gpuparanoia/_core.pyi types the same arguments.
const char* const kMatmulDocHead =
    R"(D = C + A B as the reference model computes it, bit for bit as `gpuparanoia model dot`.

The unit is an MMA instruction (instruction=), a device profile's MMA configuration (profile=,
config=), or an algorithm with its formats and parameters (algorithm=, a_format ... d_format,
**parameters): exactly one of instruction=, profile=, algorithm=. With instruction= or profile=,
K must be a multiple of the instruction's K: a longer K chains the instruction in order over K as a
GEMM kernel does, the partial result (in d's format) becoming the next instruction's c. With
algorithm=, one evaluation takes all K products (its `block` parameter chains inside it, and no
fused block holds more than 1024), the tree algorithm its tree's K. The dot products run on worker
threads with the GIL released.

Parameters
----------
a, b : array_like
    A (M x K) and B (K x N). Arrays of unsigned integers are raw bit patterns of the operand's
    format (fp6 and fp4 in the low bits of a byte, tf32 in 32 bits); float16, float32 and float64
    arrays are values, which must be exact in the operand's format unless round_inputs='rne'.
c : array_like or None
    C (M x N), as a and b; None: zeros (+0), refused where c's format has no zero.
instruction : str or None
    An instruction by its id, arch:name, e.g. 'hopper:HMMA.16816.F32': any row of instructions()
    (`gpuparanoia model dot --list`).
profile : str, os.PathLike, dict or None
    A device: a profile or result file (a path), its dict (profile() reads one), or a built-in
    device's name (with or without 'ref:'). Its MMA configuration computes with the model the
    profile gives it (an audit's identified algorithm and parameters).
config : str or None
    profile='s MMA configuration, by name ('16x8x16:binary16,binary16,binary32,binary32') or by
    its instruction; not needed where the profile has only one.
algorithm : str or None
    sfma gps fda cofda gdfs fdrda cofdrda gfdrda cogfdrda tree ocfda.
a_format, b_format, c_format, d_format : str or None
    algorithm='s formats by name (formats() lists them), each required with it; an instruction's
    and a profile's are their own.
a_scale, b_scale : array_like or None
    The block scale factors of the MX and NVFP4 units (required there, refused elsewhere), raw bits
    or values of the scale format: a_scale M x S and b_scale S x N, S = K / the scale block.
threads : int or None
    The most worker threads, a positive int; None: one per core.
round_inputs : 'rne' or None
    'rne' rounds values to nearest even into the operand's format; None refuses inexact ones.
bits : bool
    Return raw bits even where numpy has d's format.
**parameters
)";
// The keywords' list, which matmul_doc() writes from the table (model/dot_parameters.hpp), ends it.
const char* const kMatmulDocTail = R"(

Returns
-------
numpy.ndarray
    D (M x N): float32, float16 or float64 where numpy has d's format, else raw bits (unsigned
    integers of d's storage width).

Raises
------
ValueError
    Not exactly one of instruction=, profile=, algorithm=; an unknown instruction, algorithm,
    format or configuration, a missing format, an unknown parameter or one out of its range;
    shapes that do not multiply, a K that is not a multiple of the unit's; a value not exact in
    its format or a bit pattern wider than it (the first, by index); missing or misshapen scale
    factors; a profile that does not load; threads= not a positive int.
TypeError
    An array that is neither values nor raw bits (signed integers, bool, complex, objects, a
    big-endian dtype); a name or parameter of the wrong type.)";

// The docstring, its keywords indented and wrapped within 98 columns.
std::string matmul_doc() {
  std::string out = kMatmulDocHead, line = "    algorithm='s parameters, named as the profiles' MMA entries name them:";
  const auto names = model::dot_parameter_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string word = std::string(names[i]) + (i + 1 < names.size() ? "," : ".");
    if (line.size() + 1 + word.size() > 98) {
      out += line + "\n";
      line = "    " + word;
    } else {
      line += " " + word;
    }
  }
  return out + line + kMatmulDocTail;
}

py::array matmul(const py::object& a, const py::object& b, const py::object& c, const py::object& instruction,
                 const py::object& profile, const py::object& config, const py::object& algorithm,
                 const py::object& a_format, const py::object& b_format, const py::object& c_format,
                 const py::object& d_format, const py::object& a_scale, const py::object& b_scale,
                 const py::object& threads, const py::object& round_inputs, bool bits, const py::kwargs& parameters) {
  const bool round = round_inputs_of(round_inputs);
  const Operand A(a, "a"), B(b, "b");
  A.require_matrix();
  B.require_matrix();
  const py::ssize_t M = A.rows(), K = A.cols(), N = B.cols();
  if (B.rows() != K || K == 0)
    throw py::value_error("a is " + A.shape_text() + " and b is " + B.shape_text() +
                          ": matmul needs a M x K and b K x N with K > 0");
  const Unit unit =
      resolve_unit(instruction, profile, config, algorithm, a_format, b_format, c_format, d_format, parameters, int(K));
  const DotConfig& cfg = unit.cfg;
  const int kstep = unit.k > 0 ? unit.k : int(K);
  if (K % kstep != 0)
    throw py::value_error("a is " + A.shape_text() + " and b is " + B.shape_text() + ": K = " + std::to_string(K) +
                          " is not a multiple of " + unit.name + "'s K = " + std::to_string(kstep));
  std::optional<Operand> C;
  if (c.is_none() && !cfg.c->has_zero())
    throw py::value_error("c is required: " + std::string(cfg.c->name) + ", c's format, has no zero");
  if (!c.is_none()) {
    C.emplace(c, "c");
    C->require_matrix();
    if (C->rows() != M || C->cols() != N)
      throw py::value_error("c is " + C->shape_text() + ", a " + A.shape_text() + " and b " + B.shape_text() +
                            ": c must be " + std::to_string(M) + " x " + std::to_string(N));
  }
  // Scale factors: scale_count per evaluation, one row of them per row of a and column of b.
  const int per_step = model::scale_count(cfg, kstep);
  const py::ssize_t S = per_step * (K / kstep);
  std::optional<Operand> SA, SB;
  if (cfg.scale) {
    if (a_scale.is_none() || b_scale.is_none())
      throw py::value_error(unit.name + " takes block scale factors: a_scale (M x " + std::to_string(S) +
                            ") and b_scale (" + std::to_string(S) + " x N) in " + std::string(cfg.scale->name));
    SA.emplace(a_scale, "a_scale");
    SB.emplace(b_scale, "b_scale");
    SA->require_matrix();
    SB->require_matrix();
    if (SA->rows() != M || SA->cols() != S || SB->rows() != S || SB->cols() != N)
      throw py::value_error("a_scale is " + SA->shape_text() + " and b_scale " + SB->shape_text() + ": " + unit.name +
                            " with a " + A.shape_text() + " and b " + B.shape_text() + " needs " + std::to_string(M) +
                            " x " + std::to_string(S) + " and " + std::to_string(S) + " x " + std::to_string(N));
  } else if (!a_scale.is_none() || !b_scale.is_none()) {
    throw py::value_error(unit.name + " takes no scale factors (a_scale, b_scale)");
  }
  unsigned nthreads = std::max(1u, std::thread::hardware_concurrency());
  if (!threads.is_none()) {
    if (!py::isinstance<py::int_>(threads) || py::isinstance<py::bool_>(threads) || threads.cast<long long>() < 1)
      throw py::value_error("threads: a positive int or None, not " + std::string(py::repr(threads)));
    nthreads = unsigned(std::min<long long>(threads.cast<long long>(), 1024));
  }

  // The operands' bits where numpy holds them when their format is the array's own (no copy),
  // else converted into the stores; d written straight into the result.
  std::vector<std::uint64_t> stores[5];
  const model::GemmOperands g{.m = std::size_t(M),
                              .n = std::size_t(N),
                              .k = std::size_t(K),
                              .kstep = kstep,
                              .a = A.matrix(*cfg.a, round, stores[0]),
                              .b = B.matrix(*cfg.b, round, stores[1]),
                              .c = C ? C->matrix(*cfg.c, round, stores[2]) : model::BitMatrix{},
                              .sa = cfg.scale ? SA->matrix(*cfg.scale, round, stores[3]) : model::BitMatrix{},
                              .sb = cfg.scale ? SB->matrix(*cfg.scale, round, stores[4]) : model::BitMatrix{}};
  py::array d = array_for({M, N}, *cfg.d, bits);
  const model::OutBitMatrix out{static_cast<std::byte*>(d.mutable_data()), int(d.itemsize()), std::size_t(N), 1};
  {
    py::gil_scoped_release release;
    model::gemm(cfg, g, out, nthreads);
  }
  return d;
}

const char* const kScalarDoc =
    R"(One correctly rounded operation per element, bit for bit as `gpuparanoia model scalar`.

With profile=, the operation is the device's unit of that format instead, as a device program
computes it: the operands loaded into the unit's registers, the unit's operation (its adder,
multiplier, fusion, flushing and NaN rules), the result stored; rounding, ftz, saturate and
canonical_nan are then the unit's.

Parameters
----------
op : str
    add sub mul div sqrt fma cvt (cvt converts from from_format to format).
*operands : array_like
    As many as op takes (one for sqrt and cvt, three for fma, else two), broadcast together as
    numpy's arrays are: values (float16, float32, float64 arrays, exact in the operands' format
    unless round_inputs='rne') or raw bits (unsigned integer arrays). The operands' format is
    format, or cvt's from_format.
format : str
    The format of the operation and its result, by name (formats() lists them).
rounding : str or None
    rne (None: the default) rna rnz rnu rnd rno rz ru rd ra ro.
from_format : str or None
    cvt's source format, required with it and refused with the other operations.
ftz : sequence of str
    A subset of ('in', 'out'): subnormal operands read as zeros, subnormal results become zeros.
saturate : bool
    Overflow gives the largest finite value, never inf or NaN.
canonical_nan : bool
    Every NaN result is the canonical NaN.
profile : str, os.PathLike, dict or None
    A device, as matmul's profile= names one: its scalar unit of format (and of from_format).
round_inputs : 'rne' or None
    'rne' rounds values to nearest even into the operands' format; None refuses inexact ones.
bits : bool
    Return raw bits even where numpy has the format.
flags : bool
    Return each operation's IEEE flags too.

Returns
-------
numpy.ndarray, or a tuple (results, flags) with flags=True
    The results in the operands' broadcast shape as matmul returns d (float16, float32 or float64
    where numpy has the format, else raw bits); flags as uint8, the sum of 1 inexact,
    2 underflow, 4 overflow, 8 divbyzero, 16 invalid.

Raises
------
ValueError
    An unknown op, format, rounding or ftz item; not as many operands as op takes, operands that
    do not broadcast; from_format missing for cvt or given for another op; a value not exact in its
    format or a bit pattern wider than it; rounding, ftz, saturate or canonical_nan with profile=;
    a profile that does not load or has no unit of the format.
TypeError
    An operand that is neither values nor raw bits; a name of the wrong type.)";

py::object scalar(const std::string& op_name, const py::args& operands, const std::string& format,
                  const std::optional<std::string>& rounding, const py::object& from_format,
                  const std::vector<std::string>& ftz, bool saturate, bool canonical_nan, const py::object& profile,
                  const py::object& round_inputs, bool bits, bool flags) {
  const auto op = model::find_op(op_name);
  if (!op) {
    std::string known;
    for (model::Op x : model::all_ops) known += (known.empty() ? "" : " ") + std::string(model::name(x));
    throw py::value_error("unknown op '" + op_name + "' (known: " + known + ")");
  }
  const Format& f = named_format(format, "format");
  const Format* from = &f;
  if (*op == model::Op::cvt) {
    if (from_format.is_none() || !py::isinstance<py::str>(from_format))
      throw py::value_error("cvt needs from_format, the name of the source format");
    from = &named_format(from_format.cast<std::string>(), "from_format");
  } else if (!from_format.is_none()) {
    throw py::value_error("from_format applies to cvt only");
  }
  // A profile's units: the unit of the result's format, and for cvt the one that loads the source.
  std::optional<backends::Profile> prof;
  const model::ScalarUnit *unit = nullptr, *source = nullptr;
  if (!profile.is_none()) {
    if (rounding || !ftz.empty() || saturate || canonical_nan)
      throw py::value_error("rounding, ftz, saturate, canonical_nan: with profile= they are the profile's unit's");
    prof = profile_of(profile, "profile");
    for (const model::Format* x : {from, &f})
      if (!backends::unit_for(*prof, *x)) {
        std::string known;
        for (const model::ScalarUnit& u : prof->units)
          known += (known.empty() ? "" : ", ") + std::string(u.storage_format().name);
        throw py::value_error("profile ref:" + prof->name + " has no unit for " + std::string(x->name) +
                              " (it computes in " + (known.empty() ? "no format" : known) + ")");
      }
    unit = backends::unit_for(*prof, f);
    source = backends::unit_for(*prof, *from);
  }
  model::Options o;
  const auto r = model::find_rounding(rounding.value_or("rne"));
  if (!r) {
    std::string known;
    for (model::Rounding x : model::all_roundings) known += (known.empty() ? "" : " ") + std::string(model::name(x));
    throw py::value_error("rounding: unknown rounding '" + *rounding + "' (known: " + known + ")");
  }
  o.rounding = *r;
  o.saturate = saturate;
  o.canonical_nan = canonical_nan;
  for (const std::string& x : ftz) {
    if (x == "in")
      o.ftz_in = true;
    else if (x == "out")
      o.ftz_out = true;
    else
      throw py::value_error("ftz: 'in' and 'out', not '" + x + "'");
  }
  const int arity = model::arity(*op);
  if (int(operands.size()) != arity)
    throw py::value_error(op_name + " takes " + std::to_string(arity) + " operand" + (arity == 1 ? "" : "s") +
                          ", not " + std::to_string(operands.size()));
  const bool round = round_inputs_of(round_inputs);
  // Type checks first (a str is no operand), then numpy's broadcasting, which names bad shapes.
  for (std::size_t i = 0; i < operands.size(); ++i) Operand(operands[i], "operand " + std::to_string(i));
  py::tuple broadcast;
  try {
    broadcast = py::module_::import("numpy").attr("broadcast_arrays")(*operands);
  } catch (py::error_already_set& e) {
    throw py::value_error("the operands do not broadcast together: " + std::string(py::str(e.value())));
  }
  std::vector<std::vector<std::uint64_t>> in;
  std::vector<py::ssize_t> shape;
  for (std::size_t i = 0; i < broadcast.size(); ++i) {
    const Operand x(broadcast[i], "operand " + std::to_string(i));
    in.push_back(x.bits(*from, round));
    // The broadcast shape, 0-d included (ascontiguousarray makes a 0-d array 1-d).
    shape = py::cast<std::vector<py::ssize_t>>(broadcast[i].attr("shape"));
  }
  const std::size_t n = in.empty() ? 0 : in[0].size();
  std::vector<std::uint64_t> out(n);
  py::array_t<std::uint8_t> fl(flags ? shape : std::vector<py::ssize_t>{0});
  std::uint8_t* flag_out = fl.mutable_data();
  {
    py::gil_scoped_release release;
    if (unit) {
      std::uint64_t args[3] = {};
      for (std::size_t e = 0; e < n; ++e) {
        // Loads and stores raise no flags but the store's rounding into a narrower storage.
        for (int i = 0; i < arity; ++i) args[i] = model::unit_load(*source, in[std::size_t(i)][e]).bits;
        model::Result res = model::unit_evaluate(*unit, *op, {args, std::size_t(arity)}, *source->format);
        const model::Result stored = model::unit_store(*unit, res.bits);
        out[e] = stored.bits;
        if (flags) flag_out[e] = std::uint8_t(res.flags | stored.flags);
      }
    } else {
      // The model's batched evaluate(), kBatch elements at a time (their operands interleaved).
      constexpr std::size_t kBatch = 4096;
      std::vector<std::uint64_t> args(std::size_t(arity) * kBatch);
      std::vector<model::Result> res(kBatch);
      for (std::size_t start = 0; start < n; start += kBatch) {
        const std::size_t m = std::min(kBatch, n - start);
        for (std::size_t e = 0; e < m; ++e)
          for (std::size_t i = 0; i < in.size(); ++i) args[e * in.size() + i] = in[i][start + e];
        model::evaluate(*op, f, o, std::span(args).first(m * in.size()), std::span(res).first(m), *from);
        for (std::size_t e = 0; e < m; ++e) {
          out[start + e] = res[e].bits;
          if (flags) flag_out[start + e] = std::uint8_t(res[e].flags);
        }
      }
    }
  }
  py::array result = array_of(out, shape, f, bits);
  if (!flags) return result;
  return py::make_tuple(result, fl);
}

const char* const kFormatsDoc = R"(Every number format of the model (`model/format.hpp`).

Returns
-------
list of dict
    One per format: name; exp_bits, man_bits (the fraction's bits), bias; storage_bits and
    pad_bits (the container's width and its unused low bits, 13 in tf32); signed, infinities,
    nans, subnormals, zero (what its encodings hold, bools); emin and emax (the normal exponents'
    range).)";

py::list formats() {
  py::list out;
  for (const Format* f : model::all_formats()) {
    py::dict d;
    d["name"] = std::string(f->name);
    d["exp_bits"] = f->exp_bits;
    d["man_bits"] = f->man_bits;
    d["bias"] = f->bias;
    d["storage_bits"] = f->storage_bits;
    d["pad_bits"] = f->pad_bits;
    d["signed"] = f->has_sign();
    d["infinities"] = f->has_inf();
    d["nans"] = f->has_nan();
    d["subnormals"] = f->has_subnormals();
    d["zero"] = f->has_zero();
    d["emin"] = f->emin();
    d["emax"] = f->emax();
    out.append(d);
  }
  return out;
}

const char* const kProfileDoc = R"(A device profile as a dict, in the schema of profile files.

Parameters
----------
path_or_name : str, os.PathLike, dict or list
    A profile or result file (a path: a str naming an existing file, or an os.PathLike), a
    built-in device's name (ieee-binary32, nvidia-g70, hopper:HMMA.16816.F32, ...; with or without
    'ref:'), or a profile's dict (or a list of them), read and written back.

Returns
-------
dict, or list of dict for a file that lists several profiles
    name, device_name, vendor, description, scalar, mma, published: what matmul's and scalar's
    profile= take back.

Raises
------
ValueError
    A file that does not load (naming the file and key), a name that is neither a file nor a
    built-in device.
TypeError
    Neither a dict, a list, a str nor an os.PathLike.)";

// profile(path_or_name): the profile as a dict of the profile file's schema (a list for a file that
// lists several), which profile= takes back.
py::object profile(const py::object& path_or_name) {
  const std::vector<backends::Profile> all = profiles_of(path_or_name, "profile");
  if (all.size() == 1) return from_json(backends::profile_json(all[0]));
  nlohmann::json list = nlohmann::json::array();
  for (const backends::Profile& p : all) list.push_back(backends::profile_json(p));
  return from_json(list);
}

const char* const kInstructionsDoc = R"(Every MMA instruction of the model's table (`gpuparanoia model dot --list`).

Returns
-------
list of dict
    One per instruction: id (arch:name, what matmul's instruction= takes), arch, name; m, n, k
    (its shape); a_format, b_format, c_format, d_format; algorithm; scale_format and scale_block
    (None without block scales); parameters (the algorithm's, as matmul's keywords: matmul with
    algorithm=, these formats and parameters and K = k is the instruction); notes.)";

py::list instructions() {
  py::list out;
  for (const model::MmaInstruction& i : model::all_mma_instructions()) {
    const DotConfig& c = i.config;
    py::dict d;
    d["id"] = i.id();
    d["arch"] = i.arch;
    d["name"] = i.name;
    d["m"] = i.m;
    d["n"] = i.n;
    d["k"] = i.k;
    d["a_format"] = std::string(c.a->name);
    d["b_format"] = std::string(c.b->name);
    d["c_format"] = std::string(c.c->name);
    d["d_format"] = std::string(c.d->name);
    d["algorithm"] = std::string(model::name(c.algorithm));
    d["scale_format"] = c.scale ? py::object(py::str(std::string(c.scale->name))) : py::object(py::none());
    d["scale_block"] = c.scale ? py::object(py::int_(c.scale_block)) : py::object(py::none());
    // The parameters as a profile's MMA entry writes them: matmul(algorithm=, **parameters) with them
    // and K = k is the instruction.
    d["parameters"] = from_json(backends::parameters_json(c, i.k));
    d["notes"] = i.notes;
    out.append(d);
  }
  return out;
}

const char* const kFitDoc = R"(The model's candidates that reproduce dot products captured on a matrix unit.

The search of `gpuparanoia fit`: the space an audit's identification searches, less the summation
tree only a device's probe can measure. Line i is the unit's output d[i] for
c[i] + sum_k a[i, k] b[i, k].

Parameters
----------
a, b : numpy.ndarray
    N x K arrays of unsigned integers, raw bit patterns of a_format and b_format; 1 <= K <= 1024.
c, d : numpy.ndarray
    Length-N arrays of unsigned integers, raw bit patterns of c_format and d_format.
a_format, b_format, c_format, d_format : str
    The operands' formats by name (formats() lists them).
max_seconds : float
    A deadline for the search; 0: none.
threads : int
    Worker threads; 0: one per core. The GIL is released while they run.

Returns
-------
dict
    lines; complete (no bound cut the search short); candidates_checked; survivors; classes, the
    survivors grouped by their outputs on random inputs, the canonical choice first, each a dict
    of candidates (its size), algorithm, parameters, description and open (the parameters its
    members leave open); and closest, when nothing survives a whole search: the five candidates
    that mispredict the fewest lines, each with algorithm, parameters, description, mismatches.

Raises
------
ValueError
    An unknown format; shapes that do not agree, K out of range; a bit pattern wider than its
    format; max_seconds < 0.
TypeError
    An argument that is not an array of unsigned integers of its rank.)";

py::dict fit(const py::object& a, const py::object& b, const py::object& c, const py::object& d,
             const std::string& a_format, const std::string& b_format, const std::string& c_format,
             const std::string& d_format, double max_seconds, unsigned threads) {
  const auto bits_of = [](const py::object& v, const char* key, int dims) {
    auto arr = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(v);
    if (!arr || arr.ndim() != dims || !py::isinstance<py::array>(v) || py::array(v).dtype().kind() != 'u')
      throw py::type_error(std::string(key) + ": a " + std::to_string(dims) +
                           "-dimensional array of unsigned integers (raw bits)");
    return arr;
  };
  const auto A = bits_of(a, "a", 2), B = bits_of(b, "b", 2), C = bits_of(c, "c", 1), D = bits_of(d, "d", 1);
  const std::size_t n = std::size_t(A.shape(0)), k = std::size_t(A.shape(1));
  if (B.shape(0) != A.shape(0) || B.shape(1) != A.shape(1) || std::size_t(C.shape(0)) != n ||
      std::size_t(D.shape(0)) != n)
    throw py::value_error("fit: a and b must be N x K, c and d of length N");
  if (k < 1 || k > std::size_t(model::kMaxDotK))
    throw py::value_error("fit: K must lie in 1.." + std::to_string(model::kMaxDotK));
  if (!(max_seconds >= 0)) throw py::value_error("fit: max_seconds must be >= 0");
  mma::MmaConfig cfg;
  cfg.m = cfg.n = 1;
  cfg.k = int(k);
  cfg.a = &named_format(a_format, "a_format");
  cfg.b = &named_format(b_format, "b_format");
  cfg.c = &named_format(c_format, "c_format");
  cfg.d = &named_format(d_format, "d_format");
  const auto check = [](const Format& f, std::uint64_t x, const char* key) {
    if (f.storage_bits < 64 && x >> f.storage_bits)
      throw py::value_error(std::string(key) + ": " + std::to_string(x) + " is not a bit pattern of " +
                            std::string(f.name));
  };
  mma::Pool pool = mma::make_pool(cfg);
  for (std::size_t i = 0; i < n; ++i) {
    mma::DotCase x;
    x.c = C.at(i);
    check(*cfg.c, x.c, "c");
    for (std::size_t j = 0; j < k; ++j) {
      x.a.push_back(A.at(i, j));
      x.b.push_back(B.at(i, j));
      check(*cfg.a, x.a.back(), "a");
      check(*cfg.b, x.b.back(), "b");
    }
    check(*cfg.d, D.at(i), "d");
    mma::add_to(pool, cfg, x, D.at(i));
  }
  mma::Bounds bounds;
  bounds.threads = threads;
  if (max_seconds > 0)
    bounds.deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(max_seconds));
  mma::FitResult r;
  {
    py::gil_scoped_release unlocked;
    r = mma::fit(cfg, pool, bounds);
  }
  const auto entry = [&](const DotConfig& x) {
    py::dict e;
    e["algorithm"] = backends::algorithm_name(x, cfg.k);
    e["parameters"] = from_json(backends::parameters_json(x, cfg.k));
    e["description"] = mma::describe(cfg, x);
    return e;
  };
  py::dict out;
  out["lines"] = n;
  out["complete"] = r.complete();
  out["candidates_checked"] = r.checked;
  out["survivors"] = r.survivors.size();
  py::list classes, closest;
  std::vector<std::vector<DotConfig>> members(r.classes.rep.size());
  for (std::size_t i = 0; i < r.survivors.size(); ++i) members[r.classes.class_of[i]].push_back(r.survivors[i]);
  for (std::size_t i = 0; i < members.size(); ++i) {
    py::dict e = entry(r.survivors[r.classes.rep[i]]);
    e["candidates"] = members[i].size();
    e["open"] = from_json(mma::ambiguity(cfg.k, members[i]));
    classes.append(e);
  }
  for (const mma::Near& x : r.closest) {
    py::dict e = entry(x.c);
    e["mismatches"] = x.misses;
    closest.append(e);
  }
  out["classes"] = classes;
  out["closest"] = closest;
  return out;
}

const char* const kHeadlinesDoc = R"(A result's identified arithmetic, one line per format and MMA configuration.

Parameters
----------
doc : dict
    A result document.

Returns
-------
list of str
    The lines of the closing summary of `gpuparanoia run`: "binary32: add rne; mul rne; ...", and
    per MMA configuration its identified model.

Raises
------
ValueError
    A document whose keys do not have the schema's types.)";

nlohmann::json checked_result(const py::object& doc, const char* key) {
  nlohmann::json j = to_json(doc, key);
  if (const auto err = audit::check_result(j)) throw py::value_error(std::string(key) + ": " + err->text());
  return j;
}

std::vector<std::string> result_headlines(const py::object& doc) {
  return audit::headline_lines(checked_result(doc, "doc"));
}

const char* const kFindingTreeDoc = R"(The summation tree a finding of a result names, as the reports draw it.

Parameters
----------
finding : dict
    One entry of a result's findings.

Returns
-------
str or None
    The tree's text form (canonical), from the tree-shape probe's tree or an identified model whose
    algorithm is tree, when it parses over the configuration's K; None otherwise.)";

py::object finding_tree(const py::object& finding) {
  const auto tree = audit::finding_tree(to_json(finding, "finding"));
  return tree ? py::object(py::str(tree->text())) : py::object(py::none());
}

const char* const kTreeDotDoc = R"(A summation tree drawn in Graphviz's DOT (for `dot -Tsvg`), as the reports draw it.

Parameters
----------
text : str
    The tree in its text form, e.g. "((p0+p1)+p2)+c" (the tree parameter of profiles and of
    `gpuparanoia model dot --tree`); K is the number of products it names.

Returns
-------
str
    A DOT digraph: sums as circles labelled "+", products and c as boxes, each annotation beside
    its label, the root on top.

Raises
------
ValueError
    Text that is not a tree (why).)";

std::string summation_tree_dot(const std::string& text) {
  const model::TreeParse parsed = model::parse_summation_tree(text);
  if (!parsed.tree) throw py::value_error("text: " + parsed.error);
  return parsed.tree->dot();
}

const char* const kCompareDoc = R"(What differs between two result documents, as `gpuparanoia compare` reports it.

Parameters
----------
a, b : dict
    Result documents (a result JSON of `gpuparanoia run --json` or `--out`, read with json.load).

Returns
-------
dict
    a, b (each device as compare names it), compared_findings (how many findings were matched by
    probe and target), differences (a list of dict: where, a, b, the values rendered, (absent)
    where one side has none), text and markdown (compare's report in each form).

Raises
------
ValueError
    A document whose keys do not have the schema's types (the key named).)";

py::dict compare(const py::object& a, const py::object& b) {
  const audit::Comparison c = audit::compare_results(checked_result(a, "a"), checked_result(b, "b"));
  py::list differences;
  for (const audit::Difference& d : c.differences) {
    py::dict e;
    e["where"] = d.where;
    e["a"] = d.a;
    e["b"] = d.b;
    differences.append(e);
  }
  py::dict out;
  out["a"] = c.a_name;
  out["b"] = c.b_name;
  out["compared_findings"] = c.compared_findings;
  out["differences"] = differences;
  out["text"] = audit::comparison_text(c);
  out["markdown"] = audit::comparison_markdown(c);
  return out;
}

const char* const kDrawSvgDoc = R"(Graphviz's `dot` drawing a DOT file as SVG, as the reports draw summation trees.

Parameters
----------
dot_file : str or os.PathLike
    The DOT file (summation_tree_dot's text, written to a file).
svg : str or os.PathLike
    The SVG file to write.

Returns
-------
str
    An empty string when svg was written; else why not: Graphviz is not installed, dot failed or
    took too long (run without a shell; never an exception).)";

std::string draw_svg(const std::filesystem::path& dot_file, const std::filesystem::path& svg) {
  py::gil_scoped_release unlocked;  // dot runs apart; other Python threads go on
  return audit::draw_svg(dot_file, svg);
}

}  // namespace

}  // namespace gp::python

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "gpuparanoia's bit-accurate reference model of GPU arithmetic: matmul (MMA instructions, device profiles, "
      "algorithms), scalar (correctly rounded operations, a device's units), fit (a model from captured dot products), "
      "profile, formats, instructions, compare (two results, as `gpuparanoia compare`), result_headlines, "
      "finding_tree, summation_tree_dot, draw_svg (the reports' pieces, for the results site gpuparanoia.site), "
      "error_analysis and error_inputs (`gpuparanoia error`).";
  static const std::string matmul_doc = gp::python::matmul_doc();
  m.def("matmul", &gp::python::matmul, matmul_doc.c_str(), py::arg("a"), py::arg("b"), py::arg("c") = py::none(),
        py::kw_only(), py::arg("instruction") = py::none(), py::arg("profile") = py::none(),
        py::arg("config") = py::none(), py::arg("algorithm") = py::none(), py::arg("a_format") = py::none(),
        py::arg("b_format") = py::none(), py::arg("c_format") = py::none(), py::arg("d_format") = py::none(),
        py::arg("a_scale") = py::none(), py::arg("b_scale") = py::none(), py::arg("threads") = py::none(),
        py::arg("round_inputs") = py::none(), py::arg("bits") = false);
  // Keywords after *operands are keyword-only.
  m.def("scalar", &gp::python::scalar, gp::python::kScalarDoc, py::arg("op"), py::arg("format") = "binary32",
        py::arg("rounding") = py::none(), py::arg("from_format") = py::none(),
        py::arg("ftz") = std::vector<std::string>{}, py::arg("saturate") = false, py::arg("canonical_nan") = false,
        py::arg("profile") = py::none(), py::arg("round_inputs") = py::none(), py::arg("bits") = false,
        py::arg("flags") = false);
  m.def("fit", &gp::python::fit, gp::python::kFitDoc, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("d"),
        py::kw_only(), py::arg("a_format"), py::arg("b_format"), py::arg("c_format"), py::arg("d_format"),
        py::arg("max_seconds") = 0.0, py::arg("threads") = 0u);
  m.def("profile", &gp::python::profile, gp::python::kProfileDoc, py::arg("path_or_name"));
  m.def("formats", &gp::python::formats, gp::python::kFormatsDoc);
  m.def("instructions", &gp::python::instructions, gp::python::kInstructionsDoc);
  m.def("compare", &gp::python::compare, gp::python::kCompareDoc, py::arg("a"), py::arg("b"));
  m.def("result_headlines", &gp::python::result_headlines, gp::python::kHeadlinesDoc, py::arg("doc"));
  m.def("finding_tree", &gp::python::finding_tree, gp::python::kFindingTreeDoc, py::arg("finding"));
  m.def("summation_tree_dot", &gp::python::summation_tree_dot, gp::python::kTreeDotDoc, py::arg("text"));
  m.def("draw_svg", &gp::python::draw_svg, gp::python::kDrawSvgDoc, py::arg("dot_file"), py::arg("svg"));
  gp::python::register_error_analysis(m);
}

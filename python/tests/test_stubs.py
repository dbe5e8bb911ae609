# The type stubs (python/gpuparanoia/_core.pyi, beside the extension in the build tree and installed)
# held to the extension, and the package's re-export of it: the same public names; each function's parameters, their kinds and defaults as
# pybind11's signature (the docstring's first line) gives them; each documented under Parameters.
import ast
import pathlib
import re

import pytest

import gpuparanoia

STUBS = pathlib.Path(gpuparanoia._core.__file__).parent / "_core.pyi"
STUB_TREE = ast.parse(STUBS.read_text())
STUB_FUNCTIONS = {node.name: node.args for node in STUB_TREE.body if isinstance(node, ast.FunctionDef)}
# The extension's names (the package's pure-Python submodules, once imported, are its attributes too).
FUNCTIONS = sorted(n for n in dir(gpuparanoia._core) if not n.startswith("_"))


def module_arguments(name):
    return ast.parse(f"def {getattr(gpuparanoia, name).__doc__.splitlines()[0]}: ...").body[0].args


def parameters(args):
    """The parameters in order as (kind, name), kind one of '', '*', 'keyword', '**', and the
    defaults by name as values (Ellipsis where a stub leaves one out)."""
    positional = args.posonlyargs + args.args
    out = [("", a.arg) for a in positional] + ([("*", args.vararg.arg)] if args.vararg else [])
    out += [("keyword", a.arg) for a in args.kwonlyargs] + ([("**", args.kwarg.arg)] if args.kwarg else [])
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return out, {name: ast.literal_eval(d) for name, d in defaults.items()}


def kinds(params):
    """What a call sees: *args and **kwargs by kind alone (no call names them)."""
    return [(kind, None if kind.startswith("*") else name) for kind, name in params]


def test_stubs_name_what_the_module_has():
    stub_names = set(STUB_FUNCTIONS) | {
        t.id for n in STUB_TREE.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    assert sorted(n for n in stub_names if not n.startswith("_")) == FUNCTIONS


def test_package_reexports_the_extension():
    assert (pathlib.Path(gpuparanoia.__file__).parent / "py.typed").is_file()
    assert sorted(gpuparanoia.__all__) == FUNCTIONS
    for name in FUNCTIONS:
        assert getattr(gpuparanoia, name) is getattr(gpuparanoia._core, name)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_stub_parameters_and_defaults(name):
    params, defaults = parameters(module_arguments(name))
    stub_params, stub_defaults = parameters(STUB_FUNCTIONS[name])
    assert kinds(stub_params) == kinds(params)
    assert stub_defaults.keys() == defaults.keys()
    for key, value in stub_defaults.items():
        if value is not Ellipsis:
            assert (type(value), value) == (type(defaults[key]), defaults[key]), f"{name}: {key}"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_docstring_documents_each_parameter(name):
    doc = getattr(gpuparanoia, name).__doc__
    names = [(kind if kind.startswith("*") else "") + n for kind, n in parameters(STUB_FUNCTIONS[name])[0]]
    section = re.search(r"\nParameters\n-+\n(.*?)\n\n", doc, re.S)
    documented = re.findall(r"^(\S[^:\n]*?)(?: : .*)?$", section[1], re.M) if section else []
    assert [n for entry in documented for n in entry.split(", ")] == names
    assert "\nReturns\n" in doc

# Type stubs of the compiled module gpuparanoia._core (python/gpuparanoia_module.cpp, which holds the
# docstrings), beside it in the package, which py.typed marks as typed (PEP 561); the package's
# __init__.py re-exports its names. python/tests/test_stubs.py holds them to the module: the same
# names, parameters and defaults.
from collections.abc import Sequence
from os import PathLike
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

# A profile: a profile or result file's path, its dict (or a list of them), a built-in device's name.
_Profile = str | PathLike[str] | dict[str, Any] | list[dict[str, Any]]
# An algorithm's parameter, as a profile's MMA entry writes it.
_Parameter = None | bool | int | float | str | Sequence[str]

def matmul(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    c: npt.ArrayLike | None = None,
    *,
    instruction: str | None = None,
    profile: _Profile | None = None,
    config: str | None = None,
    algorithm: str | None = None,
    a_format: str | None = None,
    b_format: str | None = None,
    c_format: str | None = None,
    d_format: str | None = None,
    a_scale: npt.ArrayLike | None = None,
    b_scale: npt.ArrayLike | None = None,
    threads: int | None = None,
    round_inputs: Literal["rne"] | None = None,
    bits: bool = False,
    **parameters: _Parameter,
) -> npt.NDArray[Any]: ...
def scalar(
    op: str,
    *operands: npt.ArrayLike,
    format: str = "binary32",
    rounding: str | None = None,
    from_format: str | None = None,
    ftz: Sequence[str] = ...,
    saturate: bool = False,
    canonical_nan: bool = False,
    profile: _Profile | None = None,
    round_inputs: Literal["rne"] | None = None,
    bits: bool = False,
    flags: bool = False,
) -> Any: ...  # the results, or with flags=True a tuple (results, flags as uint8)
def fit(
    a: npt.NDArray[np.unsignedinteger[Any]],
    b: npt.NDArray[np.unsignedinteger[Any]],
    c: npt.NDArray[np.unsignedinteger[Any]],
    d: npt.NDArray[np.unsignedinteger[Any]],
    *,
    a_format: str,
    b_format: str,
    c_format: str,
    d_format: str,
    max_seconds: float = 0.0,
    threads: int = 0,
) -> dict[str, Any]: ...
# A dict, or a list of dicts for a file that holds several profiles.
def profile(path_or_name: _Profile) -> Any: ...
def formats() -> list[dict[str, Any]]: ...
def instructions() -> list[dict[str, Any]]: ...
def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]: ...
def result_headlines(doc: dict[str, Any]) -> list[str]: ...
def finding_tree(finding: dict[str, Any]) -> str | None: ...
def summation_tree_dot(text: str) -> str: ...
def draw_svg(dot_file: str | PathLike[str], svg: str | PathLike[str]) -> str: ...
# A what-if: "KEY=VALUE[,KEY=VALUE]" or {key: value}, or a list of them.
_WhatIf = str | dict[str, _Parameter]

def error_analysis(
    *,
    instruction: str | None = None,
    profile: _Profile | None = None,
    config: str | None = None,
    algorithm: str | None = None,
    a_format: str | None = None,
    b_format: str | None = None,
    c_format: str | None = None,
    d_format: str | None = None,
    ks: Sequence[int] | None = None,
    k_max: int = 65536,
    trials: int = 20,
    seed: int = 1,
    distributions: Sequence[str] | None = None,
    what_if: _WhatIf | Sequence[_WhatIf] | None = None,
    lambda_: float = 6.0,
    threads: int | None = None,
    samples: bool = False,
    **parameters: _Parameter,
) -> dict[str, Any]: ...  # the JSON document of `gpuparanoia error`, statistics as numpy arrays
def error_inputs(
    k: int,
    distribution: str,
    trial: int,
    *,
    seed: int = 1,
    instruction: str | None = None,
    profile: _Profile | None = None,
    config: str | None = None,
    algorithm: str | None = None,
    a_format: str | None = None,
    b_format: str | None = None,
    c_format: str | None = None,
    d_format: str | None = None,
    bits: bool = False,
    **parameters: _Parameter,
) -> dict[str, npt.NDArray[Any]]: ...

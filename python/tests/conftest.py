# The Python module's tests: ctest runs them on the build tree's module (its folder on PYTHONPATH:
# python_module) and on the module pip installs into a venv (python_install), the command-line
# program and the source tree named by GPUPARANOIA_BINARY and GPUPARANOIA_SOURCE_DIR.
import os
import pathlib
import subprocess

import numpy as np
import pytest

import gpuparanoia


def _env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest (python_module)")
    return value


@pytest.fixture(scope="session")
def binary():
    return _env("GPUPARANOIA_BINARY")


@pytest.fixture(scope="session")
def source_dir():
    return pathlib.Path(_env("GPUPARANOIA_SOURCE_DIR"))


@pytest.fixture(scope="session")
def formats():
    return {f["name"]: f for f in gpuparanoia.formats()}


def model_dot(binary, options, lines):
    """`gpuparanoia model dot OPTIONS` on the hex lines: d of each line as an int."""
    run = subprocess.run([binary, "model", "dot", *options], input="".join(lines), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return [int(x, 16) for x in run.stdout.split()]


def hex_line(fields):
    return " ".join(f"{int(x):x}" for x in fields) + "\n"


def storage_dtype(fmt):
    bits = fmt["storage_bits"]
    return np.uint8 if bits <= 8 else np.uint16 if bits <= 16 else np.uint32 if bits <= 32 else np.uint64

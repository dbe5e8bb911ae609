# The module as a user installs it (README, From Python): a fresh copy of the source, `pip install
# --no-build-isolation` into a new venv that sees Debian's packages (no package index), the copy and
# its build removed, then the pytest suite against the installed module. ctest runs it with the
# suite's variables (GPUPARANOIA_BINARY, GPUPARANOIA_SOURCE_DIR); exit 77 is a skip, saying why.
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
# In the venv: the package must be the installed one, and the suite runs on that very package.
RUN_SUITE = """
import pathlib, sys, sysconfig
import gpuparanoia, pytest
if pathlib.Path(gpuparanoia.__file__).parent.parent != pathlib.Path(sysconfig.get_path("platlib")):
    sys.exit(f"imported {gpuparanoia.__file__}, not the venv's")
print("install_test: imported", gpuparanoia.__file__, flush=True)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", sys.argv[1]]))
"""


def copy_source(source, dest):
    """The files git lists in the working tree (tracked, and new ones not ignored): a clone's files,
    uncommitted changes included. Without git, everything but the build folder and git's."""
    try:
        listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(source, dest, ignore=lambda d, _: ["build", ".git"] if pathlib.Path(d) == source else [])
        return
    for name in filter(None, listed.split(b"\0")):
        path = source / os.fsdecode(name)
        if path.is_file():  # not deleted in the working tree
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / os.fsdecode(name))


def step(what, command, **kwargs):
    start = time.monotonic()
    subprocess.run(command, check=True, **kwargs)
    print(f"install_test: {what}: {time.monotonic() - start:.0f} s", flush=True)


def main():
    source = pathlib.Path(os.environ["GPUPARANOIA_SOURCE_DIR"])
    missing = [m for m in ("setuptools", "wheel", "pybind11") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"install_test: skipped: {sys.executable} has no {', '.join(missing)} "
              "(python3-setuptools, python3-wheel, python3-pybind11: scripts/setup-debian)")
        return SKIP
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory(prefix="install_test.", dir=os.getcwd()) as tmp:
        tmp = pathlib.Path(tmp)
        start = time.monotonic()
        venv = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", tmp / "venv"],
                              capture_output=True, text=True)
        if venv.returncode != 0:
            print(f"install_test: skipped: {sys.executable} -m venv fails (python3-venv: scripts/setup-debian):\n"
                  + venv.stdout + venv.stderr)
            return SKIP
        print(f"install_test: venv: {time.monotonic() - start:.0f} s", flush=True)
        python = tmp / "venv" / "bin" / "python"
        copy_source(source, tmp / "src")
        step("pip install", [python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-cache-dir",
                             "--disable-pip-version-check", tmp / "src"], env=env, cwd=tmp)
        shutil.rmtree(tmp / "src")
        step("pytest", [python, "-c", RUN_SUITE, source / "python" / "tests"], env=env, cwd=tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())

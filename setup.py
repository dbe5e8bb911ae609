# The build of the Python package for pip (pyproject.toml): setuptools' build_ext runs the project's
# CMake for the extension's target alone (gpuparanoia._core) and takes the shared object it links;
# setuptools does the rest (the package's pure-Python modules, stubs and templates from
# python/gpuparanoia/, the wheel's name, tags and record).
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pybind11  # the build's (pyproject.toml), whose CMake package builds the module
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not shutil.which("cmake"):
            sys.exit("gpuparanoia: building the module needs CMake 3.25 or later (Debian: scripts/setup-debian)")
        build = Path(self.build_temp).resolve()
        configure = [
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DCMAKE_BUILD_TYPE=Release",
            # What the module links, no more: no tests, no GPU backend (it computes with the model).
            "-DGPUPARANOIA_WITH_TESTS=OFF",
            "-DGPUPARANOIA_WITH_OPENCL=OFF",
            "-DGPUPARANOIA_WITH_OPENGL=OFF",
            "-DGPUPARANOIA_WITH_VULKAN=OFF",
            "-DGPUPARANOIA_WITH_CUDA=OFF",
            # A wheel may travel: portable code unless CMAKE_ARGS asks for -DGPUPARANOIA_NATIVE=ON.
            "-DGPUPARANOIA_NATIVE=OFF",
        ]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}", *shlex.split(os.environ.get("CMAKE_ARGS", ""))]
        # ccache (the project's launcher) with paths relative to the source: a build from another
        # copy of the source at the same depth (pip's, a fresh clone's) hits the same cache entries.
        env = dict(os.environ)
        env.setdefault("CCACHE_BASEDIR", str(ROOT))
        jobs = env.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(len(os.sched_getaffinity(0)))
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *configure], check=True, env=env)
        subprocess.run(["cmake", "--build", str(build), "--target", "gpuparanoia_python", "--parallel", jobs],
                       check=True, env=env)
        built = build / "python" / self.get_ext_filename(ext.name)  # python/gpuparanoia/_core...so
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(built), str(target))


# setuptools' metadata under build/ (ignored by git), not beside this file.
os.makedirs("build", exist_ok=True)
setup(
    version=re.search(r"project\(gpuparanoia VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())[1],
    # pybind11 reads numpy 2's arrays from 2.12 on: built with an older one (Debian 12's), numpy 1.
    install_requires=["numpy" if pybind11.version_info >= (2, 12) else "numpy<2"],
    ext_modules=[Extension("gpuparanoia._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    packages=["gpuparanoia"],
    package_dir={"gpuparanoia": "python/gpuparanoia"},
    package_data={"gpuparanoia": ["_core.pyi", "py.typed", "templates/*"]},
    options={"egg_info": {"egg_base": "build"}},
)

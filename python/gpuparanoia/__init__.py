# The package gpuparanoia: the compiled functions of gpuparanoia._core (python/gpuparanoia_module.cpp,
# typed by _core.pyi) re-exported, docstrings and all, so that `gpuparanoia.matmul(...)` is the
# module's own; the pure-Python modules beside it (gpuparanoia.site, the results site) are imported
# by name.
from . import _core
from ._core import *  # noqa: F401,F403 (the module's public names, listed in __all__)

__all__ = [name for name in dir(_core) if not name.startswith("_")]
__doc__ = _core.__doc__

#!/usr/bin/python3
# matmul's speed in one run, as ratios: 1024 x 1024 x 1024, binary16 inputs, binary32 output, as
# hopper:HMMA.16816.F32, against numpy's float32 matmul on the same machine and the same inputs
# (README, From Python). numpy's BLAS chooses its own kernel for this CPU: OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE, which force one, are removed from this process's environment before numpy loads.
# Run with the module importable (installed, or PYTHONPATH=build/release/python):
# bench/python_matmul.py [size]
import os
import sys
import time

FORCED = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None) is not None]

import numpy as np  # noqa: E402 (after the environment is cleaned)

import gpuparanoia  # noqa: E402


def best_of(runs, f):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def blas_libraries():
    """The BLAS and LAPACK libraries mapped into this process (numpy's, after a matmul)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line or "lapack" in line}
    return sorted(os.path.realpath(p) for p in paths if p.startswith("/"))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    # Interleaved, best of each (numpy's of 5 calls, the model's of 3: its first call after numpy's
    # runs 20 to 30% slower, its heap's pages given back meanwhile): both see the same machine load.
    # The pause lets numpy's BLAS threads, which keep spinning a while after a call, go idle before
    # the model's threads start.
    t_numpy, t_model = [], []
    for _ in range(3):
        t_numpy.append(best_of(5, lambda: a32 @ b32))
        time.sleep(0.5)
        t_model.append(best_of(3, lambda: gpuparanoia.matmul(a, b, instruction="hopper:HMMA.16816.F32")))
    t_numpy, t_model = min(t_numpy), min(t_model)
    print(f"cores: {os.cpu_count()}, numpy {np.__version__}, BLAS: {', '.join(blas_libraries()) or 'none found'}"
          + (f" (its kernel choice left to it: {' and '.join(FORCED)} removed)" if FORCED else ""))
    print(f"numpy float32 matmul {n}^3: {t_numpy * 1e3:.1f} ms, {2 * n ** 3 / t_numpy / 1e9:.0f} GFLOP/s")
    print(f"gpuparanoia.matmul (hopper:HMMA.16816.F32, fp16 -> fp32, bit-exact) {n}^3: {t_model * 1e3:.1f} ms, "
          f"{n ** 3 / t_model / 1e9:.2f} G products/s")
    print(f"ratio: {t_model / t_numpy:.1f}x numpy")


if __name__ == "__main__":
    main()

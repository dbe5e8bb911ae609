# matmul runs on worker threads with the GIL released: other Python threads go on meanwhile.
import threading
import time

import numpy as np

import gpuparanoia


def test_other_threads_run_during_matmul():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((256, 512)).astype(np.float16)
    b = rng.standard_normal((512, 256)).astype(np.float16)
    start = time.perf_counter()
    expected = gpuparanoia.matmul(a, b, instruction="hopper:HMMA.16816.F32", threads=1)
    alone = time.perf_counter() - start
    results = []
    worker = threading.Thread(target=lambda: results.append(
        gpuparanoia.matmul(a, b, instruction="hopper:HMMA.16816.F32", threads=1)))
    # The longest pause of this thread while the other computes: with the GIL held throughout, it
    # would be the whole matmul.
    last, longest = time.perf_counter(), 0.0
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    assert np.array_equal(results[0], expected)
    assert longest < alone / 2, f"this thread paused {longest:.3f} s of a {alone:.3f} s matmul"

# matmul runs on worker threads with the GIL released: other Python threads go on meanwhile.
import threading
import time

import numpy as np

import gpuparanoia


def test_other_threads_run_during_matmul():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((384, 512)).astype(np.float16)
    b = rng.standard_normal((512, 384)).astype(np.float16)
    expected = gpuparanoia.matmul(a, b, instruction="hopper:HMMA.16816.F32", threads=1)
    results, spans = [], []

    def work():
        start = time.perf_counter()
        results.append(gpuparanoia.matmul(a, b, instruction="hopper:HMMA.16816.F32", threads=1))
        spans.append(time.perf_counter() - start)

    worker = threading.Thread(target=work)
    # The longest pause of this thread while the other computes: with the GIL held throughout, it
    # would be the whole matmul. Measured against that matmul's own time in the same run, so that a
    # loaded machine slows both alike.
    last, longest = time.perf_counter(), 0.0
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    assert np.array_equal(results[0], expected)
    assert longest < spans[0] / 2, f"this thread paused {longest:.3f} s of a {spans[0]:.3f} s matmul"

"""How the benchmarks time on the GPU, checked without one: a fake `torch`
whose CUDA events read a clock that the timed functions advance.

- attn_mlir.explain.warm_up: at least `calls` calls and `min_ms` of wall
  time (the H200 reaches its power cap's clocks within about 200 ms);
- bench/ab_kernels.py interleaved_times(): one event-timed call at a
  time, in order and reversed in turn;
- bench/attn_bench.py measure(): every provider of a shape checked, then
  warmed up and timed call by call, interleaved (A B A B ...), one row per
  provider with its median, a failing provider a row with its error."""

import contextlib
import io
import os
import sys
import time
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))


class Clock:
    """The fake GPU's clock, in ms."""
    now = 0.0


class Event:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = Clock.now

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return end.at - self.at


def fake_torch():
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: None,
                                       empty_cache=lambda: None)
    return torch


# Installed before anything imports torch, so the real one (on a GPU
# machine) stays out of this process.
sys.modules["torch"] = fake_torch()
from attn_mlir import explain as ex  # noqa: E402
import attn_bench as ab  # noqa: E402
import ab_kernels  # noqa: E402

ab.torch = sys.modules["torch"]  # what attn_bench.import_torch() would set


class BenchTimingTest(unittest.TestCase):
    def test_interleaved_times_alternate_the_order(self):
        # bench/ab_kernels.py (and runtime_ab.py, program_timeline.py): one
        # event-timed call at a time, the calls in order, then reversed.
        order = []

        def call(name, ms):
            def run():
                order.append(name)
                Clock.now += ms
            return run

        times = ab_kernels.interleaved_times(
            sys.modules["torch"], {"a": call("a", 1.0), "b": call("b", 2.0), "c": call("c", 3.0)}, 3)
        self.assertEqual(order, list("abccbaabc"))
        self.assertEqual(times, {"a": [1.0] * 3, "b": [2.0] * 3, "c": [3.0] * 3})

    def test_warm_up_waits_for_the_clock(self):
        calls = []

        def fn():
            calls.append(1)
            time.sleep(0.005)

        start = time.perf_counter()
        ex.warm_up(fn, calls=3, min_ms=40)
        self.assertGreaterEqual((time.perf_counter() - start) * 1e3, 40)
        self.assertGreater(len(calls), 3)  # 3 calls take 15 ms: more followed

    def test_warm_up_makes_at_least_its_calls(self):
        calls = []

        def fn():
            calls.append(1)
            time.sleep(0.02)

        ex.warm_up(fn, calls=3, min_ms=10)
        self.assertEqual(len(calls), 3)

    def test_measure_interleaves_and_reports_medians(self):
        order = []

        def provider(name, ms):
            def fn():
                order.append(name)
                Clock.now += ms
                return name
            return fn

        def broken():
            raise RuntimeError("no kernel for this shape")

        ab.ROWS.clear()
        ab.rel_err = lambda out, ref: 0.0  # the outputs are names here
        meta = dict(t=512, b=1, h=1, d=64, dtype="f16", causal=False)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            rows = ab.measure("modern", "T512", [("a", provider("a", 2.0)), ("bad", broken),
                                                 ("b", provider("b", 3.0))],
                              ref=None, flops=6e9, meta=meta, reps=5)
        self.assertEqual(printed.getvalue().splitlines(), [
            "modern | T512 | a | 2.000 ms | 3 TFLOP/s | err 0.0",
            "modern | T512 | bad | - ms | 0 TFLOP/s | err -",
            "modern | T512 | b | 3.000 ms | 2 TFLOP/s | err 0.0"])
        # The timed rounds: one call of each live provider, each round in an
        # order of its own (both orders occur).
        rounds = [tuple(order[i:i + 2]) for i in range(len(order) - 10, len(order), 2)]
        self.assertTrue(all(sorted(r) == ["a", "b"] for r in rounds), rounds)
        self.assertEqual(set(rounds), {("a", "b"), ("b", "a")})
        self.assertEqual(rows["a"]["ms"], 2.0)
        self.assertEqual(rows["b"]["ms"], 3.0)
        self.assertAlmostEqual(rows["a"]["tflops"], 6e9 / 2.0 / 1e9)
        self.assertIsNone(rows["bad"]["ms"])
        self.assertIn("RuntimeError: no kernel", rows["bad"]["note"])
        # Rows in the providers' order, each with its figure's metadata.
        self.assertEqual([r["provider"] for r in ab.ROWS], ["a", "bad", "b"])
        self.assertTrue(all(r["t"] == 512 and r["workload"] == "modern" for r in ab.ROWS))


if __name__ == "__main__":
    unittest.main()

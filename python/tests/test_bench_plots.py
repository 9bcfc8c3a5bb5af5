"""bench/plots.py: grouping attn_bench.py's rows into figures and tables
(pure Python); drawing them when matplotlib is installed (the GPU machine
has it; CI's Debian python3 may not)."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import plots  # noqa: E402


def row(workload, provider, t, tflops, dtype="bf16", d=128, causal=False):
    r = dict(workload=workload, shape=f"T{t}", provider=provider, ms=1.0 if tflops else None,
             tflops=tflops, rel_err=0.0 if tflops else None, t=t, b=16384 // t, h=2048 // d, d=d,
             dtype=dtype, causal=causal)
    if not tflops:
        r["note"] = "OutOfMemoryError: CUDA out of memory"
    return r


ROWS = [
    row("seed", "seed triton (tf32)", 512, 59.0, "f32", 128, True),
    row("seed", "attn-mlir (mask tensor)", 512, 78.0, "f32", 128, True),
    row("seed", "attn-mlir (mask tensor)", 128, 40.0, "f32", 128, True),
    row("modern", "sdpa flash (FA2)", 16384, 345.0),
    row("modern", "attn-mlir", 16384, 253.0),
    row("modern", "attn-mlir", 512, 150.0),
    row("modern", "sdpa math", 16384, None),  # did not fit: left out
    row("modern", "sdpa cudnn", 512, 300.0, "f16", 64, True),
]


class FiguresTest(unittest.TestCase):
    def test_grouping(self):
        figs = plots.figures(ROWS)
        self.assertEqual(list(figs), [("modern", "bf16", 128, False), ("modern", "f16", 64, True),
                                      ("seed",)])
        self.assertEqual(list(figs[("modern", "bf16", 128, False)]), ["attn-mlir", "sdpa flash (FA2)"])
        self.assertEqual(figs[("modern", "bf16", 128, False)]["attn-mlir"],
                         [(512, 150.0), (16384, 253.0)])
        self.assertEqual(list(figs[("seed",)]), ["attn-mlir (mask tensor)", "seed triton (tf32)"])
        self.assertEqual(plots.figure_name(("modern", "f16", 64, True)), "f16-d64-causal")
        self.assertEqual(plots.figure_name(("seed",)), "seed")

    def test_pivot(self):
        text = plots.pivot_markdown(ROWS)
        self.assertIn("### bf16, head dim 128, full (16k tokens per batch) (TFLOP/s)", text)
        self.assertIn("| implementation | T=512 | T=16384 |", text)
        self.assertIn("| attn-mlir | 150 | 253 |", text)
        self.assertIn("| sdpa flash (FA2) | - | 345 |", text)
        self.assertNotIn("sdpa math", text)

    def test_png(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed")
        with tempfile.TemporaryDirectory() as d:
            paths = plots.write_plots(ROWS, os.path.join(d, "x-attn-bench"), "Fake GPU")
            names = sorted(os.path.basename(p) for p in paths)
            self.assertEqual(names, ["x-attn-bench-bf16-d128-full.png", "x-attn-bench-f16-d64-causal.png",
                                     "x-attn-bench-seed.png", "x-attn-bench.png"])
            for p in paths:
                with open(p, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


class WriteResultsTest(unittest.TestCase):
    def test_md_json(self):
        import json

        import attn_bench  # bench/attn_bench.py: importable without torch

        explains = [dict(kernel="bf16_d128_full", shape="T16384", lines=["explain: causes=none"],
                         report={"causes": []}),
                    dict(kernel="seed_mask", shape="T512", error="RuntimeError: not timed")]
        with tempfile.TemporaryDirectory() as d:
            paths = attn_bench.write_results(d, "h200", "NVIDIA H200", "2026-12-01", "cmd",
                                             dict(torch="2.11"), ROWS, explains)
            names = [os.path.basename(p) for p in paths]
            self.assertEqual(names[:2], ["2026-12-01-h200-attn-bench.md", "2026-12-01-h200-attn-bench.json"])
            with open(paths[0]) as f:
                md = f.read()
            self.assertIn("## TFLOP/s per figure", md)
            self.assertIn("| attn-mlir | 150 | 253 |", md)
            self.assertIn("### bf16_d128_full: T16384\n\n```\nexplain: causes=none\n```", md)
            self.assertIn("explain failed: RuntimeError: not timed", md)
            self.assertIn("| modern | T16384 | sdpa math | OutOfMemoryError: CUDA out of memory | - | - |",
                          md)
            with open(paths[1]) as f:
                data = json.load(f)
            self.assertEqual(data["device"], "NVIDIA H200")
            self.assertEqual(len(data["rows"]), len(ROWS))
            self.assertEqual(data["explain"][0], dict(kernel="bf16_d128_full", shape="T16384",
                                                      report={"causes": []}))
            self.assertEqual(attn_bench.device_tag("NVIDIA H200"), "h200")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Compile latency of one kernel, on the machine with the compiler (no GPU).

    compile_latency.py [--attn-translate build/bin/attn-translate] [--runs 7]
                       [--out bench/results]

Measures, each as the median of --runs runs:
- raw tool: `attn-translate --attn-to-ptx f.mlir -o f.ptx` (a new process:
  startup, parsing, the pipeline, LLVM's NVPTX backend, writing PTX +
  manifest), and its process startup alone (`attn-translate --version`);
- attn_mlir.compile() cold: an empty cache directory each run (the function
  text, the cache key, the tool, the atomic publish);
- attn_mlir.compile() cached: the entry exists (what every call after the
  first costs, in any process);
- a fresh Python process doing `import attn_mlir.compiler` + a cached
  compile (interpreter startup included);
the raw tool on each variant kernel of the benchmark (compile_bench_kernels.py:
windows, softcap, ALiBi, prefix-LM, document masks; the issue's bar is 1 s),
plus the stages of one cold compile (`attn-opt --attn-to-nvvm --mlir-timing`,
the same pipeline: GpuModuleToBinaryPass is LLVM's O3 + NVPTX code
generation) so a regression shows where it went. Writes <out>/<date>-compile-latency.md and prints it.
The kernel: bf16, 16 heads, head dim 128, causal, B and T dynamic (the one
attn_mlir.torch.attention compiles for such tensors).
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
from attn_mlir.compiler import Signature, compile  # noqa: E402
from compile_bench_kernels import kernels as bench_kernels  # noqa: E402

SIG = Signature("bf16", (None, 16, None, 128), (None, 16, None, 128), (None, 16, None, 128),
                causal="top_left")


def median_ms(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attn-translate", default=os.path.join(ROOT, "build", "bin", "attn-translate"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    translate = os.path.abspath(args.attn_translate)
    if not os.access(translate, os.X_OK):
        sys.exit(f"compile_latency.py: no attn-translate at {translate} (build it, or pass --attn-translate)")
    os.environ["ATTN_TRANSLATE"] = translate
    rows = []

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.mlir")
        with open(src, "w") as f:
            f.write(SIG.mlir())
        out = os.path.join(tmp, "k.ptx")

        def raw():
            subprocess.run([translate, "--attn-to-ptx", src, "-o", out], check=True)

        def startup():
            subprocess.run([translate, "--version"], check=True, capture_output=True)

        raw()  # page the binary in: the numbers are for a warm file cache
        rows.append(("attn-translate --attn-to-ptx (new process)", *median_ms(raw, args.runs)))
        rows.append(("attn-translate --version (process startup only)", *median_ms(startup, args.runs)))

        for name, text in bench_kernels():
            if not any(v in name for v in ("window", "softcap", "alibi", "prefixlm", "document")):
                continue
            vsrc = os.path.join(tmp, name + ".mlir")
            with open(vsrc, "w") as f:
                f.write(text)
            rows.append((f"attn-translate --attn-to-ptx, variant {name}", *median_ms(
                lambda: subprocess.run([translate, "--attn-to-ptx", vsrc, "-o", out], check=True),
                args.runs)))

        counter = iter(range(10 ** 6))

        def cold():
            a = compile(SIG, cache_dir=os.path.join(tmp, f"cold{next(counter)}"))
            assert not a.cached

        rows.append(("attn_mlir.compile, cold (empty cache)", *median_ms(cold, args.runs)))
        warm_dir = os.path.join(tmp, "warm")
        compile(SIG, cache_dir=warm_dir)

        def cached():
            a = compile(SIG, cache_dir=warm_dir)
            assert a.cached

        rows.append(("attn_mlir.compile, cached", *median_ms(cached, args.runs * 10)))
        code = ("import sys; sys.path.insert(0, %r); from attn_mlir.compiler import compile, Signature; "
                "compile(Signature('bf16', (None, 16, None, 128), (None, 16, None, 128), "
                "(None, 16, None, 128), causal='top_left'), cache_dir=%r)"
                % (os.path.join(ROOT, "python"), warm_dir))

        def fresh():
            subprocess.run([sys.executable, "-c", code], check=True)

        rows.append(("new python3 process: import + cached compile", *median_ms(fresh, args.runs)))
        # The same pipeline through attn-opt, which takes --mlir-timing.
        opt = os.path.join(os.path.dirname(translate), "attn-opt")
        timing = subprocess.run([opt, '--attn-to-nvvm=chip=sm_90a', "--mlir-timing", src,
                                 "-o", os.path.join(tmp, "k.nvvm.mlir")],
                                capture_output=True, text=True)
        stages = timing.stderr if timing.returncode == 0 else \
            f"(attn-opt --mlir-timing failed: {timing.stderr.strip()})"

    date = datetime.date.today().isoformat()
    lines = [f"# Compile latency ({date})", "",
             f"Machine: {platform.node()}, {os.cpu_count()} cores, {platform.processor() or platform.machine()}; "
             f"load average {os.getloadavg()[0]:.2f} at the end.",
             f"Kernel: `{SIG.mlir().splitlines()[1].strip()}`", "",
             f"Command: `python3 bench/compile_latency.py --runs {args.runs}`", "",
             "| what | median ms | min ms | max ms |", "|---|---|---|---|"]
    for name, med, lo, hi in rows:
        lines.append(f"| {name} | {med:.2f} | {lo:.2f} | {hi:.2f} |")
    lines += ["", "Stages of one cold compile (`attn-opt --attn-to-nvvm=chip=sm_90a --mlir-timing`, "
              "the pipeline attn-translate runs):", "", "```",
              stages.strip(), "```", ""]
    text = "\n".join(lines)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{date}-compile-latency.md")
    with open(path, "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

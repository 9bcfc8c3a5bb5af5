"""Plots and pivot tables of attn_bench.py's rows (TFLOP/s vs T, one line
per implementation, like Triton's perf_report).

`figures(rows)` groups the rows (pure Python, tested in CI by
python/tests/test_bench_plots.py); `write_plots(rows, prefix, device)`
draws them with matplotlib's Agg backend: one PNG per (dtype, head dim,
causal) of the modern sweep, one per (dtype, head dim, variant) of the
variants, one for the seed workload, and an overview
grid of all of them. `pivot_markdown(rows)` gives the same data as tables.
"""

import os

# Line order and styles: ours first.
PROVIDER_ORDER = ["attn-mlir", "attn-mlir (mask tensor)", "attn-mlir (causal)",
                  "flex attention",
                  "sdpa flash (FA2)", "sdpa cudnn", "sdpa efficient", "sdpa math",
                  "seed triton (tf32)", "triton tuned (causal)", "triton tuned (mask tensor)",
                  "torch manual (tf32)", "sdpa (mask tensor)",
                  "sdpa (is_causal)"]


def _provider_key(name):
    return (PROVIDER_ORDER.index(name) if name in PROVIDER_ORDER else len(PROVIDER_ORDER), name)


def figure_key(row):
    """("seed",), ("modern", dtype, d, causal) or ("variants", dtype, d,
    variant) for a row with metadata."""
    if row["workload"] == "seed":
        return ("seed",)
    if row["workload"] == "variants":
        return ("variants", row["dtype"], row["d"], row["variant"])
    return ("modern", row["dtype"], row["d"], row["causal"])


def figure_title(key):
    if key == ("seed",):
        return "seed workload: fp32, B=32 H=96 D=128, causal (FLOPs as the seed counts)"
    kind, dtype, d, what = key
    if kind == "variants":
        return f"{dtype}, head dim {d}, {what} (16k tokens per batch, FLOPs of the kept pairs)"
    return f"{dtype}, head dim {d}, {'causal' if what else 'full'} (16k tokens per batch)"


def figure_name(key):
    if key == ("seed",):
        return "seed"
    kind, dtype, d, what = key
    if kind == "variants":
        return f"{dtype}-d{d}-{what.replace(' ', '-')}"
    return f"{dtype}-d{d}-{'causal' if what else 'full'}"


def _figure_order(key):
    """Modern sweep (dtype, head dim, full before causal), variants, seed."""
    if key == ("seed",):
        return (2,)
    return ({"modern": 0, "variants": 1}[key[0]], key[1], key[2], str(key[3]))


def figures(rows):
    """{figure key: {provider: [(T, TFLOP/s), ...] sorted by T}}, in a stable
    order (modern sweep by dtype, head dim, full before causal; seed last).
    Rows that did not run (tflops None) are left out."""
    out = {}
    for row in rows:
        if row.get("tflops") is None or "t" not in row:
            continue
        series = out.setdefault(figure_key(row), {})
        series.setdefault(row["provider"], []).append((row["t"], row["tflops"]))
    ordered = {}
    for key in sorted(out, key=_figure_order):
        ordered[key] = {p: sorted(out[key][p]) for p in sorted(out[key], key=_provider_key)}
    return ordered


def pivot_markdown(rows):
    """One markdown table per figure: providers x T, TFLOP/s."""
    parts = []
    for key, series in figures(rows).items():
        ts = sorted({t for points in series.values() for t, _ in points})
        lines = [f"### {figure_title(key)} (TFLOP/s)", "",
                 "| implementation | " + " | ".join(f"T={t}" for t in ts) + " |",
                 "|---|" + "---|" * len(ts)]
        for provider, points in series.items():
            values = dict(points)
            lines.append(f"| {provider} | " + " | ".join(
                f"{values[t]:.0f}" if t in values else "-" for t in ts) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _color(provider):
    """One color per implementation across every figure."""
    palette = ["#1f77b4", "#0b3d91", "#17becf", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]
    index = _provider_key(provider)[0]
    return palette[index % len(palette)] if index < len(PROVIDER_ORDER) else None


def _draw(ax, key, series):
    for provider, points in series.items():
        ts = [t for t, _ in points]
        ys = [y for _, y in points]
        ours = provider.startswith("attn-mlir")
        ax.plot(ts, ys, marker="o", linewidth=2.5 if ours else 1.5, color=_color(provider),
                linestyle="-" if ours else "--", label=provider)
    ax.set_xscale("log", base=2)
    ticks = sorted({t for points in series.values() for t, _ in points})
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t // 1024}k" if t >= 1024 else str(t) for t in ticks])
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title(figure_title(key), fontsize=10)


def write_plots(rows, prefix, device):
    """Writes <prefix>-<figure>.png for each figure and <prefix>.png (all of
    them in one grid); returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = figures(rows)
    paths = []
    for key, series in groups.items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        _draw(ax, key, series)
        ax.legend(fontsize=8)
        fig.suptitle(device, fontsize=9)
        fig.tight_layout()
        path = f"{prefix}-{figure_name(key)}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    if groups:
        cols = 3
        n = len(groups)
        nrows = -(-n // cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 4.2 * nrows), squeeze=False)
        for ax, (key, series) in zip(axes.flat, groups.items()):
            _draw(ax, key, series)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        fig.suptitle(f"attn-mlir vs PyTorch SDPA backends and the seed's Triton kernel on {device}")
        fig.tight_layout()
        path = f"{prefix}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return [os.path.abspath(p) for p in paths]

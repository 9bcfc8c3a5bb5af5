"""Launch manifests (docs/Manifest.md): reading them and evaluating grids.

Pure Python, no CUDA: the runtime (attn_mlir.runtime) and the tests use it.
"""

import json
import os

SIZE_NAMES = ("B", "Hq", "Hkv", "Tq", "Tk", "D", "Dv")
_BINARY = {
    "ceil_div": lambda a, b: -(-a // b),
    "mul": lambda a, b: a * b,
    "add": lambda a, b: a + b,
    "min": min,
    "max": max,
}


class ManifestError(ValueError):
    """A manifest that does not follow docs/Manifest.md."""


def evaluate(expr, sizes):
    """Evaluates a grid expression (int, size name or {op: [a, b]})."""
    if isinstance(expr, bool):
        raise ManifestError(f"grid expression {expr!r} is not a number")
    if isinstance(expr, int):
        return expr
    if isinstance(expr, str):
        if expr not in sizes:
            raise ManifestError(f"unknown size {expr!r} in a grid expression")
        return sizes[expr]
    if isinstance(expr, dict) and len(expr) == 1:
        (op, args), = expr.items()
        if op in _BINARY and isinstance(args, list) and len(args) == 2:
            return _BINARY[op](evaluate(args[0], sizes), evaluate(args[1], sizes))
    raise ManifestError(f"invalid grid expression {expr!r}")


class Manifest:
    """A kernel's launch manifest."""

    def __init__(self, data, directory=""):
        if data.get("format") != "attn-mlir-manifest" or data.get("version") != 1:
            raise ManifestError("not an attn-mlir manifest (format/version)")
        self.data = data
        self.directory = directory
        self.kernel = data["kernel"]
        self.element_type = data["element_type"]
        self.block = tuple(data["block"])
        self.grid = data["grid"]
        self.shared_memory_bytes = int(data["shared_memory_bytes"])
        self.params = data["params"]
        self.mask = data.get("mask")
        self.attributes = data["attributes"]
        self.config = data["config"]
        for name in ("query", "key", "value", "output"):
            setattr(self, name + "_shape", data[name]["shape"])

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(json.load(f), os.path.dirname(os.path.abspath(path)))

    @property
    def ptx_path(self):
        return os.path.join(self.directory, self.data["ptx"])

    def grid_for(self, sizes):
        return tuple(int(evaluate(e, sizes)) for e in self.grid)

    def check_shapes(self, shapes):
        """Raises ValueError naming the operand whose shape contradicts the
        manifest's static dims; returns the problem sizes."""
        for name in ("query", "key", "value"):
            want = self.data[name]["shape"]
            got = shapes[name]
            if len(got) != len(want) or any(w not in (-1, g) for w, g in zip(want, got)):
                raise ValueError(f"{name}: shape {tuple(got)} does not match the kernel's "
                                 f"{tuple('?' if w < 0 else w for w in want)}")
        q, k, v = shapes["query"], shapes["key"], shapes["value"]
        return dict(B=q[0], Hq=q[1], Hkv=k[1], Tq=q[2], Tk=k[2], D=q[3], Dv=v[3])

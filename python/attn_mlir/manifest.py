"""Launch manifests (docs/Manifest.md): reading them and evaluating grids
and workspaces.

Versions 1 to 7 (version 2 adds workspaces, the device buffers a launch
allocates, and prologue kernels, launched before the main kernel; version 3
the "tensor_map" param, a TMA descriptor of an operand; version 4 the "lse"
entry and memref param of a kernel that writes the log-sum-exp, SPEC.md
section 1.2; version 5 epilogue kernels, launched after the main kernel
(split-KV's combine), and the "kv_lengths" operand, per-batch key counts;
version 6 the "cu_seqlens_q" and "cu_seqlens_k" operands of packed
sequences and the size N, their count; version 7 the "block_table" operand
of a paged KV cache, its shape B x P and the page size; Tk is then P * page).
Pure Python, no CUDA: the runtime (attn_mlir.runtime) and the tests use it.
"""

import json
import os

SIZE_NAMES = ("B", "Hq", "Hkv", "Tq", "Tk", "D", "Dv", "N")
OPERAND_NAMES = ("query", "key", "value", "mask", "output")
# The operands a tensor_map param may describe.
TENSOR_MAP_OPERANDS = ("query", "key", "value", "output")
TENSOR_MAP_SWIZZLES = (0, 32, 64, 128)
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
VERSIONS = (1, 2, 3, 4, 5, 6, 7)
# The operands of packed sequences (version 6).
OFFSET_NAMES = ("cu_seqlens_q", "cu_seqlens_k")
_BINARY = {
    "ceil_div": lambda a, b: -(-a // b),
    "mul": lambda a, b: a * b,
    "add": lambda a, b: a + b,
    "min": min,
    "max": max,
}


class ManifestError(ValueError):
    """A manifest that does not follow docs/Manifest.md."""


def _describe(value):
    """"an array", "a number", ... as the C++ reader names JSON values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {list: "an array", dict: "an object", str: "a string"}.get(type(value), "a value")


def _format_sizes(sizes):
    """"B=2 Hq=32 ..." as the C++ messages write the sizes."""
    return " ".join(f"{k}={sizes[k]}" for k in SIZE_NAMES
                    if k in sizes and not (k == "N" and not sizes[k]))


def _format(expr):
    """A grid expression as GridExpr::toString writes it: "ceil_div(Tq, 128)"."""
    if isinstance(expr, dict) and len(expr) == 1:
        (op, args), = expr.items()
        return f"{op}({', '.join(_format(a) for a in args)})"
    return str(expr)


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
            a, b = evaluate(args[0], sizes), evaluate(args[1], sizes)
            if op == "ceil_div" and b <= 0:
                raise ValueError(f"{_format(expr)}: division by {b}")
            return _BINARY[op](a, b)
    raise ManifestError(f"invalid grid expression {expr!r}")


def _evaluate_in(what, expr, sizes):
    """evaluate(expr, sizes) as an int; a division by a value <= 0 is a
    ValueError starting with `what` (the C++ evaluateGrid's message)."""
    try:
        return int(evaluate(expr, sizes))
    except ManifestError:
        raise
    except ValueError as e:
        raise ValueError(f"{what}: {e} ({_format_sizes(sizes)})") from None


class Manifest:
    """A kernel's launch manifest.

    `workspaces` maps each workspace's name to its entry of "workspace"
    (name, element_bytes, shape), in order; `prologue` is the list of
    "prologue" entries (kernel, block, grid, shared_memory_bytes, params).
    Both are empty in version 1. Version 3 adds params of kind
    "tensor_map" (operand, box, swizzle); version 4 `lse_shape`, the shape
    of the log-sum-exp result (B, Hq, Tq; -1 dynamic), None when the kernel
    writes none. The checks give the C++ reader's messages
    (python/tests/shared_cases.json)."""

    def __init__(self, data, directory=""):
        if data.get("format") != "attn-mlir-manifest":
            raise ManifestError(f"format: '{data.get('format')}' is not an attn-mlir launch "
                                "manifest (expected 'attn-mlir-manifest')")
        if data.get("version") not in VERSIONS:
            raise ManifestError(f"version: unsupported manifest version {data.get('version')} "
                                "(this reader supports versions 1, 2, 3, 4, 5, 6 and 7)")
        self.data = data
        self.version = data["version"]
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
        self.workspaces = {}
        self.prologue = []
        self.epilogue = []
        self._read_version_2(data)
        self.lse_shape = self._read_entry(data, "lse", 3, "B x Hq x Tq", None)
        self.kv_lengths_shape = self._read_entry(data, "kv_lengths", 1, "B", "i32")
        self._read_offsets(data)
        self._read_block_table(data)
        self._check_operand_params()
        self._read_tensor_maps()

    def _read_entry(self, data, name, rank, dims, element_type):
        """The shape of the operand entry `name` ("lse", version 4, or
        "kv_lengths", version 5) or None, after checking it with the
        messages of the C++ reader: rank `rank` (`dims` names its sizes, the
        query's leading ones), `element_type` the only one it may state
        (None: it states none)."""
        entry = data.get(name)
        needs = {"lse": 4, "kv_lengths": 5, "block_table": 7}.get(name, 6)
        if name in data and self.version < needs:
            raise ManifestError(f"{name}: the key '{name}' requires version {needs} (this "
                                f"manifest has version {self.version})")
        if entry is None:
            return None
        keys = ("shape",) if element_type is None else ("element_type", "shape")
        if name == "block_table":
            keys += ("page_size",)
        if not isinstance(entry, dict):
            raise ManifestError(f"{name}: expected an object, found {_describe(entry)}")
        for key in entry:
            if key not in keys:
                raise ManifestError(f"{name}: unknown key '{key}' (expected {', '.join(keys)})")
        if "shape" not in entry:
            raise ManifestError(f"{name}: missing key 'shape'")
        shape = entry["shape"]
        if not isinstance(shape, list):
            raise ManifestError(f"{name}.shape: expected an array, found {_describe(shape)}")
        if element_type is not None:
            if "element_type" not in entry:
                raise ManifestError(f"{name}: missing key 'element_type'")
            if entry["element_type"] != element_type:
                raise ManifestError(f"{name}.element_type: unknown element type "
                                    f"'{entry['element_type']}' (expected {element_type})")
        if len(shape) != rank:
            raise ManifestError(f"{name}.shape has rank {len(shape)} (expected {rank}: {dims})")
        for i, n in enumerate(shape):
            if n != -1 and n < 1:
                raise ManifestError(f"{name}.shape[{i}] is {n} (expected -1 for a dynamic size "
                                    "or a size >= 1)")
        for size, dim in (("B", 0), ("Hq", 1), ("Tq", 2))[:0 if name in OFFSET_NAMES else rank]:
            q = self.query_shape[dim]
            if q >= 0 and shape[dim] >= 0 and q != shape[dim]:
                raise ManifestError(f"{size} disagrees: query.shape[{dim}] is {q} but "
                                    f"{name}.shape[{dim}] is {shape[dim]}")
        return shape

    def _read_offsets(self, data):
        """`cu_seqlens_shapes`: the shapes of "cu_seqlens_q" and
        "cu_seqlens_k" (version 6), or None; checked with the C++ reader's
        messages."""
        shapes = [self._read_entry(data, n, 1, "N + 1", "i32") for n in OFFSET_NAMES]
        self.cu_seqlens_shapes = None
        if shapes == [None, None]:
            return
        if None in shapes:
            found = OFFSET_NAMES[0] if shapes[0] is not None else OFFSET_NAMES[1]
            raise ManifestError(f"cu_seqlens_q and cu_seqlens_k go together, found only {found}")
        q, k = shapes[0][0], shapes[1][0]
        if q >= 0 and k >= 0 and q != k:
            raise ManifestError(f"N disagrees: cu_seqlens_q.shape[0] is {q} but "
                                f"cu_seqlens_k.shape[0] is {k}")
        if self.query_shape[0] != 1:
            raise ManifestError(f"query.shape[0] is {self.query_shape[0]} (expected 1 with "
                                "cu_seqlens)")
        self.cu_seqlens_shapes = tuple(shapes)

    def _read_block_table(self, data):
        """`block_table_shape` and `page_size`: a paged KV cache's table (B x
        P, version 7) and the keys of a page (key.shape[2]), or None; checked
        with the C++ reader's messages."""
        self.block_table_shape = self._read_entry(data, "block_table", 2, "B x P", "i32")
        self.page_size = None
        if self.block_table_shape is None:
            return
        page = data["block_table"].get("page_size")
        if isinstance(page, bool) or not isinstance(page, int):
            raise ManifestError(f"block_table.page_size: expected an integer, found "
                                f"{_describe(page)}")
        if page < 1 or self.key_shape[2] != page:
            raise ManifestError(f"block_table.page_size is {page} (expected key.shape[2], the "
                                f"keys of a page: {self.key_shape[2]})")
        if self.cu_seqlens_shapes is not None:
            raise ManifestError("block_table excludes cu_seqlens")
        self.page_size = page

    def _check_operand_params(self):
        """Checks the memref params of every kernel with the messages of the
        C++ verifier: known operands, each at most once per kernel, of its
        rank; the main kernel and the epilogue kernels together pass every
        operand (a split main kernel leaves the output to its combine
        kernel, version 5); a prologue kernel takes any of them."""
        captures = self.data.get("captures") or []
        ranks = dict(query=4, key=4, value=4, output=4)
        for name, shape in (("mask", (self.mask or {}).get("shape")), ("lse", self.lse_shape),
                            ("kv_lengths", self.kv_lengths_shape)):
            if shape is not None:
                ranks[name] = len(shape)
        if self.cu_seqlens_shapes:
            ranks.update((n, 1) for n in OFFSET_NAMES)
        if self.block_table_shape is not None:
            ranks["block_table"] = 2
        ranks.update((f"capture{i}", len(c.get("shape", []))) for i, c in enumerate(captures))
        names = ["query", "key", "value", "mask", "output"] + [
            n for n in ("lse", "kv_lengths") + OFFSET_NAMES + ("block_table",) if n in ranks]
        expected = ", ".join(names[:-1]) + " or " + names[-1]
        if captures:
            expected += f", or capture0 to capture{len(captures) - 1}"
        seen = set()
        lists = self._param_lists()
        # The C++ verifier's order: the main kernel, the prologue kernels,
        # the epilogue kernels.
        for list_path, params in lists:
            in_kernel = set()
            for i, p in enumerate(params):
                if p.get("kind") != "memref":
                    continue
                path, operand = f"{list_path}[{i}]", p.get("operand")
                if operand not in ranks and operand not in ("mask", "lse", "kv_lengths",
                                                            "block_table") + OFFSET_NAMES:
                    raise ManifestError(f"{path}.operand: unknown operand '{operand}' (expected "
                                        f"{expected})")
                if operand in in_kernel:
                    raise ManifestError(f"{path}: operand '{operand}' is passed twice")
                in_kernel.add(operand)
                if operand not in ranks:
                    raise ManifestError(f"{path}: operand '{operand}' but the manifest has no "
                                        + ("cu_seqlens" if operand in OFFSET_NAMES else operand))
                if p.get("rank") != ranks[operand]:
                    raise ManifestError(f"{path}: rank {p.get('rank')} but {operand} has rank "
                                        f"{ranks[operand]}")
            if not list_path.startswith("prologue"):
                seen |= in_kernel
        for name in ("query", "key", "value", "output"):
            if name not in seen:
                raise ManifestError(f"params: no memref param passes '{name}'")
        for name, what in (("mask", "a mask"), ("lse", "an lse")):
            if name in ranks and name not in seen:
                raise ManifestError(f"params: the manifest has {what} but no memref param "
                                    "passes it")
        if "kv_lengths" in ranks and "kv_lengths" not in seen:
            raise ManifestError("params: the manifest has kv_lengths but no memref param passes "
                                "them")
        for name in OFFSET_NAMES:
            if name in ranks and name not in seen:
                raise ManifestError("params: the manifest has cu_seqlens but no memref param "
                                    f"passes {name}")
        if "block_table" in ranks and "block_table" not in seen:
            raise ManifestError("params: the manifest has a block_table but no memref param "
                                "passes it")
        for i in range(len(captures)):
            if f"capture{i}" not in seen:
                raise ManifestError(f"params: no memref param passes 'capture{i}'")

    @property
    def has_tensor_maps(self):
        """Whether a param of the main kernel or of a prologue or epilogue
        kernel is a tensor map (version 3)."""
        return any(p.get("kind") == "tensor_map" for _, params in self._param_lists()
                   for p in params)

    def _param_lists(self):
        """(path, params) of the main kernel and of each prologue and
        epilogue kernel."""
        return ([("params", self.params)]
                + [(f"prologue[{i}].params", p["params"]) for i, p in enumerate(self.prologue)]
                + [(f"epilogue[{i}].params", p["params"]) for i, p in enumerate(self.epilogue)])

    def _read_tensor_maps(self):
        """Checks the tensor_map params (version 3) with the messages of the
        C++ reader."""
        nbytes = ELEMENT_BYTES.get(self.element_type, 1)
        for list_path, params in self._param_lists():
            memrefs = {p.get("operand") for p in params if p.get("kind") == "memref"}
            for i, p in enumerate(params):
                if p.get("kind") != "tensor_map":
                    continue
                path = f"{list_path}[{i}]"
                if self.version < 3:
                    raise ManifestError(f"{path}.kind: the param kind 'tensor_map' requires "
                                        f"version 3 (this manifest has version {self.version})")
                keys = ("kind", "operand", "box", "swizzle")
                for key in p:
                    if key not in keys:
                        raise ManifestError(f"{path}: unknown key '{key}' (expected {', '.join(keys)})")
                for key in keys:
                    if key not in p:
                        raise ManifestError(f"{path}: missing key '{key}'")
                operand, box, swizzle = p["operand"], p["box"], p["swizzle"]
                if operand not in TENSOR_MAP_OPERANDS:
                    raise ManifestError(f"{path}.operand: unknown operand '{operand}' "
                                        "(expected query, key, value or output)")
                if not isinstance(box, list):
                    raise ManifestError(f"{path}.box: expected an array")
                for j, n in enumerate(box):
                    if not isinstance(n, int) or isinstance(n, bool):
                        raise ManifestError(f"{path}.box[{j}]: expected an integer")
                    if not 1 <= n <= 256:
                        raise ManifestError(f"{path}.box[{j}]: {n} (expected 1 .. 256)")
                if swizzle not in TENSOR_MAP_SWIZZLES or isinstance(swizzle, bool):
                    raise ManifestError(f"{path}.swizzle: {swizzle} (expected 0, 32, 64 or 128)")
                rank = len(self.data[operand]["shape"])
                if len(box) != rank:
                    raise ManifestError(f"{path}: the box has {len(box)} entries but {operand} "
                                        f"has rank {rank}")
                row = box[-1] * nbytes
                what = (f"{path}: the box's inner dimension is {box[-1]} elements of {nbytes} "
                        f"bytes = {row} bytes")
                if swizzle and row > swizzle:
                    raise ManifestError(f"{what}, more than the {swizzle}-byte swizzle span")
                if row % 16:
                    raise ManifestError(f"{what}, not a multiple of 16 bytes")
            for i, p in enumerate(params):
                if p.get("kind") == "tensor_map" and p["operand"] not in memrefs:
                    raise ManifestError(f"{list_path}[{i}]: a tensor map of '{p['operand']}' but no "
                                        f"memref param of the same kernel passes '{p['operand']}'")

    def _read_version_2(self, data):
        """Reads "workspace" and "prologue" and checks the workspace params,
        with the messages of the C++ reader."""
        for key, needs in (("workspace", 2), ("prologue", 2), ("epilogue", 5)):
            if key in data and self.version < needs:
                raise ManifestError(f"{key}: the key '{key}' requires version {needs} "
                                    f"(this manifest has version {self.version})")
        for i, w in enumerate(data.get("workspace", [])):
            path = f"workspace[{i}]"
            name = w.get("name") if isinstance(w, dict) else None
            if not isinstance(name, str) or not name:
                raise ManifestError(f"{path}.name: the name is empty")
            if name in OPERAND_NAMES:
                raise ManifestError(f"{path}.name: '{name}' is the name of an operand "
                                    "(query, key, value, mask, output)")
            if name in ("kv_lengths", "block_table") + OFFSET_NAMES:
                raise ManifestError(f"{path}.name: '{name}' is the name of an operand")
            if name == "lse":
                raise ManifestError(f"{path}.name: 'lse' is the name of the log-sum-exp result")
            if name in self.workspaces:
                j = list(self.workspaces).index(name)
                raise ManifestError(f"{path}.name: '{name}' is also the name of workspace[{j}]")
            if w.get("element_bytes") not in (1, 2, 4, 8) or isinstance(w.get("element_bytes"), bool):
                raise ManifestError(f"{path}.element_bytes: {w.get('element_bytes')} "
                                    "(expected 1, 2, 4 or 8)")
            shape = w.get("shape")
            if not isinstance(shape, list) or not 1 <= len(shape) <= 8:
                raise ManifestError(f"{path}.shape: expected 1 .. 8 dimensions, found "
                                    f"{len(shape) if isinstance(shape, list) else 0}")
            self.workspaces[name] = w
        keys = ("kernel", "block", "grid", "shared_memory_bytes", "params")
        for which, kernels in (("prologue", self.prologue), ("epilogue", self.epilogue)):
            entries = data.get(which, [])
            if not isinstance(entries, list):
                raise ManifestError(f"{which}: expected an array, found {_describe(entries)}")
            for i, p in enumerate(entries):
                path = f"{which}[{i}]"
                if not isinstance(p, dict):
                    raise ManifestError(f"{path}: expected an object, found {_describe(p)}")
                for key in p:
                    if key not in keys:
                        raise ManifestError(f"{path}: unknown key '{key}' (expected "
                                            f"{', '.join(keys)})")
                for key in ("kernel", "block", "grid", "params"):
                    if key not in p:
                        raise ManifestError(f"{path}: missing key '{key}'")
                    if key in ("block", "grid"):
                        if not isinstance(p[key], list):
                            raise ManifestError(f"{path}.{key}: expected an array, found "
                                                f"{_describe(p[key])}")
                        if len(p[key]) != 3:
                            raise ManifestError(f"{path}.{key}: expected 3 dimensions, found "
                                                f"{len(p[key])}")
                kernels.append(p)
        used = set()
        for path, params in self._param_lists():
            for i, p in enumerate(params):
                if p.get("kind") != "workspace":
                    continue
                if self.version < 2:
                    raise ManifestError(f"{path}[{i}].kind: the param kind 'workspace' requires "
                                        f"version 2 (this manifest has version {self.version})")
                name = p.get("name")
                if name not in self.workspaces:
                    known = ("expected one of " + ", ".join(self.workspaces) if self.workspaces
                             else "the manifest has no workspace")
                    raise ManifestError(f"{path}[{i}]: unknown workspace '{name}' ({known})")
                rank = len(self.workspaces[name]["shape"])
                if p.get("rank") != rank:
                    raise ManifestError(f"{path}[{i}]: rank {p.get('rank')} but workspace "
                                        f"'{name}' has rank {rank}")
                used.add(name)
        for i, name in enumerate(self.workspaces):
            if name not in used:
                raise ManifestError(f"workspace[{i}]: '{name}' is passed to no kernel "
                                    "(no param of kind workspace names it)")

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(json.load(f), os.path.dirname(os.path.abspath(path)))

    @property
    def ptx_path(self):
        return os.path.join(self.directory, self.data["ptx"])

    def grid_for(self, sizes):
        """The evaluated grid; ValueError past CUDA's limits (the message of
        the C++ evaluateGrid). A dimension of 0 is an empty problem, which
        the runtime does not launch."""
        grid = []
        for axis, e, limit in zip("xyz", self.grid, (2**31 - 1, 65535, 65535)):
            n = _evaluate_in(f"grid.{axis} = {_format(e)}", e, sizes)
            if n > limit:
                raise ValueError(f"grid.{axis} = {_format(e)} = {n} is out of range "
                                 f"(1 .. {limit}) for {_format_sizes(sizes)}")
            grid.append(n)
        return tuple(grid)

    def prologue_grid_for(self, index, sizes):
        """The grid of prologue kernel `index`; ValueError unless each
        dimension is within the CUDA limits (the message of the C++
        evaluateGrid)."""
        return self._kernel_grid("prologue", self.prologue[index], sizes)

    def epilogue_grid_for(self, index, sizes):
        """The grid of epilogue kernel `index` (version 5), as
        prologue_grid_for."""
        return self._kernel_grid("epilogue", self.epilogue[index], sizes)

    def _kernel_grid(self, which, kernel, sizes):
        grid = []
        for axis, e, limit in zip("xyz", kernel["grid"], (2**31 - 1, 65535, 65535)):
            what = f"{which} kernel '{kernel['kernel']}': grid.{axis} = {_format(e)}"
            n = _evaluate_in(what, e, sizes)
            if not 1 <= n <= limit:
                raise ValueError(f"{what} = {n} is out of range (1 .. {limit}) for "
                                 f"{_format_sizes(sizes)}")
            grid.append(n)
        return tuple(grid)

    def workspace_shape(self, name, sizes):
        """The evaluated shape of workspace `name`; ValueError unless every
        dimension is >= 1 (the message of the C++ evaluateWorkspace)."""
        shape = []
        for i, e in enumerate(self.workspaces[name]["shape"]):
            n = _evaluate_in(f"workspace '{name}': shape[{i}] = {_format(e)}", e, sizes)
            if n < 1:
                raise ValueError(f"workspace '{name}': shape[{i}] = {_format(e)} = {n} "
                                 f"must be >= 1 ({_format_sizes(sizes)})")
            shape.append(n)
        return tuple(shape)

    def workspace_bytes(self, name, sizes):
        """The bytes of workspace `name`: its shape's product times
        element_bytes."""
        count = self.workspaces[name]["element_bytes"]
        for n in self.workspace_shape(name, sizes):
            count *= n
        return count

    def check_shapes(self, shapes):
        """Raises ValueError naming the operand whose shape contradicts the
        manifest's static dims or the other operands (as the C++ runtime's
        checkShapes); returns the problem sizes. `shapes` has query, key and
        value, and mask, kv_lengths, cu_seqlens_q / cu_seqlens_k and
        block_table (None: none given; absent: not checked). With a paged
        cache, key and value are pools of pages and Tk is P * page."""
        names = ("query", "key", "value")
        mask = shapes.get("mask")
        if "mask" not in shapes:
            pass  # the caller checks no mask (the explain report's sizes)
        elif self.mask and mask is None:
            raise ValueError("mask: the kernel was compiled with a mask "
                             f"({self.mask['element_type']}), but none was given")
        if not self.mask and mask is not None:
            raise ValueError("mask: a mask was given, but the kernel was compiled without one")
        if mask is not None:
            names += ("mask",)
        for name in names:
            want = self.data[name]["shape"]
            got = tuple(shapes[name])
            if len(got) != len(want) or any(w not in (-1, g) for w, g in zip(want, got)):
                raise ValueError(f"{name}: shape {got} does not match the kernel's "
                                 f"{tuple('?' if w < 0 else w for w in want)}")
        q, k, v = shapes["query"], shapes["key"], shapes["value"]
        table = shapes.get("block_table")
        if "block_table" in shapes:
            if self.block_table_shape is not None and table is None:
                raise ValueError("block_table: the kernel was compiled with a block_table (int32, "
                                 "B x P), but none was given")
            if self.block_table_shape is None and table is not None:
                raise ValueError("block_table: given, but the kernel was compiled without a "
                                 "block_table")
            if table is not None:
                table = tuple(table)
                if len(table) != 2 or any(w not in (-1, g) for w, g in
                                          zip(self.block_table_shape, table)):
                    raise ValueError(f"block_table: shape {table} does not match the kernel's "
                                     f"{tuple('?' if w < 0 else w for w in self.block_table_shape)}"
                                     " (B x P)")
                if table[0] != q[0]:
                    raise ValueError(f"block_table: dim 0 (B) is {table[0]}, but query has "
                                     f"B = {q[0]}")
        # A paged cache's key and value count pages in dim 0.
        pairs = (("NP", 0, "key", "value"),) if self.block_table_shape is not None else (
            ("B", 0, "query", "key"), ("B", 0, "query", "value"))
        for size, dim, a, b in pairs + (("Hkv", 1, "key", "value"), ("Tk", 2, "key", "value"),
                                        ("D", 3, "query", "key")):
            if shapes[a][dim] != shapes[b][dim]:
                raise ValueError(f"{b}: dim {dim} ({size}) is {shapes[b][dim]}, but {a} has "
                                 f"{size} = {shapes[a][dim]}")
        if (k[1] == 0 and q[1] != 0) or (k[1] and q[1] % k[1]):
            raise ValueError(f"query: {q[1]} heads, not a multiple of the {k[1]} heads of key "
                             "and value")
        tk = k[2] * table[1] if table is not None else k[2]
        if mask is not None:
            full = (q[0], q[1], q[2], tk)[4 - len(mask):]
            for i, (m, f) in enumerate(zip(mask, full)):
                if m not in (1, f):
                    raise ValueError(f"mask: dim {i} is {m}, must be 1 or {f} to broadcast to "
                                     f"(B, Hq, Tq, Tk) = {tuple(full)}")
        if "kv_lengths" in shapes:
            lengths = shapes["kv_lengths"]
            if self.kv_lengths_shape is not None and lengths is None:
                raise ValueError("kv_lengths: the kernel was compiled with kv_lengths (int32, one "
                                 "per batch), but none was given")
            if self.kv_lengths_shape is None and lengths is not None:
                raise ValueError("kv_lengths: given, but the kernel was compiled without "
                                 "kv_lengths")
            if lengths is not None:
                if len(lengths) != 1:
                    raise ValueError(f"kv_lengths: rank {len(lengths)}, expected 1 (one length "
                                     "per batch)")
                if lengths[0] != q[0]:
                    raise ValueError(f"kv_lengths: dimension 0 is {lengths[0]} but the query's "
                                     f"batch is {q[0]}")
        n = 0
        if "cu_seqlens_q" in shapes:
            offsets = [shapes.get(name) for name in OFFSET_NAMES]
            if self.cu_seqlens_shapes is not None and None in offsets:
                raise ValueError("cu_seqlens: the kernel was compiled with cu_seqlens_q and "
                                 "cu_seqlens_k (int32, N + 1 each), but not both were given")
            if self.cu_seqlens_shapes is None and offsets != [None, None]:
                raise ValueError("cu_seqlens: given, but the kernel was compiled without "
                                 "cu_seqlens")
            if self.cu_seqlens_shapes is not None:
                for name, shape, want in zip(OFFSET_NAMES, offsets, self.cu_seqlens_shapes):
                    if len(shape) != 1 or shape[0] < 2 or want[0] not in (-1, shape[0]):
                        raise ValueError(f"{name}: shape {tuple(shape)} does not match the "
                                         f"kernel's ({'?' if want[0] < 0 else want[0]},) "
                                         "(N + 1 >= 2 offsets)")
                if offsets[0][0] != offsets[1][0]:
                    raise ValueError(f"cu_seqlens_k: dimension 0 (N + 1) is {offsets[1][0]} but "
                                     f"cu_seqlens_q has {offsets[0][0]}")
                n = offsets[0][0] - 1
        return dict(B=q[0], Hq=q[1], Hkv=k[1], Tq=q[2], Tk=tk, D=q[3], Dv=v[3], N=n)

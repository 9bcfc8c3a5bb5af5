"""Compiling attention to kernel artifacts (PTX + launch manifest), cached.

`compile(signature)` writes the function of SPEC section 1 that
`signature` describes, runs the project's compiler (`attn-translate
--attn-to-ptx`) once, and keeps the result in an on-disk cache, so a second
call (from any process, or on a machine without the compiler) returns at
once.

The cache: one directory per entry under ATTN_MLIR_CACHE_DIR (default
~/.cache/attn_mlir), named by a hash of the function text, the options
(chip, config overrides) and this package's version. The entry also records
which compiler made it (`compiler.txt`: attn-translate's real path, size and
modification time); where a compiler is found and it is not that one (a
rebuilt attn-translate), the entry is compiled again and replaced. Where no
compiler is found (a GPU machine running kernels compiled ahead of time),
the entry is used as it is. `checksums.txt` holds the sha256 of the
entry's kernel.json and kernel.ptx: an entry with a file missing or changed
(a truncated copy) is compiled again, or, without a compiler, refused with
an error that names it. Entries are published with an atomic rename, so
processes filling the cache at the same time never see half-written
kernels; a process that loses the race uses the winner's entry.
"""

import dataclasses
import hashlib
import math
import os
import re
import shutil
import subprocess
import tempfile
import warnings

from .facts import FACTS
from .manifest import Manifest

_ELEMENT_TYPES = ("f32", "f16", "bf16")
_MASK_TYPES = _ELEMENT_TYPES + ("i1",)
_CAPTURE_TYPES = ("i32", "i64", "f32")
# The chips of sm_80 and newer that LLVM 22's NVPTX backend knows; the
# dialect's verifier reads the same list (facts.json).
KNOWN_CHIPS = tuple(FACTS["known_cuda_chips"])


class CompileError(RuntimeError):
    """attn-translate rejected the function or failed."""


def _check_dims(name, shape):
    for i, d in enumerate(shape):
        if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 1):
            raise ValueError(f"{name}: dim {i} must be None (dynamic) or an integer >= 1, "
                             f"got {d!r} in {shape!r}")


def _float_literal(value):
    """`value` as an MLIR float literal: repr, with a '.0' before an exponent
    that has no fraction ('1e-05' -> '1.0e-05'; MLIR needs the point)."""
    text = repr(float(value))
    if "e" in text and "." not in text:
        text = text.replace("e", ".0e")
    return text


def _dims(shape):
    return "x".join("?" if d is None else str(int(d)) for d in shape)


@dataclasses.dataclass(frozen=True)
class Signature:
    """One attention as the compiler sees it: shapes with None for dynamic
    dims (B, H and T usually), element types, the op's attributes and its
    score_mod / mask_mod regions (SPEC.md section 1.1; attn_mlir.mods
    traces them from Python callables)."""

    dtype: str
    query: tuple
    key: tuple
    value: tuple
    mask_dtype: str = None
    mask: tuple = None
    causal: str = None          # None, "top_left" or "bottom_right"
    scale: float = None         # None: 1/sqrt(D)
    precision: str = None       # f32 only: None, "tf32" or "ieee"
    window: tuple = None        # None or (left, right), -1: unbounded on that side
    softcap: float = None       # None or > 0
    # The regions' blocks (`^bb0(...): ... attn.yield ...`, as
    # mods.trace writes them), reading the captured tensors as %cap0,
    # %cap1, ...; `captures` holds their (element type, rank), in that
    # order: the function's arguments after q, k, v and the mask.
    score_mod: str = None
    mask_mod: str = None
    captures: tuple = ()
    # Whether the op also returns the log-sum-exp (SPEC.md section 1.2):
    # f32 (B, Hq, Tq), the function's second result.
    lse: bool = False
    # Whether the op takes per-batch key counts (`kv_lengths`, i32 (B,),
    # FlashAttention's cache_seqlens): the function's argument after q, k,
    # v and the mask, before the captures.
    kv_lengths: bool = False
    # Whether the op packs variable-length sequences (`cu_seqlens`, two
    # i32 (N + 1,) offset vectors, FlashAttention's varlen; batch 1): the
    # function's arguments after q, k, v, the mask and kv_lengths, before
    # the captures.
    cu_seqlens: bool = False
    # Whether K and V are pools of pages of a paged KV cache (`block_table`,
    # i32 (B, P), vLLM's and FlashAttention's block_table): key and value
    # are (NP, Hkv, page, D) with a static page; the function's argument
    # after q, k, v, the mask and kv_lengths, before the captures.
    block_table: bool = False

    def __post_init__(self):
        if self.dtype not in _ELEMENT_TYPES:
            raise ValueError(f"dtype: expected one of {_ELEMENT_TYPES}, got {self.dtype!r}")
        for name in ("query", "key", "value"):
            shape = getattr(self, name)
            if not isinstance(shape, tuple) or len(shape) != 4:
                raise ValueError(f"{name}: expected a rank-4 shape tuple (B, H, T, D), got {shape!r}")
            _check_dims(name, shape)
            if shape[3] is None:
                raise ValueError(f"{name}: the head dim (last) must be static")
        if self.scale is not None:
            if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)) \
                    or not math.isfinite(self.scale) or not self.scale > 0:
                raise ValueError(f"scale: expected a finite positive number, got {self.scale!r}")
        if (self.mask is None) != (self.mask_dtype is None):
            raise ValueError("mask: give both its shape and its dtype, or neither")
        if self.mask is not None:
            if self.mask_dtype not in _MASK_TYPES:
                raise ValueError(f"mask_dtype: expected one of {_MASK_TYPES}, got {self.mask_dtype!r}")
            if not isinstance(self.mask, tuple) or len(self.mask) not in (2, 4):
                raise ValueError(f"mask: expected a shape tuple of rank 2 or 4, got {self.mask!r}")
            _check_dims("mask", self.mask)
        if self.causal not in (None, "top_left", "bottom_right"):
            raise ValueError(f"causal: expected None, 'top_left' or 'bottom_right', got {self.causal!r}")
        if self.precision not in (None, "tf32", "ieee"):
            raise ValueError(f"precision: expected None, 'tf32' or 'ieee', got {self.precision!r}")
        if self.window is not None:
            if not isinstance(self.window, tuple) or len(self.window) != 2 or any(
                    isinstance(w, bool) or not isinstance(w, int) or w < -1 for w in self.window):
                raise ValueError(f"window: expected a tuple (left, right) of integers >= -1 "
                                 f"(-1: unbounded), got {self.window!r}")
        if self.softcap is not None:
            if isinstance(self.softcap, bool) or not isinstance(self.softcap, (int, float)) \
                    or not math.isfinite(self.softcap) or not self.softcap > 0:
                raise ValueError(f"softcap: expected a finite positive number, got {self.softcap!r}")
        for name in ("score_mod", "mask_mod"):
            body = getattr(self, name)
            if body is not None and not (isinstance(body, str) and body.lstrip().startswith("^bb0(")
                                         and "attn.yield" in body):
                raise ValueError(f"{name}: expected the region's block as text (^bb0(...): ... "
                                 f"attn.yield), got {body!r}")
        if not isinstance(self.lse, bool):
            raise ValueError(f"lse: expected a bool, got {self.lse!r}")
        if not isinstance(self.kv_lengths, bool):
            raise ValueError(f"kv_lengths: expected a bool, got {self.kv_lengths!r}")
        if not isinstance(self.cu_seqlens, bool):
            raise ValueError(f"cu_seqlens: expected a bool, got {self.cu_seqlens!r}")
        if self.cu_seqlens:
            if self.mask is not None or self.kv_lengths:
                raise ValueError("cu_seqlens: packed sequences take no mask and no kv_lengths")
            for name in ("query", "key", "value"):
                if getattr(self, name)[0] != 1:
                    raise ValueError(f"{name}: batch {getattr(self, name)[0]!r}, expected 1 with "
                                     "cu_seqlens (the sequences are packed along T)")
        if not isinstance(self.block_table, bool):
            raise ValueError(f"block_table: expected a bool, got {self.block_table!r}")
        if self.block_table:
            if self.cu_seqlens:
                raise ValueError("block_table: a paged cache takes no cu_seqlens")
            for name in ("key", "value"):
                if getattr(self, name)[2] is None:
                    raise ValueError(f"{name}: the page size (dim 2 of the pool (NP, Hkv, page, "
                                     "D)) must be static with block_table")
        if not isinstance(self.captures, tuple) or any(
                not isinstance(c, tuple) or len(c) != 2 or c[0] not in _CAPTURE_TYPES
                or isinstance(c[1], bool) or not isinstance(c[1], int) or c[1] < 1
                for c in self.captures):
            raise ValueError(f"captures: expected a tuple of (element type, rank) with a type of "
                             f"{_CAPTURE_TYPES} and a rank >= 1, got {self.captures!r}")

    def mlir(self, name="attention"):
        """The function holding the one attn.attention op; with `lse`, it
        returns the op's two results, the output and the log-sum-exp; with
        `kv_lengths` it takes the i32 (B) key counts after q, k, v and the
        mask; with `cu_seqlens` the two i32 offset vectors after those;
        with `block_table` the i32 (B, P) page table after those (printed
        before kv_lengths)."""
        elt = self.dtype
        qt = f"tensor<{_dims(self.query)}x{elt}>"
        kt = f"tensor<{_dims(self.key)}x{elt}>"
        vt = f"tensor<{_dims(self.value)}x{elt}>"
        ot = f"tensor<{_dims(self.query[:3] + self.value[3:])}x{elt}>"
        args, types, operands = [f"%q: {qt}", f"%k: {kt}", f"%v: {vt}"], [qt, kt, vt], "%q, %k, %v"
        if self.mask is not None:
            mt = f"tensor<{_dims(self.mask)}x{self.mask_dtype}>"
            args.append(f"%m: {mt}")
            types.append(mt)
            operands += " mask(%m)"
        if self.block_table:
            bt = f"tensor<{_dims(self.query[:1])}x?xi32>"
            operands += f" block_table(%bt : {bt})"
        if self.kv_lengths:
            lt = f"tensor<{_dims(self.query[:1])}xi32>"
            args.append(f"%lens: {lt}")
            operands += f" kv_lengths(%lens : {lt})"
        if self.cu_seqlens:
            args += ["%cuq: tensor<?xi32>", "%cuk: tensor<?xi32>"]
            operands += " cu_seqlens(%cuq, %cuk : tensor<?xi32>, tensor<?xi32>)"
        if self.block_table:
            args.append(f"%bt: {bt}")
        for i, (element_type, rank) in enumerate(self.captures):
            args.append(f"%cap{i}: tensor<{'?x' * rank}{element_type}>")
        attrs = []
        if self.causal:
            attrs.append(f"causal = #attn.causal<{self.causal}>")
        if self.scale is not None:
            attrs.append(f"scale = {_float_literal(self.scale)} : f32")
        if self.precision:
            attrs.append(f"precision = #attn.precision<{self.precision}>")
        if self.window is not None:
            attrs.append(f"window = #attn.window<left = {self.window[0]}, right = {self.window[1]}>")
        if self.softcap is not None:
            attrs.append(f"softcap = {_float_literal(self.softcap)} : f32")
        attr = " {" + ", ".join(attrs) + "}" if attrs else ""
        regions = "".join(f" {region} {{\n{body}  }}" for region, body in
                          (("score_mod", self.score_mod), ("mask_mod", self.mask_mod)) if body)
        results, values = ot, "%o"
        if self.lse:
            results += f", tensor<{_dims(self.query[:3])}xf32>"
            values += ", %lse"
        returned = f"({results})" if self.lse else results
        return (f"func.func @{name}({', '.join(args)}) -> {returned} {{\n"
                f"  {values} = attn.attention {operands}{attr}{regions} : {', '.join(types)} -> "
                f"{results}\n"
                f"  return {values} : {results}\n}}\n")


@dataclasses.dataclass(frozen=True)
class Artifact:
    """A compiled kernel in the cache."""

    directory: str
    manifest_path: str
    ptx_path: str
    cached: bool

    def manifest(self):
        return Manifest.load(self.manifest_path)


def default_cache_dir():
    return os.environ.get("ATTN_MLIR_CACHE_DIR",
                          os.path.join(os.path.expanduser("~"), ".cache", "attn_mlir"))


def find_attn_translate(required=True):
    """attn-translate: $ATTN_TRANSLATE, PATH, or (a source checkout) the
    repository's build/bin. None when not found and not `required`."""
    explicit = os.environ.get("ATTN_TRANSLATE")
    if explicit:
        return explicit
    found = shutil.which("attn-translate")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    candidate = os.path.join(here, "..", "..", "build", "bin", "attn-translate")
    if os.path.exists(candidate):
        return os.path.abspath(candidate)
    if not required:
        return None
    raise CompileError("attn-translate not found: set ATTN_TRANSLATE, put it on PATH, "
                       "or use kernels compiled ahead of time")


def compiler_identity(translate):
    """Which attn-translate binary this is: its real path, size and
    modification time (a stat, not a hash: cached compiles stay fast)."""
    path = os.path.realpath(translate)
    st = os.stat(path)
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


_ENTRY_FILES = ("kernel.json", "kernel.ptx")


def _checksums(directory):
    """sha256 of an entry's manifest and PTX, one `HEX  NAME` line each."""
    lines = []
    for name in _ENTRY_FILES:
        with open(os.path.join(directory, name), "rb") as f:
            lines.append(f"{hashlib.sha256(f.read()).hexdigest()}  {name}\n")
    return "".join(lines)


def _entry_damage(entry):
    """Why a cache entry cannot be used (a file missing, a checksum that does
    not match: a truncated or edited file), or None when it is whole."""
    if not os.path.isdir(entry):
        return "not a directory"
    for name in _ENTRY_FILES + ("checksums.txt",):
        if not os.path.isfile(os.path.join(entry, name)):
            return f"no {name}"
    try:
        actual = _checksums(entry)
    except OSError as e:
        return f"unreadable: {e.strerror or e}"
    if _read(os.path.join(entry, "checksums.txt")) != actual:
        return "a file does not match checksums.txt"
    return None


def cache_key(text, options):
    """The cache key: the function, the compile options and this package's
    version, so kernels compiled ahead of time are found on machines without
    the compiler (which binary made an entry is checked separately:
    compiler.txt)."""
    from . import __version__
    return hashlib.sha256("\0".join([text, *options, __version__]).encode()).hexdigest()[:32]


def compile(signature, chip="sm_90a", block_m=0, block_n=0, num_warps=0,
            cache_dir=None, attn_translate=None, tensor_copies="auto", split_programs=-1):
    """Compiles `signature` (a Signature, or the text of an .mlir function)
    for `chip` and returns its cached Artifact (see the module doc).
    `tensor_copies` says whether Q/K/V tiles are loaded by TMA tensor copies
    (attn-translate --tensor-copies): "auto" (K and V of the 16-bit wgmma
    kernels for sm_90a, Q, K and V of the tf32 ones) or "none" (no tensor
    map to encode at each launch). A kernel with tensor copies has a
    version 3 manifest, with a tensor map per such tile. `split_programs`
    (attn-translate --split-programs) is split-KV's aim for a static Tq of
    one query block: the programs the key splits fill (the GPU's SMs x 2,
    264 on an H100 / H200), 0 never splits, -1 the compiler's default;
    a split kernel has a version 5 manifest whose epilogue kernel combines
    the splits (docs/Serving.md)."""
    if not isinstance(chip, str) or not re.fullmatch(r"sm_[0-9]{2,4}[af]?", chip):
        raise ValueError(f"chip: expected sm_XY with an optional 'a' or 'f' suffix, such as "
                         f"sm_90a, got {chip!r}")
    if chip not in KNOWN_CHIPS:
        raise ValueError(f"chip: expected one of the chips the compiler knows "
                         f"({', '.join(KNOWN_CHIPS)}), got {chip!r}")
    for name, value in (("block_m", block_m), ("block_n", block_n), ("num_warps", num_warps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name}: expected an integer >= 0 (0: the default config), "
                             f"got {value!r}")
    if tensor_copies not in ("auto", "none"):
        raise ValueError(f"tensor_copies: expected 'auto' or 'none', got {tensor_copies!r}")
    if isinstance(split_programs, bool) or not isinstance(split_programs, int) \
            or split_programs < -1:
        raise ValueError(f"split_programs: expected an integer >= -1 (-1: the compiler's default, "
                         f"0: never split), got {split_programs!r}")
    text = signature.mlir() if isinstance(signature, Signature) else str(signature)
    options = [f"--chip={chip}", f"--block-m={block_m}", f"--block-n={block_n}",
               f"--num-warps={num_warps}"]
    if tensor_copies != "auto":
        options.append(f"--tensor-copies={tensor_copies}")
    if split_programs != -1:
        options.append(f"--split-programs={split_programs}")
    cache = cache_dir or default_cache_dir()
    entry = os.path.join(cache, cache_key(text, options))
    manifest_path = os.path.join(entry, "kernel.json")
    translate = attn_translate or find_attn_translate(required=False)
    identity = compiler_identity(translate) if translate and os.path.exists(translate) else None
    stale = False
    damage = None
    if os.path.lexists(entry):
        damage = _entry_damage(entry)
        made_by = _read(os.path.join(entry, "compiler.txt"))
        if damage is None and (identity is None or made_by == identity):
            return Artifact(entry, manifest_path, os.path.join(entry, "kernel.ptx"), cached=True)
        # Made by another attn-translate than the one found now, or damaged:
        # compiled again and replaced.
        stale = True
    if damage is not None and identity is None:
        raise CompileError(f"the cache entry {entry} is damaged ({damage}) and no attn-translate "
                           "is found to compile it again (ATTN_TRANSLATE): delete the entry")
    if translate is None:
        translate = find_attn_translate()  # raises: no compiler, no entry
    if identity is None:
        raise CompileError(f"attn-translate not found at {translate} (ATTN_TRANSLATE or "
                           "attn_translate=), and the kernel is not in the cache")
    key = os.path.basename(entry)
    try:
        os.makedirs(cache, exist_ok=True)
        work = tempfile.mkdtemp(prefix=key + ".tmp.", dir=cache)
    except OSError as e:
        if stale and damage is None:
            warnings.warn(f"attn_mlir: the cache {cache} is not writable ({e.strerror}); using "
                          f"its entry {key}, made by another attn-translate")
            return Artifact(entry, manifest_path, os.path.join(entry, "kernel.ptx"), cached=True)
        raise CompileError(f"cannot write the kernel cache {cache} (ATTN_MLIR_CACHE_DIR): "
                           f"{e.strerror or e}") from None
    try:
        source = os.path.join(work, "kernel.mlir")
        with open(source, "w") as f:
            f.write(text)
        try:
            proc = subprocess.run([translate, "--attn-to-ptx", source, "-o",
                                   os.path.join(work, "kernel.ptx"), *options],
                                  capture_output=True, text=True)
        except OSError as e:
            raise CompileError(f"cannot run attn-translate {translate}: {e.strerror or e}") from None
        if proc.returncode != 0:
            message = proc.stderr.strip().replace(source, "kernel.mlir")
            raise CompileError((message or f"attn-translate exited with {proc.returncode}")
                               + "\nkernel.mlir:\n" + text)
        missing = [n for n in ("kernel.ptx", "kernel.json")
                   if not os.path.isfile(os.path.join(work, n))]
        if missing:
            raise CompileError(f"{translate} exited with 0 but did not write "
                               f"{' and '.join(missing)}")
        with open(os.path.join(work, "checksums.txt"), "w") as f:
            f.write(_checksums(work))
        with open(os.path.join(work, "compiler.txt"), "w") as f:
            f.write(identity)
        if stale:
            # Move the stale entry aside (atomic), then publish; another
            # process may have done either first.
            old = tempfile.mkdtemp(prefix=key + ".stale.", dir=cache)
            try:
                os.rename(entry, os.path.join(old, "entry"))
            except OSError:
                pass
        try:
            os.rename(work, entry)  # atomic publish; fails if another process won
        except OSError as e:
            if _entry_damage(entry) is not None:  # not another process's entry
                raise CompileError(f"cannot publish the cache entry {entry}: "
                                   f"{e.strerror or e}") from None
        if stale:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if os.path.isdir(work):
            shutil.rmtree(work, ignore_errors=True)
    return Artifact(entry, manifest_path, os.path.join(entry, "kernel.ptx"), cached=False)

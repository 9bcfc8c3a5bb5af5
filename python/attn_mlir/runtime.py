"""Launching attn-mlir kernels (PTX + manifest) through the CUDA driver.

Needs only PyTorch and a CUDA driver: no MLIR. The driver is reached with
ctypes (libcuda.so.1), kernels run on PyTorch's current stream in the
primary context PyTorch uses. A version 2 manifest's prologue kernels run
first, on the same stream, with workspaces the kernel keeps per stream
(allocated through PyTorch's caching allocator, grown when a call needs
more); a version 5 manifest's epilogue kernels (split-KV's combine) run
after the main kernel, on the same stream. A version 3 manifest's
tensor_map params get a CUtensorMap encoded for the call's tensors
(cuTensorMapEncodeTiled) in device memory the kernel keeps per stream, one
copy per distinct map. A version 5 kernel with kv_lengths takes the
per-batch key counts, an int32 (B,) tensor; a version 7 kernel with a
block_table reads K and V from pools of pages through an int32 (B, P) table.
"""

import collections
import ctypes
import threading

from .facts import CU, FACTS
from .manifest import ELEMENT_BYTES, Manifest

# cuda.h's CUtensorMap enum values (cuTensorMapEncodeTiled), from facts.json.
CU_TENSOR_MAP_DATA_TYPE = {t: CU[f"CU_TENSOR_MAP_DATA_TYPE_{n}"]
                           for t, n in (("f16", "FLOAT16"), ("f32", "FLOAT32"), ("bf16", "BFLOAT16"))}
CU_TENSOR_MAP_SWIZZLE = {b: CU[f"CU_TENSOR_MAP_SWIZZLE_{n}"]
                         for b, n in ((0, "NONE"), (32, "32B"), (64, "64B"), (128, "128B"))}
# The device copies of tensor maps a kernel keeps (the C++ TensorMapCache's).
TENSOR_MAP_CACHE_CAPACITY = FACTS["tensor_map_cache_capacity"]
_cuda = None


def _driver():
    global _cuda
    if _cuda is None:
        try:
            _cuda = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError("no CUDA driver found (libcuda.so.1 could not be loaded)") from e
    return _cuda


_launch_fn = None


def _launch():
    """cuLaunchKernel without argument types: a call passes ready ctypes
    values (the handles as c_void_p, the argument block as its array) and
    plain ints for the grid, block and shared memory bytes, which ctypes
    hands over as C ints without a conversion per argument (_Plan.launch;
    bound argtypes cost about 1.5 us of a launch's Python)."""
    global _launch_fn
    if _launch_fn is None:
        fn = _driver()["cuLaunchKernel"]  # a function object of its own
        fn.restype = ctypes.c_int
        _launch_fn = fn
    return _launch_fn


def _current_stream(torch, device):
    """The raw handle of PyTorch's current stream on `device`: through
    torch._C._cuda_getCurrentRawStream where it exists (what Triton uses;
    no Stream object per call), else torch.cuda.current_stream()."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        return torch.cuda.current_stream(device).cuda_stream
    return raw(device.index if device.index is not None else torch.cuda.current_device())


def torch_dense_strides(shape):
    """The strides of a dense row-major tensor of `shape`."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= int(n)
    return tuple(reversed(strides))


TensorMapEncoding = collections.namedtuple(
    "TensorMapEncoding", "data_type rank global_address global_dim global_strides box_dim "
    "element_strides interleave swizzle l2_promotion oob_fill")
TensorMapEncoding.__doc__ = """The arguments of cuTensorMapEncodeTiled (the C++
TensorMapEncoding): tuples innermost dimension first, global_strides in bytes
without the innermost one."""


def tensor_map_encoding(param, element_type, address, shape, strides, offset=0):
    """The encoding of tensor_map param `param` for an operand at data pointer
    `address` + `offset` elements with `shape` and `strides` (in elements,
    outermost first) of `element_type`; ValueError, with the message of the
    C++ getTensorMapEncoding, unless the type is f32, f16 or bf16, the rank is
    1 .. 5 with one box entry (1 .. 256) each, the swizzle is 0, 32, 64 or
    128, every size is 1 .. 2^32, the last stride is 1, every other stride a
    multiple of 16 bytes below 2^40 bytes, and the first element 16-byte
    aligned. Pure: needs no driver."""
    operand = param.get("operand")

    def fail(message):
        raise ValueError(f"tensor map of '{operand}': {message}")

    if param.get("kind") != "tensor_map":
        fail("the param is not of kind tensor_map")
    data_type = CU_TENSOR_MAP_DATA_TYPE.get(element_type)
    if data_type is None:
        fail(f"element type '{element_type}' has no tensor map data type (expected f32, f16 or bf16)")
    nbytes = ELEMENT_BYTES[element_type]
    shape, strides, box = tuple(shape), tuple(strides), tuple(param["box"])
    rank = len(shape)
    if not 1 <= rank <= 5:
        fail(f"rank {rank} (a tensor map has 1 .. 5 dimensions)")
    if len(strides) != rank:
        fail(f"the operand has {rank} sizes and {len(strides)} strides")
    if len(box) != rank:
        fail(f"the box has {len(box)} entries but the operand has rank {rank}")
    for i, n in enumerate(box):
        if not 1 <= n <= 256:
            fail(f"box[{i}] is {n} (expected 1 .. 256)")
    swizzle = CU_TENSOR_MAP_SWIZZLE.get(param["swizzle"])
    if swizzle is None:
        fail(f"swizzle {param['swizzle']} (expected 0, 32, 64 or 128)")
    for i, n in enumerate(shape):
        if not 1 <= n <= 2**32:
            fail(f"size[{i}] = {n} is out of range (1 .. 2^32)")
    if strides[-1] != 1:
        fail(f"stride[{rank - 1}] = {strides[-1]} elements; the last dimension must be "
             "contiguous (stride 1)")
    for i, stride in enumerate(strides[:-1]):
        fits = -(2**63) // nbytes <= stride <= (2**63 - 1) // nbytes
        what = (f"stride[{i}] = {stride} elements "
                f"({f'{stride * nbytes} bytes' if fits else 'more than 2^62 bytes'})")
        if stride < 0:
            fail(f"{what} is negative")
        if stride >= 2**40 // nbytes:
            fail(f"{what} is not below 2^40 bytes")
        if stride * nbytes % 16:
            fail(f"{what} is not a multiple of 16 bytes")
    if offset < 0:
        fail(f"offset {offset} is negative")
    start = address + offset * nbytes
    if start % 16:
        fail(f"the first element is at {start:#x} (pointer {address:#x} + offset {offset} "
             "elements), which is not 16-byte aligned")
    return TensorMapEncoding(
        data_type=data_type, rank=rank, global_address=start, global_dim=shape[::-1],
        global_strides=tuple(strides[rank - 2 - i] * nbytes for i in range(rank - 1)),
        box_dim=box[::-1], element_strides=(1,) * rank, interleave=CU["CU_TENSOR_MAP_INTERLEAVE_NONE"],
        swizzle=swizzle, l2_promotion=CU["CU_TENSOR_MAP_L2_PROMOTION_L2_128B"],
        oob_fill=CU["CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"])


def describe_tensor_map(e):
    """One line with every argument, as the C++ TensorMapEncoding::describe."""
    names = {6: "FLOAT16", 7: "FLOAT32", 9: "BFLOAT16"}

    def listed(values):
        return "[" + ", ".join(str(v) for v in values) + "]"

    return (f"{names.get(e.data_type, f'data type {e.data_type}')}, rank {e.rank}, address "
            f"{e.global_address:#x}, dims {listed(e.global_dim)}, strides "
            f"{listed(e.global_strides)} bytes, box {listed(e.box_dim)}, element strides "
            f"{listed(e.element_strides)}, interleave "
            f"{'NONE' if e.interleave == 0 else e.interleave}, swizzle "
            f"{('NONE', '32B', '64B', '128B')[e.swizzle] if e.swizzle < 4 else e.swizzle}, "
            f"L2 promotion {('NONE', '64B', '128B', '256B')[e.l2_promotion]}, OOB fill "
            f"{'NONE' if e.oob_fill == 0 else 'NAN_REQUEST_ZERO_FMA'}")


_encode_fn = None


def encode_tensor_map(encoding):
    """The 128 bytes of the CUtensorMap that cuTensorMapEncodeTiled encodes
    for `encoding` (RuntimeError when the driver lacks it or refuses)."""
    global _encode_fn
    if _encode_fn is None:
        fn = getattr(_driver(), "cuTensorMapEncodeTiled", None)
        if fn is None:
            raise RuntimeError("the CUDA driver has no cuTensorMapEncodeTiled "
                               "(CUDA 12 or newer is needed)")
        u64p, u32p = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
        fn.argtypes = ([ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p, u64p,
                        u32p, u32p] + [ctypes.c_int] * 4)
        fn.restype = ctypes.c_int
        _encode_fn = fn
    e = encoding
    # A CUtensorMap is 16 uint64 aligned to 64 bytes: take an aligned window.
    storage = (ctypes.c_uint64 * 24)()
    aligned = (ctypes.addressof(storage) + 63) & ~63
    u64s, u32s = ctypes.c_uint64 * 5, ctypes.c_uint32 * 5
    result = _encode_fn(aligned, e.data_type, e.rank, e.global_address, u64s(*e.global_dim),
                        u64s(*e.global_strides), u32s(*e.box_dim), u32s(*e.element_strides),
                        e.interleave, e.swizzle, e.l2_promotion, e.oob_fill)
    if result != 0:
        name = ctypes.c_char_p()
        _driver().cuGetErrorString(result, ctypes.byref(name))
        text = name.value.decode() if name.value else "unknown error"
        raise RuntimeError(f"cuTensorMapEncodeTiled failed: {text} ({result}) "
                           f"({describe_tensor_map(e)})")
    return ctypes.string_at(aligned, 128)


_copy_fn = None


def _copy_to_device(pointer, data, stream):
    """cuMemcpyHtoDAsync of `data` (bytes) to device address `pointer` on
    `stream`: ordered before the kernels launched after it on that stream
    (pageable memory is staged before the call returns)."""
    global _copy_fn
    if _copy_fn is None:
        fn = _driver().cuMemcpyHtoDAsync_v2
        fn.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        fn.restype = ctypes.c_int
        _copy_fn = fn
    _check(_copy_fn(pointer, data, len(data), stream), "cuMemcpyHtoDAsync")


class _Plan:
    """The argument block of one kernel for one operand layout: `storage`
    holds every kernel parameter (memref descriptors, sizes) as int64,
    `args` points at each; `pointers` are the (slot, operand) pairs __call__
    fills with data pointers (allocated and aligned). Operands are numbered
    query 0, key 1, value 2, output 3, mask 4, then the manifest's
    workspaces from 5 on.

    The log-sum-exp of a kernel that writes one (version 4) comes after
    the captures, then the kv_lengths (version 5).

    The main kernel's plan also holds `prologue` and `epilogue`, the plans
    of the prologue and epilogue kernels (each with its `block` and
    `shared_memory_bytes`), launched in order before and after it, and
    `workspaces`, the bytes of each workspace a call allocates. `tensor_maps` are the (slot, operand, encoding) of its
    tensor_map params: the encoding at address 0, which a call moves to the
    operand's data pointer (Kernel._fill_tensor_maps)."""

    def __init__(self, values, pointers, grid, out_shape, prologue=(), workspaces=(),
                 block=None, shared_memory_bytes=0, tensor_maps=(), lse_shape=None,
                 epilogue=()):
        self.storage = (ctypes.c_int64 * len(values))(*[int(x) for x in values])
        base = ctypes.addressof(self.storage)
        self.args = (ctypes.c_void_p * len(values))(*[base + 8 * i for i in range(len(values))])
        self.pointers = pointers
        self.grid = grid
        self.out_shape = out_shape
        self.prologue = list(prologue)
        self.epilogue = list(epilogue)
        self.workspaces = tuple(workspaces)
        self.block = block
        self.shared_memory_bytes = shared_memory_bytes
        self.tensor_maps = list(tensor_maps)
        # The log-sum-exp's (B, Hq, Tq) when the kernel writes it, else None.
        self.lse_shape = lse_shape
        # What a call launches, in order: the prologue kernels, this
        # kernel, the epilogue kernels.
        self.sequence = self.prologue + [self] + self.epilogue
        # (data pointers, stream, Kernel._epoch) the pointers and tensor maps
        # in `storage` were written for (Kernel.__call__); None before.
        self.bound = None
        # The arguments of cuLaunchKernel for that binding (Kernel._bind).
        self.launch = None


def _check(result, call):
    if result != 0:
        name = ctypes.c_char_p()
        _driver().cuGetErrorString(result, ctypes.byref(name))
        text = name.value.decode() if name.value else "unknown error"
        raise RuntimeError(f"{call} failed: {text} ({result})")


def _device(ordinal):
    device = ctypes.c_int()
    _check(_driver().cuDeviceGet(ctypes.byref(device), int(ordinal)), "cuDeviceGet")
    return device


def device_attribute(ordinal, attribute):
    """cuDeviceGetAttribute of CUDA device `ordinal`."""
    value = ctypes.c_int()
    _check(_driver().cuDeviceGetAttribute(ctypes.byref(value), int(attribute), _device(ordinal)),
           f"cuDeviceGetAttribute({attribute})")
    return value.value


def device_name(ordinal):
    """cuDeviceGetName, e.g. "NVIDIA H200"."""
    name = ctypes.create_string_buffer(256)
    _check(_driver().cuDeviceGetName(name, 256, _device(ordinal)), "cuDeviceGetName")
    return name.value.decode()


class Kernel:
    """One compiled attention kernel, loaded on the current device."""

    # The functions of the prologue and epilogue kernels (__init__).
    _prologue = _epilogue = ()

    def __init__(self, manifest, ptx=None):
        import torch

        if isinstance(manifest, str):
            manifest = Manifest.load(manifest)
        self.manifest = manifest
        self._plans = {}
        self._workspaces = {}
        self._tensor_maps = {}
        self._tensor_map_pointers = {}
        # Bumped whenever a workspace or a device copy of a tensor map a plan
        # may point at is replaced: plans bound before it are bound again.
        self._epoch = 0
        self._lock = threading.Lock()
        if ptx is None:
            with open(manifest.ptx_path, "rb") as f:
                ptx = f.read()
        if isinstance(ptx, str):
            ptx = ptx.encode()
        torch.cuda.init()
        torch.empty(1, device="cuda")  # makes the primary context current
        cuda = _driver()
        self._module = ctypes.c_void_p()
        image = ctypes.create_string_buffer(ptx + b"\0")
        _check(cuda.cuModuleLoadData(ctypes.byref(self._module), image), "cuModuleLoadData")
        self._function = self._get_function(manifest.kernel, manifest.shared_memory_bytes,
                                            "cuModuleGetFunction")
        # Version 2: the prologue kernels, from the same module; version 5
        # the epilogue kernels.
        self._prologue, self._epilogue = ([
            self._get_function(p["kernel"], int(p.get("shared_memory_bytes", 0)),
                               f"cuModuleGetFunction({p['kernel']})") for p in kernels]
            for kernels in (manifest.prologue, manifest.epilogue))

    def _get_function(self, name, shared_memory_bytes, call):
        """cuModuleGetFunction (`call` names it in errors), and the kernel's
        dynamic shared memory limit."""
        cuda = _driver()
        function = ctypes.c_void_p()
        _check(cuda.cuModuleGetFunction(ctypes.byref(function), self._module, name.encode()), call)
        # Always raise the dynamic limit to what the kernel takes: its static
        # shared memory counts against the 48 KiB default too.
        if shared_memory_bytes > 0:
            _check(cuda.cuFuncSetAttribute(function, CU["CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"],
                                           shared_memory_bytes), "cuFuncSetAttribute")
        return function

    def function_attribute(self, attribute):
        """cuFuncGetAttribute (registers, local and static shared bytes, ...)."""
        value = ctypes.c_int()
        _check(_driver().cuFuncGetAttribute(ctypes.byref(value), int(attribute), self._function),
               f"cuFuncGetAttribute({attribute})")
        return value.value

    def max_active_blocks_per_sm(self):
        """cuOccupancyMaxActiveBlocksPerMultiprocessor at the manifest's block
        and dynamic shared memory."""
        m = self.manifest
        blocks = ctypes.c_int()
        _check(_driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), self._function, m.block[0] * m.block[1] * m.block[2],
            ctypes.c_size_t(m.shared_memory_bytes)), "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return blocks.value

    def __call__(self, q, k, v, mask=None, out=None, stream=None, captures=(), lse=None,
                 kv_lengths=None, cu_seqlens_q=None, cu_seqlens_k=None, block_table=None):
        """Runs the kernel on CUDA tensors of the manifest's element types
        (strides with a contiguous last dim; query, key, value and `out` aligned
        to their vectors, 16 bytes or row_vector_bytes, and every other stride a
        multiple of them, so a (B, T, H, D)
        buffer viewed as (B, H, T, D) works, for `out` too) and returns `out`
        (allocated dense when not given), on `stream` (a raw
        CUstream handle; PyTorch's current stream when None). With a version 2
        manifest the prologue kernels run first on that stream, with the
        workspaces the kernel keeps for that stream (_workspaces_for); with a
        version 5 manifest its epilogue kernels run after the main kernel, on
        that stream too.

        A kernel compiled with kv_lengths (version 5) takes `kv_lengths`,
        the key count of each batch: an int32 (B,) CUDA tensor on q's device
        with stride 1; each count is clamped to 0 .. Tk by the kernel.

        A kernel compiled with cu_seqlens (version 6, packed sequences)
        takes `cu_seqlens_q` and `cu_seqlens_k`: int32 (N + 1,) CUDA tensors
        on q's device with stride 1, the offsets of the N sequences in the
        packed query and keys. The kernel clamps them into 0 .. Tq (Tk), so
        no value reads or writes outside the operands; values that do not
        rise give unspecified results (attn_mlir.torch.attention_varlen
        checks them).

        A kernel compiled with a block_table (version 7, a paged KV cache)
        takes k and v as pools of pages (NP, Hkv, page, D) and
        `block_table`: an int32 (B, P) CUDA tensor on q's device whose last
        dim has stride 1, the pages of each batch. The kernel clamps the ids
        into 0 .. NP - 1, so no id reads outside the pool; ids outside it
        give unspecified results (attn_mlir.torch.attention_with_kvcache
        checks the ones a batch uses).

        A kernel that writes the log-sum-exp (a version 4 manifest's "lse",
        SPEC.md section 1.2) returns `(out, lse)`, its results in order: `lse`
        a float32 (B, Hq, Tq) tensor with any strides (allocated dense when
        not given). Giving `lse` to a kernel without it is an error.

        The checks, sizes, grid and argument block depend only on the
        operands' shapes and strides: they are made once per layout (a
        launch plan) and a call then only writes the data pointers and
        launches, a few microseconds of Python."""
        import torch

        key = (q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride(), q.dtype,
               k.dtype, v.dtype, q.device,
               None if mask is None else (mask.shape, mask.stride(), mask.dtype),
               None if out is None else (out.shape, out.stride(), out.dtype),
               tuple((c.shape, c.stride(), c.dtype) for c in captures),
               None if lse is None else (lse.shape, lse.stride(), lse.dtype, lse.device),
               None if kv_lengths is None else (kv_lengths.shape, kv_lengths.stride(),
                                                kv_lengths.dtype, kv_lengths.device),
               tuple(None if c is None else (c.shape, c.stride(), c.dtype, c.device)
                     for c in (cu_seqlens_q, cu_seqlens_k, block_table)))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(q, k, v, mask, out, captures, lse, kv_lengths,
                              (cu_seqlens_q, cu_seqlens_k), block_table)
            if len(self._plans) >= 64:
                self._plans.clear()
            self._plans[key] = plan
        if out is None:
            out = torch.empty(plan.out_shape, dtype=q.dtype, device=q.device)
        if plan.lse_shape is not None and lse is None:
            lse = torch.empty(plan.lse_shape, dtype=torch.float32, device=q.device)
        result = out if plan.lse_shape is None else (out, lse)
        if plan.grid is None:
            return result
        external = stream is not None
        if stream is None:
            stream = _current_stream(torch, q.device)
        pointers = (q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                    0 if mask is None else mask.data_ptr()) + tuple(
                        0 if c is None else c.data_ptr()
                        for c in tuple(captures) + (lse, kv_lengths, cu_seqlens_q,
                                                    cu_seqlens_k, block_table))
        launch = _launch()
        with self._lock:
            # Everything a launch reads is written before the first launch, and
            # only when it changed: a repeated call (same pointers and stream,
            # no workspace or tensor-map copy replaced since: the epoch) goes
            # straight to the launches, back to back, so that the GPU does not
            # wait between them for Python.
            if plan.bound != (pointers, stream, self._epoch):
                plan.bound = None
                workspaces = (self._workspaces_for(torch, q.device, stream, external,
                                                   plan.workspaces) if plan.workspaces else ())
                workspaces = tuple(workspaces) + (None,) * (len(self.manifest.workspaces)
                                                          - len(workspaces))
                self._bind(torch, plan, pointers, (q, k, v, out, mask) + workspaces
                           + tuple(captures) + (lse, kv_lengths, cu_seqlens_q, cu_seqlens_k,
                                                block_table),
                           q.device, stream, external)
                plan.bound = (pointers, stream, self._epoch)
            # Prologue kernels, the main kernel, epilogue kernels, in order.
            for sub in plan.sequence:
                _check(launch(*sub.launch), "cuLaunchKernel")
        return result

    def _bind(self, torch, plan, pointers, tensors, device, stream, external):
        """Writes the data pointers and tensor maps of a call into the argument
        blocks of `plan` and its prologue and epilogue kernels (after checking
        the pointers' alignment); `plan.bound` then records what they were
        written for."""
        m = self.manifest
        nbytes = _ELEMENT_BYTES.get(m.element_type, 1)
        for name, address in zip(_VECTOR_OPERANDS, pointers):
            vector = row_vector_bytes(getattr(m, name + "_shape")[-1] * nbytes)
            if address % vector:
                raise ValueError(f"{name}: the kernel moves {vector}-byte vectors: its data pointer "
                                 f"must be {vector}-byte aligned, got {address:#x}")
        # Past the capacity every device copy is dropped, before any of this
        # call's is written, so that none of the maps it points at goes.
        maps = sum(len(sub.tensor_maps) for sub in plan.sequence)
        if maps and len(self._tensor_maps) + maps > TENSOR_MAP_CACHE_CAPACITY:
            self._tensor_maps.clear()
            self._tensor_map_pointers.clear()
            self._epoch += 1
        m = self.manifest
        handle = ctypes.c_void_p(stream)
        functions = [*self._prologue, self._function, *self._epilogue]
        for sub, function in zip(plan.sequence, functions):
            _fill_pointers(sub, tensors)
            if sub.tensor_maps:
                self._fill_tensor_maps(torch, sub, tensors, device, stream, external)
            block = sub.block or m.block
            smem = sub.shared_memory_bytes if sub is not plan else m.shared_memory_bytes
            sub.launch = (function, *sub.grid, *block, smem, handle, sub.args, None)

    def workspace(self, name, device, stream=None):
        """The buffer (uint8 tensor, possibly larger than a call needs) of
        workspace `name` that calls on `stream` of `device` use; its first
        bytes hold what the last of them wrote once it ran. None before a
        call allocated it. `stream` as in __call__ (None: PyTorch's current
        one)."""
        if stream is None:
            import torch

            stream = _current_stream(torch, device)
        held = self._workspaces.get((device.index, stream or 0))
        if held is None:
            return None
        return held[list(self.manifest.workspaces).index(name)]

    def _workspaces_for(self, torch, device, stream, external, nbytes):
        """The workspaces of a call on `stream`: kept per (device, stream)
        and grown when a call needs more, so that a call allocates nothing
        (the kernels of one stream run in order, so its calls can share
        them; another stream gets its own). A grown buffer is allocated on
        `stream`, so the caching allocator hands the old one out again only
        after the kernels before it on that stream ran."""
        key = (device.index, stream or 0)
        held = self._workspaces.get(key)
        if held is not None and all(t.numel() >= n for t, n in zip(held, nbytes)):
            return held

        # Growing at least doubles, so a sweep over sizes reallocates rarely.
        old = [t.numel() for t in held] if held is not None else [0] * len(nbytes)

        def allocate():
            return tuple(torch.empty(max(n, 2 * o), dtype=torch.uint8, device=device)
                         for n, o in zip(nbytes, old))

        if external:
            with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=device)):
                held = allocate()
        else:
            held = allocate()
        self._workspaces[key] = held
        self._epoch += 1
        return held

    def _fill_tensor_maps(self, torch, plan, tensors, device, stream, external):
        """Writes the device address of each tensor map of `plan` (version 3)
        for this call's data pointers into its argument block. A map is
        encoded once per (stream, layout, data pointer) and copied to device
        memory once per distinct map and stream, on that stream
        (_copy_to_device, so the copy runs before the kernels after it); _bind
        drops them all before a call would pass TENSOR_MAP_CACHE_CAPACITY: the
        caching allocator hands their memory out again only to work queued
        after them on the same stream."""
        stream_key = (device.index, stream or 0)
        for slot, operand, template in plan.tensor_maps:
            address = tensors[operand].data_ptr()
            key = stream_key + (template, address)
            pointer = self._tensor_map_pointers.get(key)
            if pointer is None:
                encoding = template._replace(global_address=template.global_address + address)
                if encoding.global_address % 16:
                    raise ValueError(f"tensor map of '{_OPERAND_NAMES[operand]}': the first element "
                                     f"is at {encoding.global_address:#x}, which is not 16-byte aligned")
                try:
                    data = encode_tensor_map(encoding)
                except RuntimeError as e:
                    raise RuntimeError(f"tensor map of '{_OPERAND_NAMES[operand]}': {e}") from None
                buffer = self._tensor_maps.get(stream_key + (data,))
                if buffer is None:
                    buffer = self._upload_tensor_map(torch, device, stream, external, data)
                    self._tensor_maps[stream_key + (data,)] = buffer
                pointer = buffer.data_ptr()
                if len(self._tensor_map_pointers) >= 4 * TENSOR_MAP_CACHE_CAPACITY:
                    self._tensor_map_pointers.clear()
                self._tensor_map_pointers[key] = pointer
            plan.storage[slot] = pointer

    def _upload_tensor_map(self, torch, device, stream, external, data):
        """A device copy of the 128 bytes `data`, allocated on `stream`."""
        if external:
            with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=device)):
                buffer = torch.empty(128, dtype=torch.uint8, device=device)
        else:
            buffer = torch.empty(128, dtype=torch.uint8, device=device)
        # The caching allocator aligns blocks to 512 bytes; TMA needs 64.
        if buffer.data_ptr() % 64:
            raise RuntimeError(f"the device copy of a tensor map at {buffer.data_ptr():#x} is not "
                               "64-byte aligned")
        _copy_to_device(buffer.data_ptr(), data, stream)
        return buffer

    def _plan(self, q, k, v, mask, out, captures=(), lse=None, kv_lengths=None,
              cu_seqlens=(None, None), block_table=None):
        """The launch plan of one operand layout (see __call__)."""
        m = self.manifest
        specs = m.data.get("captures", [])
        if len(captures) != len(specs):
            raise ValueError(f"captures: the kernel reads {len(specs)} tensors in its regions "
                             f"({', '.join(c['element_type'] for c in specs) or 'none'}), "
                             f"got {len(captures)}")
        for i, (t, spec) in enumerate(zip(captures, specs)):
            expected = _TORCH_DTYPE.get(spec["element_type"])
            if str(t.dtype) != expected:
                raise ValueError(f"capture{i}: dtype {t.dtype}, but the kernel reads "
                                 f"{spec['element_type']} ({expected})")
            if getattr(t, "device", None) != getattr(q, "device", None):
                raise ValueError(f"capture{i}: on {t.device}, expected q's device {q.device}")
            if len(t.shape) != len(spec["shape"]) or any(
                    s >= 0 and s != d for s, d in zip(spec["shape"], t.shape)):
                raise ValueError(f"capture{i}: shape {tuple(t.shape)}, the kernel was compiled "
                                 f"for {spec['shape']} (-1: any)")
        for name, t in (("query", q), ("key", k), ("value", v), ("output", out), ("mask", mask)):
            if t is None:
                continue
            kind = m.element_type if name != "mask" else (m.mask or {}).get("element_type")
            expected = _TORCH_DTYPE.get(kind)
            if expected is not None and str(t.dtype) != expected:
                raise ValueError(f"{name}: dtype {t.dtype}, but the kernel was compiled for {kind} ({expected})")
            device = getattr(t, "device", None)
            if device is not None and getattr(device, "type", "cuda") != "cuda":
                raise ValueError(f"{name}: a tensor on {device}; the kernel runs on CUDA tensors")
        if mask is not None and getattr(mask, "device", None) != getattr(q, "device", None):
            raise ValueError(f"mask: on {mask.device}, expected q's device {q.device}")
        _check_kv_lengths(kv_lengths, q)
        for name, t in zip(("cu_seqlens_q", "cu_seqlens_k"), cu_seqlens):
            _check_kv_lengths(t, q, name, "offsets")
        _check_kv_lengths(block_table, q, "block_table", "page ids")
        sizes = m.check_shapes(dict(
            query=q.shape, key=k.shape, value=v.shape, mask=None if mask is None else mask.shape,
            kv_lengths=None if kv_lengths is None else kv_lengths.shape,
            cu_seqlens_q=None if cu_seqlens[0] is None else cu_seqlens[0].shape,
            cu_seqlens_k=None if cu_seqlens[1] is None else cu_seqlens[1].shape,
            block_table=None if block_table is None else block_table.shape))
        out_shape = (q.shape[0], q.shape[1], q.shape[2], v.shape[3])
        if out is not None and tuple(out.shape) != out_shape:
            raise ValueError(f"output: shape {tuple(out.shape)}, expected {out_shape}")
        lse_shape = None if m.lse_shape is None else tuple(out_shape[:3])
        _check_lse(m, lse, lse_shape, q)
        tensors = dict(query=q, key=k, value=v, output=out, mask=mask, lse=lse,
                       kv_lengths=kv_lengths, cu_seqlens_q=cu_seqlens[0],
                       cu_seqlens_k=cu_seqlens[1], block_table=block_table)
        tensors.update((f"capture{i}", t) for i, t in enumerate(captures))
        # An empty output is an empty problem: nothing runs (and nothing is
        # evaluated: a split count divides by B * Hq).
        empty = 0 in out_shape
        grid = None if empty else m.grid_for(sizes)
        if empty or grid[0] * grid[1] * grid[2] == 0:
            values, pointers, _ = _pack(m, m.params, tensors, sizes, out_shape, None)
            return _Plan(values, pointers, None, out_shape, lse_shape=lse_shape)
        shapes = {name: m.workspace_shape(name, sizes) for name in m.workspaces}
        values, pointers, maps = _pack(m, m.params, tensors, sizes, out_shape, shapes)
        others = {}
        for which, kernels, grid_for in (("prologue", m.prologue, m.prologue_grid_for),
                                         ("epilogue", m.epilogue, m.epilogue_grid_for)):
            others[which] = []
            for i, p in enumerate(kernels):
                pgrid = grid_for(i, sizes)
                pvalues, ppointers, pmaps = _pack(m, p["params"], tensors, sizes, out_shape, shapes)
                others[which].append(_Plan(pvalues, ppointers, pgrid, None, block=tuple(p["block"]),
                                           shared_memory_bytes=int(p.get("shared_memory_bytes", 0)),
                                           tensor_maps=pmaps))
        workspaces = [m.workspace_bytes(name, sizes) for name in m.workspaces]
        return _Plan(values, pointers, grid, out_shape, others["prologue"], workspaces,
                     tensor_maps=maps, lse_shape=lse_shape, epilogue=others["epilogue"])


_OPERAND_INDEX = dict(query=0, key=1, value=2, output=3, mask=4)
_OPERAND_NAMES = {i: name for name, i in _OPERAND_INDEX.items()}
# The operands the kernels read and write in vectors (row_vector_bytes).
_VECTOR_OPERANDS = ("query", "key", "value", "output")


def row_vector_bytes(row_bytes):
    """The bytes of the vectors the kernels move rows of `row_bytes` bytes
    in: 16, or the largest power of two dividing `row_bytes` where a head
    dim's row is not whole 16-byte vectors (docs/GPU.md, "Padded head dims");
    the C++ runtime's checkVectorLayout and the compiler's getRowVectorBytes
    compute the same."""
    return min(16, row_bytes & -row_bytes) if row_bytes > 0 else 16
_ELEMENT_BYTES = ELEMENT_BYTES
# The torch dtype of each manifest element type.
_TORCH_DTYPE = {"f32": "torch.float32", "f16": "torch.float16", "bf16": "torch.bfloat16", "i1": "torch.bool",
                "i32": "torch.int32", "i64": "torch.int64"}


def _operand_index(m, operand):
    """The position of `operand`'s tensor in a call's tensors: query, key,
    value, output, mask, the workspaces, the captures, then the lse, the
    kv_lengths, the cu_seqlens and the block_table."""
    if operand.startswith("capture"):
        return 5 + len(m.workspaces) + int(operand[len("capture"):])
    tail = ("lse", "kv_lengths", "cu_seqlens_q", "cu_seqlens_k", "block_table")
    if operand in tail:
        return (5 + len(m.workspaces) + len(m.data.get("captures", []))
                + tail.index(operand))
    return _OPERAND_INDEX[operand]


def _check_kv_lengths(lengths, q, name="kv_lengths", what="key counts"):
    """Checks given per-batch key counts (version 5) or packed sequences'
    offsets (version 6, `name` cu_seqlens_q or cu_seqlens_k): int32, rank
    1, on q's CUDA device, stride 1 (the kernel reads them contiguously);
    their shape against the kernel in Manifest.check_shapes."""
    if lengths is None:
        return
    if str(lengths.dtype) != "torch.int32":
        raise ValueError(f"{name}: dtype {lengths.dtype}, but the kernel reads int32 "
                         f"(torch.int32) {what}")
    device = getattr(lengths, "device", None)
    if device is not None and getattr(device, "type", "cuda") != "cuda":
        raise ValueError(f"{name}: a tensor on {device}; the kernel runs on CUDA tensors")
    if device != getattr(q, "device", None):
        raise ValueError(f"{name}: on {device}, expected q's device {q.device}")
    if len(lengths.shape) >= 1 and lengths.shape[-1] > 1 and lengths.stride()[-1] != 1:
        raise ValueError(f"{name}: stride {lengths.stride()[-1]}; the kernel reads the {what} "
                         f"contiguously (stride 1): pass {name}.contiguous()")


def _check_lse(m, lse, lse_shape, q):
    """Checks a given log-sum-exp tensor against the kernel (`lse_shape`:
    the (B, Hq, Tq) it writes, None when it writes none)."""
    if lse is None:
        return
    if lse_shape is None:
        raise ValueError("lse: the kernel writes no log-sum-exp (it was compiled without "
                         "return_lse; its manifest has no \"lse\")")
    if str(lse.dtype) != "torch.float32":
        raise ValueError(f"lse: dtype {lse.dtype}, but the log-sum-exp is float32")
    device = getattr(lse, "device", None)
    if device is not None and getattr(device, "type", "cuda") != "cuda":
        raise ValueError(f"lse: a tensor on {device}; the kernel runs on CUDA tensors")
    if device != getattr(q, "device", None):
        raise ValueError(f"lse: on {device}, expected q's device {q.device}")
    if tuple(lse.shape) != lse_shape:
        raise ValueError(f"lse: shape {tuple(lse.shape)}, expected {lse_shape} (B, Hq, Tq)")


def _fill_pointers(plan, tensors):
    """Writes the data pointers of `tensors` into `plan`'s argument block."""
    storage = plan.storage
    for slot, operand in plan.pointers:
        storage[slot] = storage[slot + 1] = tensors[operand].data_ptr()


def _operand_layout(operand, tensors, out_shape):
    """The shape and strides of `operand`: its tensor's, or for the output
    __call__ allocates (None in `tensors`), dense `out_shape`; for the
    log-sum-exp it allocates, dense `out_shape[:3]`."""
    t = tensors.get(operand)
    if t is not None:
        if operand == "kv_lengths" and tuple(t.shape) in ((0,), (1,)):
            return tuple(t.shape), (1,)  # one count at most: read at index 0
        return tuple(t.shape), tuple(t.stride())
    if operand == "output":
        return tuple(out_shape), tuple(int(x) for x in torch_dense_strides(out_shape))
    if operand == "lse":
        return tuple(out_shape[:3]), tuple(int(x) for x in torch_dense_strides(out_shape[:3]))
    raise ValueError(f"{operand}: the kernel needs this operand")


def _pack(m, params, tensors, sizes, out_shape, workspace_shapes):
    """The int64 values of `params` (the main kernel's or a prologue
    kernel's), the (slot, operand) pairs of their data pointers, and the
    (slot, operand, encoding at address 0) of their tensor maps: a memref is
    allocated, aligned, offset 0, sizes, strides; a workspace the same over
    its evaluated shape, row-major (`workspace_shapes`; None for an empty
    problem, whose plan is never launched); a size one value; a tensor map
    one pointer, which a call fills in."""
    values, pointers, maps = [], [], []
    for p in params:
        if p["kind"] == "size":
            values.append(sizes[p["name"]])
            continue
        if p["kind"] == "tensor_map":
            operand = p["operand"]
            shape, strides = _operand_layout(operand, tensors, out_shape)
            if workspace_shapes is not None:  # not for an empty problem
                maps.append((len(values), _OPERAND_INDEX[operand],
                             tensor_map_encoding(p, m.element_type, 0, shape, strides)))
            values.append(0)
            continue
        if p["kind"] == "workspace":
            name = p["name"]
            shape = (0,) * p["rank"] if workspace_shapes is None else workspace_shapes[name]
            pointers.append((len(values), 5 + list(m.workspaces).index(name)))
            values += [0, 0, 0] + list(shape) + list(torch_dense_strides(shape))
            continue
        operand = p["operand"]
        shape, strides = _operand_layout(operand, tensors, out_shape)
        if len(shape) != p["rank"]:
            raise ValueError(f"{operand}: rank {len(shape)}, the kernel wants {p['rank']}")
        if shape and strides[-1] != 1 and operand != "lse":  # the lse: any strides
            raise ValueError(f"{operand}: the last dimension must be contiguous")
        if operand in _VECTOR_OPERANDS:
            nbytes = _ELEMENT_BYTES.get(m.element_type, 1)
            vector = row_vector_bytes(shape[-1] * nbytes)
            if any(st * nbytes % vector for st in strides[:-1]):
                raise ValueError(f"{operand}: the kernel moves {vector}-byte vectors: every stride "
                                 f"but the last must be a multiple of {vector} bytes, got strides "
                                 f"{strides} of {nbytes}-byte elements")
        pointers.append((len(values), _operand_index(m, operand)))
        values += [0, 0, 0] + list(shape) + list(strides)
    return values, pointers, maps

"""Launching attn-mlir kernels (PTX + manifest) through the CUDA driver.

Needs only PyTorch and a CUDA driver: no MLIR. The driver is reached with
ctypes (libcuda.so.1), kernels run on PyTorch's current stream in the
primary context PyTorch uses. A version 2 manifest's prologue kernels run
first, on the same stream, with workspaces the kernel keeps per stream
(allocated through PyTorch's caching allocator, grown when a call needs
more).
"""

import ctypes
import threading

from .manifest import Manifest

_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
# cuda.h's CUfunction_attribute and CUdevice_attribute values the explain
# report reads (attn_mlir.explain.gather).
CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37
CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82
CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106
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
    """cuLaunchKernel with its argument types bound once."""
    global _launch_fn
    if _launch_fn is None:
        fn = _driver().cuLaunchKernel
        fn.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
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


class _Plan:
    """The argument block of one kernel for one operand layout: `storage`
    holds every kernel parameter (memref descriptors, sizes) as int64,
    `args` points at each; `pointers` are the (slot, operand) pairs __call__
    fills with data pointers (allocated and aligned). Operands are numbered
    query 0, key 1, value 2, output 3, mask 4, then the manifest's
    workspaces from 5 on.

    The main kernel's plan also holds `prologue`, the plans of the prologue
    kernels (each with its `block` and `shared_memory_bytes`), launched in
    order before it, and `workspaces`, the bytes of each workspace a call
    allocates."""

    def __init__(self, values, pointers, grid, out_shape, prologue=(), workspaces=(),
                 block=None, shared_memory_bytes=0):
        self.storage = (ctypes.c_int64 * len(values))(*[int(x) for x in values])
        base = ctypes.addressof(self.storage)
        self.args = (ctypes.c_void_p * len(values))(*[base + 8 * i for i in range(len(values))])
        self.pointers = pointers
        self.grid = grid
        self.out_shape = out_shape
        self.prologue = list(prologue)
        self.workspaces = tuple(workspaces)
        self.block = block
        self.shared_memory_bytes = shared_memory_bytes


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

    def __init__(self, manifest, ptx=None):
        import torch

        if isinstance(manifest, str):
            manifest = Manifest.load(manifest)
        self.manifest = manifest
        self._plans = {}
        self._workspaces = {}
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
        # Version 2: the prologue kernels, from the same module.
        self._prologue = [self._get_function(p["kernel"], int(p.get("shared_memory_bytes", 0)),
                                             f"cuModuleGetFunction({p['kernel']})")
                          for p in manifest.prologue]

    def _get_function(self, name, shared_memory_bytes, call):
        """cuModuleGetFunction (`call` names it in errors), and the kernel's
        dynamic shared memory limit."""
        cuda = _driver()
        function = ctypes.c_void_p()
        _check(cuda.cuModuleGetFunction(ctypes.byref(function), self._module, name.encode()), call)
        # Always raise the dynamic limit to what the kernel takes: its static
        # shared memory counts against the 48 KiB default too.
        if shared_memory_bytes > 0:
            _check(cuda.cuFuncSetAttribute(function, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
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

    def __call__(self, q, k, v, mask=None, out=None, stream=None):
        """Runs the kernel on CUDA tensors of the manifest's element types
        (strides with a contiguous last dim; query, key, value and `out` 16-byte
        aligned, every other stride a multiple of 16 bytes, so a (B, T, H, D)
        buffer viewed as (B, H, T, D) works, for `out` too) and returns `out`
        (allocated dense when not given), on `stream` (a raw
        CUstream handle; PyTorch's current stream when None). With a version 2
        manifest the prologue kernels run first on that stream, with the
        workspaces the kernel keeps for that stream (_workspaces_for).

        The checks, sizes, grid and argument block depend only on the
        operands' shapes and strides: they are made once per layout (a
        launch plan) and a call then only writes the data pointers and
        launches, a few microseconds of Python."""
        import torch

        key = (q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride(), q.dtype,
               k.dtype, v.dtype, q.device,
               None if mask is None else (mask.shape, mask.stride(), mask.dtype),
               None if out is None else (out.shape, out.stride(), out.dtype))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(q, k, v, mask, out)
            if len(self._plans) >= 64:
                self._plans.clear()
            self._plans[key] = plan
        if out is None:
            out = torch.empty(plan.out_shape, dtype=q.dtype, device=q.device)
        if plan.grid is None:
            return out
        tensors = (q, k, v, out, mask)
        for name, t in zip(_VECTOR_OPERANDS, tensors):
            if t.data_ptr() % 16:
                raise ValueError(f"{name}: the kernel moves 16-byte vectors: its data pointer must be "
                                 f"16-byte aligned, got {t.data_ptr():#x}")
        external = stream is not None
        if stream is None:
            stream = _current_stream(torch, q.device)
        launch = _launch()
        with self._lock:
            if plan.workspaces:
                tensors += self._workspaces_for(torch, q.device, stream, external,
                                                plan.workspaces)
            for sub, function in zip(plan.prologue, self._prologue):
                _fill_pointers(sub, tensors)
                (gx, gy, gz), (bx, by, bz) = sub.grid, sub.block
                _check(launch(function, gx, gy, gz, bx, by, bz, sub.shared_memory_bytes, stream,
                              sub.args, None), "cuLaunchKernel")
            _fill_pointers(plan, tensors)
            gx, gy, gz = plan.grid
            m = self.manifest
            _check(launch(self._function, gx, gy, gz, m.block[0], m.block[1], m.block[2],
                          m.shared_memory_bytes, stream, plan.args, None), "cuLaunchKernel")
        return out

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
        return held

    def _plan(self, q, k, v, mask, out):
        """The launch plan of one operand layout (see __call__)."""
        m = self.manifest
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
        sizes = m.check_shapes(dict(query=q.shape, key=k.shape, value=v.shape))
        out_shape = (q.shape[0], q.shape[1], q.shape[2], v.shape[3])
        if out is not None and tuple(out.shape) != out_shape:
            raise ValueError(f"output: shape {tuple(out.shape)}, expected {out_shape}")
        tensors = dict(query=q, key=k, value=v, output=out, mask=mask)
        grid = m.grid_for(sizes)
        if grid[0] * grid[1] * grid[2] == 0:  # an empty problem: nothing runs
            values, pointers = _pack(m, m.params, tensors, sizes, out_shape, None)
            return _Plan(values, pointers, None, out_shape)
        shapes = {name: m.workspace_shape(name, sizes) for name in m.workspaces}
        values, pointers = _pack(m, m.params, tensors, sizes, out_shape, shapes)
        prologue = []
        for i, p in enumerate(m.prologue):
            pgrid = m.prologue_grid_for(i, sizes)
            pvalues, ppointers = _pack(m, p["params"], tensors, sizes, out_shape, shapes)
            prologue.append(_Plan(pvalues, ppointers, pgrid, None, block=tuple(p["block"]),
                                  shared_memory_bytes=int(p.get("shared_memory_bytes", 0))))
        workspaces = [m.workspace_bytes(name, sizes) for name in m.workspaces]
        return _Plan(values, pointers, grid, out_shape, prologue, workspaces)


_OPERAND_INDEX = dict(query=0, key=1, value=2, output=3, mask=4)
# The operands the kernels read and write in 16-byte vectors.
_VECTOR_OPERANDS = ("query", "key", "value", "output")
_ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
# The torch dtype of each manifest element type.
_TORCH_DTYPE = {"f32": "torch.float32", "f16": "torch.float16", "bf16": "torch.bfloat16", "i1": "torch.bool"}


def _fill_pointers(plan, tensors):
    """Writes the data pointers of `tensors` into `plan`'s argument block."""
    storage = plan.storage
    for slot, operand in plan.pointers:
        storage[slot] = storage[slot + 1] = tensors[operand].data_ptr()


def _pack(m, params, tensors, sizes, out_shape, workspace_shapes):
    """The int64 values of `params` (the main kernel's or a prologue
    kernel's) and the (slot, operand) pairs of their data pointers: a memref
    is allocated, aligned, offset 0, sizes, strides; a workspace the same
    over its evaluated shape, row-major (`workspace_shapes`; None for an
    empty problem, whose plan is never launched); a size one value."""
    values, pointers = [], []
    for p in params:
        if p["kind"] == "size":
            values.append(sizes[p["name"]])
            continue
        if p["kind"] == "workspace":
            name = p["name"]
            shape = (0,) * p["rank"] if workspace_shapes is None else workspace_shapes[name]
            pointers.append((len(values), 5 + list(m.workspaces).index(name)))
            values += [0, 0, 0] + list(shape) + list(torch_dense_strides(shape))
            continue
        operand = p["operand"]
        t = tensors.get(operand)
        shape = out_shape if operand == "output" and t is None else None
        if t is None and shape is None:
            raise ValueError(f"{operand}: the kernel needs this operand")
        if shape is None:
            shape, strides = tuple(t.shape), tuple(t.stride())
        else:  # the output __call__ allocates: dense
            strides = tuple(int(x) for x in torch_dense_strides(shape))
        if len(shape) != p["rank"]:
            raise ValueError(f"{operand}: rank {len(shape)}, the kernel wants {p['rank']}")
        if shape and strides[-1] != 1:
            raise ValueError(f"{operand}: the last dimension must be contiguous")
        if operand in _VECTOR_OPERANDS:
            nbytes = _ELEMENT_BYTES.get(m.element_type, 1)
            if any(st * nbytes % 16 for st in strides[:-1]):
                raise ValueError(f"{operand}: the kernel moves 16-byte vectors: every stride but the "
                                 f"last must be a multiple of 16 bytes, got strides {strides} of "
                                 f"{nbytes}-byte elements")
        pointers.append((len(values), _OPERAND_INDEX[operand]))
        values += [0, 0, 0] + list(shape) + list(strides)
    return values, pointers

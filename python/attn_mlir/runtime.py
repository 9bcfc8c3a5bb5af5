"""Launching attn-mlir kernels (PTX + manifest) through the CUDA driver.

Needs only PyTorch and a CUDA driver: no MLIR. The driver is reached with
ctypes (libcuda.so.1), kernels run on PyTorch's current stream in the
primary context PyTorch uses.
"""

import ctypes

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
        self._function = ctypes.c_void_p()
        _check(cuda.cuModuleGetFunction(ctypes.byref(self._function), self._module,
                                        manifest.kernel.encode()), "cuModuleGetFunction")
        # Always raise the dynamic limit to what the kernel takes: its static
        # shared memory counts against the 48 KiB default too.
        if manifest.shared_memory_bytes > 0:
            _check(cuda.cuFuncSetAttribute(self._function,
                                           _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           manifest.shared_memory_bytes), "cuFuncSetAttribute")

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
        """Runs the kernel on CUDA tensors (any strides with a contiguous last
        dim) and returns `out` (allocated when not given)."""
        import torch

        m = self.manifest
        sizes = m.check_shapes(dict(query=q.shape, key=k.shape, value=v.shape))
        if out is None:
            out = torch.empty(q.shape[0], q.shape[1], q.shape[2], v.shape[3],
                              dtype=q.dtype, device=q.device)
        tensors = dict(query=q, key=k, value=v, output=out)
        if mask is not None:
            tensors["mask"] = mask
        values = []
        for p in m.params:
            if p["kind"] == "size":
                values.append(sizes[p["name"]])
                continue
            t = tensors.get(p["operand"])
            if t is None:
                raise ValueError(f"{p['operand']}: the kernel needs this operand")
            if t.dim() != p["rank"]:
                raise ValueError(f"{p['operand']}: rank {t.dim()}, the kernel wants {p['rank']}")
            if t.dim() and t.stride(-1) != 1:
                raise ValueError(f"{p['operand']}: the last dimension must be contiguous")
            ptr = t.data_ptr()
            values += [ptr, ptr, 0] + list(t.shape) + list(t.stride())
        storage = (ctypes.c_int64 * len(values))(*[int(x) for x in values])
        args = (ctypes.c_void_p * len(values))(
            *[ctypes.addressof(storage) + 8 * i for i in range(len(values))])
        gx, gy, gz = m.grid_for(sizes)
        if gx * gy * gz == 0:
            return out
        if stream is None:
            stream = torch.cuda.current_stream().cuda_stream
        _check(_driver().cuLaunchKernel(
            self._function, gx, gy, gz, m.block[0], m.block[1], m.block[2],
            m.shared_memory_bytes, ctypes.c_void_p(stream), args, None), "cuLaunchKernel")
        return out

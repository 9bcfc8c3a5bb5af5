"""Launching attn-mlir kernels (PTX + manifest) through the CUDA driver.

Needs only PyTorch and a CUDA driver: no MLIR. The driver is reached with
ctypes (libcuda.so.1), kernels run on PyTorch's current stream in the
primary context PyTorch uses.
"""

import ctypes

from .manifest import Manifest

_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
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

"""attn-mlir from Python: compile attention to PTX + a launch manifest
(attn_mlir.compiler, cached), launch it through the CUDA driver
(attn_mlir.runtime), call it from PyTorch (attn_mlir.torch.attention) and
explain its speed (attn_mlir.explain). See python/README.md."""

from .compiler import CompileError, Signature, compile  # noqa: F401
from .manifest import Manifest, ManifestError  # noqa: F401

__version__ = "0.4.9"

"""attn-mlir from Python: launch compiled attention kernels (PTX + launch
manifest) next to PyTorch. See python/README.md."""

from .manifest import Manifest, ManifestError  # noqa: F401

__version__ = "0.1.0"

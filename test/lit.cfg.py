# -*- Python -*-
# lit configuration for the attn-mlir regression and integration tests.

import os
import shutil
import sys
import subprocess

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "project"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
# The Python lit runs under: Debian's python3, which has python3-numpy.
config.substitutions.append(("%python", sys.executable))

llvm_config.use_default_substitutions()
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "CUDA_HOME", "PATH"])

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst("attn-opt", unresolved="fatal"), "not", "count", "FileCheck"]
for optional in ["attn-translate", "attn-run"]:
    tools.append(ToolSubst(optional, unresolved="ignore"))
llvm_config.add_tool_substitutions(tools, tool_dirs)
# The runner's path, for scripts that take it as an argument.
config.substitutions.append(("%attn_run", os.path.join(config.attn_tools_dir, "attn-run")))
config.substitutions.append(("%attn_translate", os.path.join(config.attn_tools_dir, "attn-translate")))

# ptxas assembles the PTX we emit (resource checks run without a GPU).
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
ptxas = shutil.which("ptxas") or (
    os.path.join(cuda_home, "bin", "ptxas")
    if os.path.exists(os.path.join(cuda_home, "bin", "ptxas")) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))


# GPU execution tests need a working CUDA driver and a device.
def _has_cuda_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


if _has_cuda_gpu():
    config.available_features.add("cuda-gpu")

"""The facts this package shares with the C++ runtime, which embeds the same
file at build time (lib/Runtime/Facts.cpp): the CUDA chips the compiler
knows, the peak FLOP/s table, the explain report's thresholds, the
benchmark's warm-up, the tensor map cache's size and the cuda.h enum values
the ctypes runtime passes (facts.json; docs/Explain.md)."""

import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "facts.json")) as _file:
    FACTS = json.load(_file)

# cuda.h's enum values by name, e.g. CU["CU_FUNC_ATTRIBUTE_NUM_REGS"].
CU = FACTS["cuda"]

#!/usr/bin/env bash
# Builds attn-mlir (installing what is missing) and runs every test through
# CTest: the lit suite (dialect, passes, tools, CPU execution, embedding) and
# the unit tests. GPU execution tests report UNSUPPORTED without a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ATTN_BUILD"
ctest --output-on-failure -j "$(nproc)"

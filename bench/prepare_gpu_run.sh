#!/usr/bin/env bash
# Fills .carry/ (ignored by git; about 3 MB) with what a GPU machine without
# LLVM/MLIR needs to run the benchmark, the GPU Python tests and the explain
# report (bench/attn_bench.py --help has the whole flow):
#   .carry/bk        the benchmark's kernels (compile_bench_kernels.py)
#   .carry/anchors   the seed's Triton kernel, read by path
#   .carry/cache     an attn_mlir kernel cache for python/tests/test_torch_*gpu.py
#   .carry/bin       the runner-only attn-run (ATTN_RUNNER_ONLY: libc only, dlopens libcuda)
#                    and the runtime's unit tests of the same build
#                    (ATTN_RUNNER_ONLY_TESTS: AttnCudaRuntimeTests, whose GPU
#                    tests skip here and run there, and AttnRuntimeTests)
# Usage: bash bench/prepare_gpu_run.sh   (after scripts/setup.sh built build/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD:-$ROOT/build}"
CARRY="$ROOT/.carry"
SEED_DIR="${SEED_DIR:-$ROOT/../shared/bench}"
TRANSLATE="$BUILD/bin/attn-translate"
[ -x "$TRANSLATE" ] || { echo "prepare_gpu_run: no $TRANSLATE (run scripts/setup.sh first)" >&2; exit 1; }
[ -f "$SEED_DIR/seed_triton_attn.py" ] || { echo "prepare_gpu_run: no seed_triton_attn.py in $SEED_DIR (set SEED_DIR)" >&2; exit 1; }

rm -rf "$CARRY/bk" "$CARRY/cache" "$CARRY/anchors" "$CARRY/bin"
mkdir -p "$CARRY/anchors" "$CARRY/bin"
cp "$SEED_DIR/seed_triton_attn.py" "$CARRY/anchors/"
python3 "$ROOT/bench/compile_bench_kernels.py" --attn-translate "$TRANSLATE" --out "$CARRY/bk"
ATTN_TRANSLATE="$TRANSLATE" python3 "$ROOT/python/tests/precompile.py" "$CARRY/cache"

RUNNER_BUILD="$BUILD-runner-only"
cmake -G Ninja -S "$ROOT" -B "$RUNNER_BUILD" -DATTN_RUNNER_ONLY=ON -DATTN_RUNNER_ONLY_TESTS=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ > /dev/null
cmake --build "$RUNNER_BUILD" -j "$(nproc)"
cp "$RUNNER_BUILD/bin/attn-run" "$RUNNER_BUILD/unittests/Runtime/AttnCudaRuntimeTests" \
  "$RUNNER_BUILD/unittests/Runtime/AttnRuntimeTests" "$CARRY/bin/"
du -sh "$CARRY"

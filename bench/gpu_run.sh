#!/usr/bin/env bash
# Everything a GPU machine checks and measures for a compiler, in one device
# call (device minutes are few: one start, one batch):
#   bash bench/gpu_run.sh prepare   # here, after scripts/setup.sh: fills .carry
#   bash bench/gpu_run.sh run       # on the GPU machine, carrying .carry;
#                                       # results under $OUT (or /tmp/gpu-run)
#   bash bench/gpu_run.sh variants  # likewise: attn_bench.py's variants
#                                       # workload, a call of its own (every
#                                       # point is a FlexAttention compile)
#   bash bench/gpu_run.sh decode    # likewise: the decode workload
#   bash bench/gpu_run.sh varlen    # likewise: packed variable-length
#                                       # prefill (cu_seqlens) against padded
#                                       # and equal-length batches (240 s)
#   bash bench/gpu_run.sh headdims  # likewise: padded head dims beside the
#                                       # next multiple of 16 (240 s)
# `prepare` runs prepare_gpu_run.sh (benchmark kernels, seed anchor, kernel
# cache, runner-only attn-run), compiles the GPU matrix (473 cases) and the
# lazy-rescale cases. `run` runs the matrix twice (gpu_check.py through the
# Python runtime against torch's float64 reference, then sweep.py
# --manifests: every case through the runner-only attn-run --target=cuda
# --check, against the runner's own float64 reference), the lazy-rescale
# cases, the runtime's unit tests (built here, so that their GPU tests --
# tensor maps, the prologue's workspace, opening the device -- run there
# instead of skipping), the GPU Python tests and the benchmark
# (attn_bench.py), then prints
# one line per step. Each step has a time limit so that a hang does not eat
# the call, and together they fit one 600 s device call (on the H200 the
# steps took 51-71 s, 93 s, 10-12 s, 26-34 s and 112-152 s); `run` exits non-zero
# when a check failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="$ROOT/.carry"
case "${1:-}" in
prepare)
  set -e
  BUILD="${ATTN_BUILD:-$ROOT/build}"
  # The case generators need numpy: scripts/setup.sh installs it for the
  # system python, which may not be the first python3 on PATH.
  PY="${PYTHON:-python3}"
  "$PY" -c "import numpy" 2>/dev/null || PY=/usr/bin/python3
  bash "$ROOT/bench/prepare_gpu_run.sh"
  rm -rf "$CARRY/gk" "$CARRY/lr"
  "$PY" "$ROOT/bench/compile_gpu_cases.py" --attn-translate "$BUILD/bin/attn-translate" \
    --out "$CARRY/gk" --random 200 --jobs "$(nproc)"
  "$PY" "$ROOT/test/Integration/CPU/lazy_rescale.py" --attn-run "$BUILD/bin/attn-run" \
    --emit-kernels "$CARRY/lr"
  # The matrix's PTX compresses about 4x: the device carries 64 MiB at most.
  tar czf "$CARRY/gk.tgz" -C "$CARRY" gk && rm -rf "$CARRY/gk"
  du -sh "$CARRY"
  ;;
run)
  OUTDIR="${OUT:-/tmp/gpu-run}"
  RES=/tmp/gpu-run-res
  rm -rf "$RES" && mkdir -p "$RES" "$OUTDIR"
  R="$CARRY/bin/attn-run"
  [ -d "$CARRY/gk" ] || tar xzf "$CARRY/gk.tgz" -C "$CARRY"
  summary=()
  failed=0
  step() { # name, limit (s), command...
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    timeout "$limit" "$@" > "$RES/$name.log" 2>&1
    local rc=$?
    ((rc == 0)) || failed=1
    summary+=("$(printf '%-12s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" \
      "$(grep -v '^\s*$' "$RES/$name.log" | tail -1 | cut -c1-100)")")
  }
  step matrix 240 python3 "$ROOT/bench/gpu_check.py" "$CARRY/gk" --out "$RES"
  step runner 150 python3 "$ROOT/test/Integration/CPU/sweep.py" --attn-run "$R" \
    --manifests "$CARRY/gk" --workdir /tmp/gpu-run-runner --jobs 8
  step lazy 60 python3 "$ROOT/test/Integration/CPU/lazy_rescale.py" --attn-run "$R" \
    --workdir /tmp/gpu-run-lr --manifests "$CARRY/lr"
  step unit 60 bash "$ROOT/bench/gpu_unittests.sh" "$CARRY/bin"
  step torch 90 env ATTN_MLIR_CACHE_DIR="$CARRY/cache" python3 "$ROOT/python/tests/test_torch_gpu.py"
  step serving 90 env ATTN_MLIR_CACHE_DIR="$CARRY/cache" \
    python3 "$ROOT/python/tests/test_torch_serving_gpu.py"
  step bench 380 python3 "$ROOT/bench/attn_bench.py" --kernels "$CARRY/bk" \
    --seed-dir "$CARRY/anchors" --out "$RES" --only seed,modern
  (cd "$RES" && tar czf "$OUTDIR/gpu-run.tgz" .)
  printf '%s\n' "${summary[@]}"
  exit "$failed"
  ;;
variants | decode | varlen | headdims)
  WORKLOAD=$1
  LIMIT=560
  [ "$WORKLOAD" = varlen ] || [ "$WORKLOAD" = headdims ] && LIMIT=240
  OUTDIR="${OUT:-/tmp/gpu-run}"
  RES=/tmp/gpu-run-$WORKLOAD
  rm -rf "$RES" && mkdir -p "$RES" "$OUTDIR"
  timeout "$LIMIT" python3 "$ROOT/bench/attn_bench.py" --kernels "$CARRY/bk" \
    --seed-dir "$CARRY/anchors" --out "$RES" --only "$WORKLOAD" > "$RES/$WORKLOAD.log" 2>&1
  rc=$?
  (cd "$RES" && tar czf "$OUTDIR/gpu-$WORKLOAD.tgz" .)
  grep -v "^$WORKLOAD |" "$RES/$WORKLOAD.log" | tail -150
  exit "$rc"
  ;;
*)
  echo "usage: bash bench/gpu_run.sh prepare|run|variants|decode|varlen|headdims" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# The experimental prefetches across programs, in one device call: are they
# correct, and do they beat the default kernels?
#   --program-tiles=k --program-prefetch     the next program's Q by bulk
#                                            copies while the current one runs
#   --program-prefetch-l2                    and its first K/V blocks into L2
#   --program-prefetch-kv                    or into their shared-memory slots,
#                                            by the last loop's copies past
#                                            the end
#   --prefetch-ahead=N                       one program per thread block: the
#                                            first blocks of the thread block
#                                            N x (SM count) on into L2
#   bash bench/program_prefetch.sh prepare   # here: fills .carry/pp
#   bash bench/program_prefetch.sh run       # on the GPU machine, carrying .carry/pp
# `prepare` compiles the benchmark kernels nine ways: the default (k1);
# with --prefetch-ahead=N for N = 1, 2, 3 (k1-ahead1, k1-ahead2, k1-ahead3);
# at k = 2 the program loop of before (k2-loop), with Q's bulk copies (k2),
# with them and the L2 prefetch (k2-l2), with them and the first K/V block
# in its slot (k2-kv); and k = 4 with Q's and the L2 prefetch (k4-l2). It also compiles the GPU matrix at
# k = 2 with both program prefetches (its tf32 kernels with cached Q
# fragments take the bulk copies; every kernel whose first blocks are
# loaded outside a branch takes the L2 prefetches).
# `run` checks the matrix against torch's float64 reference (gpu_check.py),
# then times each of $AB (default: k1-ahead2 k2-l2 k2-kv) against the default in
# the same process (ab_kernels.py, the seed workload at T = 128, 256, 512;
# it also checks that B's output matches A's), and prints the tables. About
# 60 s for the matrix and 100-130 s per A/B on the H200. With TIMELINE=1 it
# also stamps the phases of the k = 2 kernels at T=256
# (program_timeline.py, about 30 s each), and AB16="k1-ahead2 ..." times
# those against the default on the 16-bit D128 causal kernels at T = 2048
# and 4096. A second call, say `MATRIX=0 AB="k1-ahead1 k1-ahead3"
# AB16=k1-ahead2 TIMELINE=1`, does what the first had no time for (k2,
# k2-loop and k4-l2 are there to be named in AB).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PP="$ROOT/.carry/pp"
case "${1:-}" in
prepare)
  set -e
  BUILD="${ATTN_BUILD:-$ROOT/build}"
  PY="${PYTHON:-python3}"
  "$PY" -c "import numpy" 2>/dev/null || PY=/usr/bin/python3
  rm -rf "$PP" && mkdir -p "$PP"
  T="$BUILD/bin/attn-translate"
  "$PY" "$ROOT/bench/compile_bench_kernels.py" --attn-translate "$T" --out "$PP/k1"
  bk() { # name, k, attn-translate arguments...
    local name=$1 k=$2
    shift 2
    "$PY" "$ROOT/bench/compile_bench_kernels.py" --attn-translate "$T" --out "$PP/$name" \
      --program-tiles "$k" "${@/#/--translate-arg=}"
  }
  for n in 1 2 3; do
    "$PY" "$ROOT/bench/compile_bench_kernels.py" --attn-translate "$T" --out "$PP/k1-ahead$n" \
      --translate-arg=--prefetch-ahead=$n
  done
  bk k2-loop 2
  bk k2 2 --program-prefetch
  bk k2-l2 2 --program-prefetch --program-prefetch-l2
  bk k2-kv 2 --program-prefetch --program-prefetch-kv
  bk k4-l2 4 --program-prefetch --program-prefetch-l2
  "$PY" "$ROOT/bench/compile_gpu_cases.py" --attn-translate "$T" --out "$PP/matrix" \
    --random 200 --jobs "$(nproc)" --program-tiles 2 --translate-arg=--program-prefetch \
    --translate-arg=--program-prefetch-l2 --translate-arg=--program-prefetch-kv
  du -sh "$ROOT/.carry"
  ;;
run)
  OUTDIR="${OUT:-/tmp/program-prefetch}"
  mkdir -p "$OUTDIR"
  failed=0
  start=$SECONDS
  if [ "${MATRIX:-1}" != 0 ]; then
    timeout 200 python3 "$ROOT/bench/gpu_check.py" "$PP/matrix" --out "$OUTDIR/matrix" \
      > "$OUTDIR/matrix.log" 2>&1 || failed=1
    echo "matrix: $((SECONDS - start))s $(tail -1 "$OUTDIR/matrix.log")"
  fi
  for b in ${AB:-k1-ahead2 k2-l2 k2-kv}; do
    start=$SECONDS
    timeout 150 python3 "$ROOT/bench/ab_kernels.py" --a "$PP/k1" --b "$PP/$b" \
      --kernels seed_causal,seed_mask --seed-seq 128,256,512 --rounds 50 \
      > "$OUTDIR/ab-$b.log" 2>&1 || failed=1
    echo "A = one program per thread block, B = $b ($((SECONDS - start))s)"
    grep "^| " "$OUTDIR/ab-$b.log"
  done
  # The 16-bit D128 causal kernels, whose margin over FA2 is smallest at
  # T = 2048-4096 (16k tokens per batch).
  for b in ${AB16:-}; do
    start=$SECONDS
    timeout 150 python3 "$ROOT/bench/ab_kernels.py" --a "$PP/k1" --b "$PP/$b" \
      --kernels f16_d128_causal,bf16_d128_causal --seq 2048,4096 --rounds 40 \
      > "$OUTDIR/ab16-$b.log" 2>&1 || failed=1
    echo "16-bit: A = the default, B = $b ($((SECONDS - start))s)"
    grep "^| " "$OUTDIR/ab16-$b.log"
  done
  # Where a program's time goes with and without the prefetch (clock64
  # stamps; `ready` is the first K block landed, Q having landed before).
  for b in $([ -n "${TIMELINE:-}" ] && echo k2-kv k2-loop); do
    timeout 90 python3 "$ROOT/bench/program_timeline.py" --kernels "$PP/$b" \
      --names seed_causal --seed-seq 256 --out "$OUTDIR/timeline-$b.json" \
      > "$OUTDIR/timeline-$b.log" 2>&1 || failed=1
    echo "timeline $b:"
    grep -v "^\s*$" "$OUTDIR/timeline-$b.log" | tail -12
  done
  exit "$failed"
  ;;
*)
  echo "usage: bash bench/program_prefetch.sh prepare|run" >&2
  exit 2
  ;;
esac

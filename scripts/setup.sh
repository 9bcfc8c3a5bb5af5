#!/usr/bin/env bash
# Installs what building and testing attn-mlir needs on Debian 12, then
# configures and builds it. Safe to run any number of times: each step is
# skipped when its result is already there. Sourced by main.sh, test.sh and
# fuzz.sh. ATTN_BUILD: the build folder (default build/); ATTN_SANITIZE=ON:
# configure it with ASan and UBSan (docs/Testing.md); ATTN_TARGETS: what to
# build (default: all mlir-doc).
set -euo pipefail

ATTN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ATTN_BUILD="${ATTN_BUILD:-$ATTN_ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22

DEB_PACKAGES=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22
              lld-22 ninja-build cmake ccache libgtest-dev python3-numpy zlib1g-dev
              libzstd-dev python3-venv python3-setuptools python3-pip
              nlohmann-json3-dev libfp16-dev libclang-rt-22-dev)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

export CCACHE_BASEDIR="$ATTN_ROOT"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"

if [ ! -f "$ATTN_BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ATTN_ROOT" -B "$ATTN_BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=$LLVM_PREFIX/bin/clang \
    -DCMAKE_CXX_COMPILER=$LLVM_PREFIX/bin/clang++ \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=$LLVM_PREFIX/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$LLVM_PREFIX/bin/lit \
    -DCMAKE_INSTALL_PREFIX="$ATTN_BUILD/install" \
    -DATTN_SANITIZE="${ATTN_SANITIZE:-OFF}"
fi
# shellcheck disable=SC2086 # a list of targets
cmake --build "$ATTN_BUILD" -j "$(nproc)" --target ${ATTN_TARGETS:-all mlir-doc}

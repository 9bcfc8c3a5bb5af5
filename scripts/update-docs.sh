#!/usr/bin/env bash
# Regenerates the op, dialect and pass reference from the .td files and
# copies it under docs/ (test/Docs/docs-current.test fails when they differ).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD:-$ROOT/build}"
cmake --build "$BUILD" --target mlir-doc
mkdir -p "$ROOT/docs/Dialects"
cp "$BUILD"/docs/Dialects/*.md "$ROOT/docs/Dialects/"
cp "$BUILD"/docs/AttnPasses.md "$BUILD"/docs/AttnConversionPasses.md "$ROOT/docs/"
echo "docs updated"

//===- ManifestV6Test.cpp - Tests of version 6 launch manifests -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Version 6 of the manifest format: packed sequences' offsets (cu_seqlens_q
// and cu_seqlens_k) and the size N: parsing, errors, the version a writer
// writes, the grid, the shape checks and the problem sizes.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "ManifestTestHelpers.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace attn::runtime;
using namespace attn::runtime::unittest;

namespace {

/// What attn-translate writes for a causal bf16 varlen prefill (sm_90a).
const char *const kExampleV6Text = R"({
  "format": "attn-mlir-manifest",
  "version": 6,
  "kernel": "f_kernel",
  "ptx": "f.ptx",
  "chip": "sm_90a",
  "function": "f",
  "element_type": "bf16",
  "query": {"shape": [1, 4, -1, 128]},
  "key": {"shape": [1, 2, -1, 128]},
  "value": {"shape": [1, 2, -1, 128]},
  "output": {"shape": [1, 4, -1, 128]},
  "mask": null,
  "cu_seqlens_q": {"element_type": "i32", "shape": [-1]},
  "cu_seqlens_k": {"element_type": "i32", "shape": [-1]},
  "attributes": {
    "scale": 0.0883883461356163,
    "causal": "top_left",
    "precision": null
  },
  "config": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},
  "block": [128, 1, 1],
  "grid": [{"add": [{"ceil_div": ["Tq", 64]}, {"add": ["N", 2]}]}, "Hq", "B"],
  "shared_memory_bytes": 82976,
  "params": [
    {"kind": "memref", "operand": "query", "rank": 4},
    {"kind": "memref", "operand": "key", "rank": 4},
    {"kind": "memref", "operand": "value", "rank": 4},
    {"kind": "memref", "operand": "cu_seqlens_q", "rank": 1},
    {"kind": "memref", "operand": "cu_seqlens_k", "rank": 1},
    {"kind": "memref", "operand": "output", "rank": 4},
    {
      "kind": "tensor_map",
      "operand": "key",
      "box": [1, 1, 64, 64],
      "swizzle": 128
    },
    {
      "kind": "tensor_map",
      "operand": "value",
      "box": [1, 1, 64, 64],
      "swizzle": 128
    }
  ]
}
)";

std::string editV6(const std::string &from, const std::string &to) {
  return editText(kExampleV6Text, from, to);
}

Manifest parseV6() {
  Manifest manifest;
  std::string error;
  EXPECT_TRUE(parseManifest(kExampleV6Text, manifest, error)) << error;
  return manifest;
}

std::string verifyError(const Manifest &manifest) {
  std::string error;
  EXPECT_FALSE(verifyManifest(manifest, error));
  return error;
}

OperandShapes makeShapes(int64_t tq, int64_t tk, int64_t offsets) {
  OperandShapes shapes;
  shapes.query = {1, 4, tq, 128};
  shapes.key = shapes.value = {1, 2, tk, 128};
  shapes.output = {1, 4, tq, 128};
  shapes.hasCuSeqlens = true;
  shapes.cuSeqlensQ = shapes.cuSeqlensK = {offsets};
  return shapes;
}

TEST(ManifestV6Test, ParsesAndWritesTheExample) {
  Manifest manifest = parseV6();
  EXPECT_EQ(manifest.getVersion(), 6);
  ASSERT_TRUE(manifest.cuSeqlensQ.has_value());
  ASSERT_TRUE(manifest.cuSeqlensK.has_value());
  EXPECT_EQ(manifest.cuSeqlensQ->elementType, ElementType::I32);
  EXPECT_EQ(manifest.cuSeqlensK->shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(manifest.grid[0].toString(), "add(ceil_div(Tq, 64), add(N, 2))");
  EXPECT_EQ(serializeManifest(manifest), kExampleV6Text);
  // Without the offsets, the version is what it was.
  manifest.cuSeqlensQ.reset();
  manifest.cuSeqlensK.reset();
  EXPECT_EQ(manifest.getVersion(), 3);
}

TEST(ManifestV6Test, Errors) {
  EXPECT_EQ(manifestError(editV6("\"version\": 6", "\"version\": 5")),
            "cu_seqlens_q: the key 'cu_seqlens_q' requires version 6 "
            "(this manifest has version 5)");
  EXPECT_EQ(
      manifestError(editV6("\"cu_seqlens_k\": {\"element_type\": \"i32\"",
                           "\"cu_seqlens_k\": {\"element_type\": \"f32\"")),
      "cu_seqlens_k.element_type: unknown element type 'f32' (expected i32)");
  Manifest manifest = parseV6();
  manifest.cuSeqlensK.reset();
  EXPECT_EQ(verifyError(manifest), "cu_seqlens_q and cu_seqlens_k go "
                                   "together, found only cu_seqlens_q");
  manifest = parseV6();
  manifest.cuSeqlensQ->shape = {5};
  manifest.cuSeqlensK->shape = {4};
  EXPECT_EQ(verifyError(manifest), "N disagrees: cu_seqlens_q.shape[0] is 5 "
                                   "but cu_seqlens_k.shape[0] is 4");
  manifest = parseV6();
  manifest.cuSeqlensQ->shape = {5, 1};
  EXPECT_EQ(verifyError(manifest),
            "cu_seqlens_q.shape has rank 2 (expected 1: N + 1)");
  manifest = parseV6();
  manifest.query.shape[0] = -1;
  manifest.key.shape[0] = manifest.value.shape[0] = -1;
  manifest.output.shape[0] = -1;
  EXPECT_EQ(verifyError(manifest),
            "query.shape[0] is -1 (expected 1 with cu_seqlens)");
  manifest = parseV6();
  manifest.params.erase(manifest.params.begin() + 4);
  EXPECT_EQ(verifyError(manifest), "params: the manifest has cu_seqlens but "
                                   "no memref param passes cu_seqlens_k");
  manifest = parseV6();
  manifest.cuSeqlensQ.reset();
  manifest.cuSeqlensK.reset();
  EXPECT_EQ(verifyError(manifest),
            "params[3]: operand 'cu_seqlens_q' but the manifest has no "
            "cu_seqlens");
}

TEST(ManifestV6Test, SizesAndGrid) {
  Manifest manifest = parseV6();
  ProblemSizes sizes;
  std::string error;
  ASSERT_TRUE(
      inferProblemSizes(manifest, makeShapes(1000, 900, 4), sizes, error))
      << error;
  EXPECT_EQ(sizes.N, 3);
  EXPECT_EQ(sizes.toString(), "B=1 Hq=4 Hkv=2 Tq=1000 Tk=900 D=128 Dv=128 N=3");
  unsigned grid[3];
  ASSERT_TRUE(evaluateGrid(manifest, sizes, grid, error)) << error;
  // ceil(1000 / 64) + 3 + 2 slots.
  EXPECT_EQ(grid[0], 21u);
  EXPECT_EQ(grid[1], 4u);
  EXPECT_EQ(grid[2], 1u);

  OperandShapes shapes = makeShapes(1000, 900, 4);
  shapes.cuSeqlensK = {5};
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "cu_seqlens_k: dimension 0 (N + 1) is 5 but cu_seqlens_q "
                   "has 4");
  shapes = makeShapes(1000, 900, 4);
  shapes.hasCuSeqlens = false;
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "the kernel was compiled with cu_seqlens (?xi32) but none "
                   "were given");
  shapes = makeShapes(1000, 900, 4);
  shapes.query[0] = shapes.output[0] = 2;
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
}

} // namespace

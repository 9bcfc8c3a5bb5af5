//===- ManifestV7Test.cpp - Tests of version 7 launch manifests -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Version 7 of the manifest format: a paged KV cache's block table (its
// shape B x P and the page size): parsing, errors, the version a writer
// writes, the shape checks and the problem sizes (Tk = P * page).
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

/// What attn-translate writes for a bf16 prefill over a paged cache of
/// 16-key pages with kv_lengths and the log-sum-exp (sm_90a).
const char *const kExampleV7Text = R"({
  "format": "attn-mlir-manifest",
  "version": 7,
  "kernel": "f_kernel",
  "ptx": "f.ptx",
  "chip": "sm_90a",
  "function": "f",
  "element_type": "bf16",
  "query": {"shape": [-1, 32, -1, 64]},
  "key": {"shape": [-1, 8, 16, 64]},
  "value": {"shape": [-1, 8, 16, 64]},
  "output": {"shape": [-1, 32, -1, 64]},
  "lse": {"shape": [-1, 32, -1]},
  "mask": null,
  "kv_lengths": {"element_type": "i32", "shape": [-1]},
  "block_table": {"element_type": "i32", "shape": [-1, -1], "page_size": 16},
  "attributes": {"scale": 0.125, "causal": "bottom_right", "precision": null},
  "config": {"block_m": 64, "block_n": 16, "num_warps": 4, "num_stages": 2},
  "block": [128, 1, 1],
  "grid": [{"ceil_div": ["Tq", 64]}, "Hq", "B"],
  "shared_memory_bytes": 17440,
  "params": [
    {"kind": "memref", "operand": "query", "rank": 4},
    {"kind": "memref", "operand": "key", "rank": 4},
    {"kind": "memref", "operand": "value", "rank": 4},
    {"kind": "memref", "operand": "kv_lengths", "rank": 1},
    {"kind": "memref", "operand": "block_table", "rank": 2},
    {"kind": "memref", "operand": "output", "rank": 4},
    {"kind": "memref", "operand": "lse", "rank": 3},
    {
      "kind": "tensor_map",
      "operand": "key",
      "box": [1, 1, 16, 64],
      "swizzle": 128
    },
    {
      "kind": "tensor_map",
      "operand": "value",
      "box": [1, 1, 16, 64],
      "swizzle": 128
    }
  ]
}
)";

std::string editV7(const std::string &from, const std::string &to) {
  return editText(kExampleV7Text, from, to);
}

Manifest parseV7() {
  Manifest manifest;
  std::string error;
  EXPECT_TRUE(parseManifest(kExampleV7Text, manifest, error)) << error;
  return manifest;
}

std::string verifyError(const Manifest &manifest) {
  std::string error;
  EXPECT_FALSE(verifyManifest(manifest, error));
  return error;
}

/// B batches of P pages of 16 keys in a pool of NP pages.
OperandShapes makeShapes(int64_t batch, int64_t tq, int64_t pages,
                         int64_t pool) {
  OperandShapes shapes;
  shapes.query = {batch, 32, tq, 64};
  shapes.key = shapes.value = {pool, 8, 16, 64};
  shapes.output = {batch, 32, tq, 64};
  shapes.hasLse = true;
  shapes.lse = {batch, 32, tq};
  shapes.hasKvLengths = true;
  shapes.kvLengths = {batch};
  shapes.hasBlockTable = true;
  shapes.blockTable = {batch, pages};
  return shapes;
}

TEST(ManifestV7Test, ParsesAndWritesTheExample) {
  Manifest manifest = parseV7();
  EXPECT_EQ(manifest.getVersion(), 7);
  ASSERT_TRUE(manifest.blockTable.has_value());
  EXPECT_EQ(manifest.blockTable->elementType, ElementType::I32);
  EXPECT_EQ(manifest.blockTable->shape, (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(manifest.blockTable->pageSize, 16);
  EXPECT_EQ(serializeManifest(manifest), kExampleV7Text);
  // Without the table (and its param), the version is what it was: 5 for
  // kv_lengths.
  manifest.blockTable.reset();
  EXPECT_EQ(manifest.getVersion(), 5);
}

TEST(ManifestV7Test, Errors) {
  EXPECT_EQ(manifestError(editV7("\"version\": 7", "\"version\": 6")),
            "block_table: the key 'block_table' requires version 7 "
            "(this manifest has version 6)");
  EXPECT_EQ(
      manifestError(editV7("\"block_table\": {\"element_type\": \"i32\"",
                           "\"block_table\": {\"element_type\": \"f32\"")),
      "block_table.element_type: unknown element type 'f32' (expected i32)");
  EXPECT_EQ(manifestError(editV7("\"page_size\": 16", "\"page_size\": 32")),
            "block_table.page_size is 32 (expected key.shape[2], the keys of "
            "a page: 16)");
  EXPECT_EQ(manifestError(editV7("\"shape\": [-1, -1], \"page_size\"",
                                 "\"shape\": [-1], \"page_size\"")),
            "block_table.shape has rank 1 (expected 2: B x P)");
  Manifest manifest = parseV7();
  manifest.blockTable->shape = {4, -1};
  manifest.query.shape[0] = manifest.output.shape[0] = 3;
  manifest.lse->shape[0] = 3;
  manifest.kvLengths->shape = {3};
  EXPECT_EQ(verifyError(manifest), "B disagrees: query.shape[0] is 3 but "
                                   "block_table.shape[0] is 4");
  // The pool's size is no batch: a static NP other than B is fine.
  manifest = parseV7();
  manifest.query.shape[0] = manifest.output.shape[0] = 2;
  manifest.lse->shape[0] = 2;
  manifest.key.shape[0] = manifest.value.shape[0] = 100;
  std::string error;
  EXPECT_TRUE(verifyManifest(manifest, error)) << error;
  manifest = parseV7();
  manifest.params.erase(manifest.params.begin() + 4);
  EXPECT_EQ(verifyError(manifest), "params: the manifest has a block_table "
                                   "but no memref param passes it");
  manifest = parseV7();
  manifest.blockTable.reset();
  EXPECT_EQ(verifyError(manifest),
            "params[4]: operand 'block_table' but the manifest has no "
            "block_table");
}

TEST(ManifestV7Test, SizesAndShapes) {
  Manifest manifest = parseV7();
  ProblemSizes sizes;
  std::string error;
  // Tk = P * page = 5 * 16; the pool (100 pages) is no size.
  ASSERT_TRUE(
      inferProblemSizes(manifest, makeShapes(3, 40, 5, 100), sizes, error))
      << error;
  EXPECT_EQ(sizes.toString(), "B=3 Hq=32 Hkv=8 Tq=40 Tk=80 D=64 Dv=64");
  unsigned grid[3];
  ASSERT_TRUE(evaluateGrid(manifest, sizes, grid, error)) << error;
  EXPECT_EQ(grid[0], 1u);
  EXPECT_EQ(grid[1], 32u);
  EXPECT_EQ(grid[2], 3u);

  OperandShapes shapes = makeShapes(3, 40, 5, 100);
  shapes.blockTable = {2, 5};
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "block_table: dimension 0 (B) is 2 but query has B = 3 "
                   "(query 3x32x40x64, block_table 2x5)");
  shapes = makeShapes(3, 40, 5, 100);
  shapes.hasBlockTable = false;
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "the kernel was compiled with a block_table (?x?xi32) but "
                   "none was given");
  shapes = makeShapes(3, 40, 5, 100);
  shapes.value[0] = 99;
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "value: dimension 0 (NP) is 99 but key has NP = 100 (key "
                   "100x8x16x64, value 99x8x16x64)");
  shapes = makeShapes(3, 40, 5, 100);
  shapes.key[2] = shapes.value[2] = 32;
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  // An older manifest's shapes with a table: refused.
  Manifest older = parseV7();
  older.blockTable.reset();
  older.params.erase(older.params.begin() + 4);
  EXPECT_FALSE(checkShapes(older, makeShapes(3, 40, 5, 100), error));
  EXPECT_EQ(error, "a block_table was given but the kernel was compiled "
                   "without one");
}

} // namespace

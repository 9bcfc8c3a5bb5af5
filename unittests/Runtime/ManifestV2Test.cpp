//===- ManifestV2Test.cpp - Tests of version 2 launch manifests -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Version 2 of the manifest format: workspaces, prologue kernels and
// "workspace" params (parsing, errors, serialization, equality), the
// evaluation of workspace shapes and bytes, and parameter packing with
// workspaces.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "ManifestTestHelpers.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

using namespace attn::runtime;
using namespace attn::runtime::unittest;

namespace {

std::string editV2(const std::string &from, const std::string &to) {
  return editText(kExampleV2Text, from, to);
}

//===----------------------------------------------------------------------===//
// The format
//===----------------------------------------------------------------------===//

TEST(ManifestV2Test, ParsesTheDocumentedExample) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(kExampleV2Text, manifest, error)) << error;
  EXPECT_EQ(manifest, makeExampleV2Manifest());
  EXPECT_EQ(manifest.getVersion(), 2);
  EXPECT_EQ(manifest.getNumParamSlots(), 6u * 11u + 1u);
  ASSERT_EQ(manifest.workspaces.size(), 1u);
  const WorkspaceSpec *map = manifest.getWorkspace("mask_block_map");
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map, &manifest.workspaces[0]);
  EXPECT_EQ(map->elementBytes, 1);
  ASSERT_EQ(map->shape.size(), 4u);
  EXPECT_EQ(map->shape[3].toString(), "ceil_div(Tk, 64)");
  EXPECT_EQ(manifest.getWorkspace("mask"), nullptr);
  ASSERT_EQ(manifest.prologue.size(), 1u);
  const PrologueKernel &prologue = manifest.prologue[0];
  EXPECT_EQ(prologue.kernel, "attn_fwd_f_mask_map");
  EXPECT_EQ(prologue.block[0], 128u);
  EXPECT_EQ(prologue.grid[1].toString(), "ceil_div(Tq, 128)");
  EXPECT_EQ(prologue.sharedMemoryBytes, 0);
  EXPECT_EQ(prologue.getNumParamSlots(), 11u + 11u + 2u);
  EXPECT_EQ(manifest.params[5], KernelParam::workspace("mask_block_map", 4));
  EXPECT_EQ(manifest.params[5].getNumSlots(), 11u);

  // shared_memory_bytes of a prologue kernel is optional.
  ASSERT_TRUE(
      parseManifest(editV2("\"shared_memory_bytes\": 0,", ""), manifest, error))
      << error;
  EXPECT_EQ(manifest, makeExampleV2Manifest());
}

TEST(ManifestV2Test, RoundTrip) {
  Manifest original = makeExampleV2Manifest();
  // A second workspace, of 4-byte elements, used by the prologue only, and a
  // second prologue kernel with shared memory.
  WorkspaceSpec counts;
  counts.name = "row_counts";
  counts.elementBytes = 4;
  counts.shape = {GridExpr::size("B"),
                  GridExpr::binary(GridExpr::Kind::Max, GridExpr::size("Tq"),
                                   GridExpr::constant(1))};
  original.workspaces.push_back(counts);
  original.prologue[0].params.push_back(
      KernelParam::workspace("row_counts", 2));
  PrologueKernel second;
  second.kernel = "second";
  second.block[0] = 32;
  second.block[1] = 2;
  second.grid[0] = GridExpr::size("B");
  second.grid[2] = GridExpr::mul(GridExpr::size("Hq"), GridExpr::constant(2));
  second.sharedMemoryBytes = 1024;
  second.params = {KernelParam::size("B"), KernelParam::memref("query", 4)};
  original.prologue.push_back(second);

  for (const Manifest &manifest : {makeExampleV2Manifest(), original}) {
    std::string error;
    ASSERT_TRUE(verifyManifest(manifest, error)) << error;
    std::string text = serializeManifest(manifest);
    Manifest back;
    ASSERT_TRUE(parseManifest(text, back, error)) << error << "\n" << text;
    EXPECT_EQ(back, manifest) << text;
    EXPECT_EQ(serializeManifest(back), text);
    // Version 2, the new keys at the end.
    EXPECT_NE(text.find("\"version\": 2,"), std::string::npos) << text;
    size_t params = text.find("\n  \"params\": ");
    size_t workspace = text.find("\n  \"workspace\": ");
    size_t prologue = text.find("\n  \"prologue\": ");
    ASSERT_NE(workspace, std::string::npos) << text;
    ASSERT_NE(prologue, std::string::npos) << text;
    EXPECT_LT(params, workspace);
    EXPECT_LT(workspace, prologue);
    EXPECT_EQ(text.substr(text.size() - 6), "  ]\n}\n");
  }
  std::string text = serializeManifest(original);
  EXPECT_NE(text.find("{\"kind\": \"workspace\", \"name\": \"row_counts\", "
                      "\"rank\": 2}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"name\": \"row_counts\",\n      \"element_bytes\": 4,"
                      "\n      \"shape\": [\"B\", {\"max\": [\"Tq\", 1]}]"),
            std::string::npos)
      << text;
}

TEST(ManifestV2Test, VersionFollowsTheContents) {
  // Version 2 without workspaces or prologue kernels is read, and written
  // back as version 1.
  std::string text = editText(kExampleText, "\"version\": 1", "\"version\": 2");
  text = editText(text, "\"params\": [",
                  "\"workspace\": [], \"prologue\": [], \"params\": [");
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(text, manifest, error)) << error;
  EXPECT_EQ(manifest, makeExampleManifest());
  EXPECT_EQ(manifest.getVersion(), 1);
  EXPECT_NE(serializeManifest(manifest).find("\"version\": 1,"),
            std::string::npos);
  EXPECT_EQ(serializeManifest(manifest).find("workspace"), std::string::npos);

  // A prologue kernel alone makes version 2.
  manifest.prologue.push_back(makeExampleV2Manifest().prologue[0]);
  manifest.prologue[0].params = {KernelParam::memref("query", 4)};
  EXPECT_EQ(manifest.getVersion(), 2);
  ASSERT_TRUE(verifyManifest(manifest, error)) << error;
  EXPECT_NE(serializeManifest(manifest).find("\"version\": 2,"),
            std::string::npos);
}

TEST(ManifestV2Test, Equality) {
  const Manifest base = makeExampleV2Manifest();
  Manifest other = base;
  EXPECT_EQ(other, base);
  other.workspaces[0].name = "other";
  EXPECT_NE(other, base);
  other = base;
  other.workspaces[0].elementBytes = 2;
  EXPECT_NE(other, base);
  other = base;
  other.workspaces[0].shape[0] = GridExpr::constant(2);
  EXPECT_NE(other, base);
  other = base;
  other.workspaces.clear();
  EXPECT_NE(other, base);
  other = base;
  other.prologue[0].kernel = "other";
  EXPECT_NE(other, base);
  other = base;
  other.prologue[0].block[2] = 2;
  EXPECT_NE(other, base);
  other = base;
  other.prologue[0].grid[2] = GridExpr::size("B");
  EXPECT_NE(other, base);
  other = base;
  other.prologue[0].sharedMemoryBytes = 16;
  EXPECT_NE(other, base);
  other = base;
  other.prologue[0].params.pop_back();
  EXPECT_NE(other, base);
  other = base;
  other.prologue.clear();
  EXPECT_NE(other, base);
  // A workspace param compares its name and rank.
  EXPECT_NE(KernelParam::workspace("a", 4), KernelParam::workspace("a", 3));
  EXPECT_NE(KernelParam::workspace("a", 4), KernelParam::workspace("b", 4));
  EXPECT_FALSE(KernelParam::workspace("Tk", 0) == KernelParam::size("Tk"));
}

TEST(ManifestV2Test, VersionErrors) {
  EXPECT_EQ(manifestError(editV2("\"version\": 2", "\"version\": 8")),
            "version: unsupported manifest version 8 (this "
            "reader supports versions 1, 2, 3, 4, 5, 6 and 7)");
  // The keys and the param kind of version 2 in a version 1 manifest.
  EXPECT_EQ(manifestError(editV2("\"version\": 2", "\"version\": 1")),
            "workspace: the key 'workspace' requires "
            "version 2 (this manifest has version 1)");
  EXPECT_EQ(manifestError(editText(kExampleText, "\"params\": [",
                                   "\"prologue\": [], \"params\": [")),
            "prologue: the key 'prologue' requires "
            "version 2 (this manifest has version 1)");
  EXPECT_EQ(manifestError(editText(kExampleText,
                                   "{\"kind\": \"size\", \"name\": \"Tk\"}",
                                   "{\"kind\": \"workspace\", \"name\": \"m\", "
                                   "\"rank\": 1}")),
            "params[4].kind: the param kind 'workspace' "
            "requires version 2 (this manifest has version 1)");
}

TEST(ManifestV2Test, WorkspaceErrors) {
  const std::string name = "{\"name\": \"mask_block_map\"";
  EXPECT_EQ(manifestError(editV2(name, "{\"name\": \"\"")),
            "workspace[0].name: the name is empty");
  EXPECT_EQ(manifestError(editV2(name, "{\"name\": \"mask\"")),
            "workspace[0].name: 'mask' is the name of an "
            "operand (query, key, value, mask, output)");
  EXPECT_EQ(manifestError(
                editV2("\"workspace\": [\n",
                       "\"workspace\": [\n    {\"name\": \"mask_block_map\", "
                       "\"element_bytes\": 4, \"shape\": [1]},\n")),
            "workspace[1].name: 'mask_block_map' is also the "
            "name of workspace[0]");
  EXPECT_EQ(
      manifestError(editV2("\"element_bytes\": 1", "\"element_bytes\": 3")),
      "workspace[0].element_bytes: 3 (expected 1, 2, 4 "
      "or 8)");
  EXPECT_EQ(
      manifestError(editV2("\"element_bytes\": 1", "\"element_bytes\": \"1\"")),
      "workspace[0].element_bytes: expected an integer, "
      "found a string");
  const std::string shape = "\"shape\": [1, 1, {\"ceil_div\": [\"Tq\", 128]}, "
                            "{\"ceil_div\": [\"Tk\", 64]}]";
  EXPECT_EQ(manifestError(editV2(shape, "\"shape\": []")),
            "workspace[0].shape: expected 1 .. 8 "
            "dimensions, found 0");
  EXPECT_EQ(manifestError(editV2(shape, "\"shape\": [1,1,1,1,1,1,1,1,1]")),
            "workspace[0].shape: expected 1 .. 8 "
            "dimensions, found 9");
  EXPECT_EQ(manifestError(editV2("{\"ceil_div\": [\"Tk\", 64]}]}",
                                 "{\"ceil_div\": [\"Tx\", 64]}]}")),
            "workspace[0].shape[3]: unknown "
            "size name 'Tx' (expected one of B, Hq, Hkv, Tq, Tk, D, Dv, N)");
  EXPECT_EQ(manifestError(editV2("\"element_bytes\": 1,",
                                 "\"element_bytes\": 1, \"align\": 16,")),
            "workspace[0]: unknown key 'align' (expected "
            "name, element_bytes, shape)");
  EXPECT_EQ(manifestError(editV2(",\n     " + shape, "")),
            "workspace[0]: missing key 'shape'");
  EXPECT_EQ(manifestError(
                editText(editV2("\"workspace\": [", "\"workspace\": {\"w\": ["),
                         "  ],\n  \"prologue\"", "  ]},\n  \"prologue\"")),
            "workspace: expected an array, found an object");

  // Workspace params.
  const std::string param =
      "{\"kind\": \"workspace\", \"name\": \"mask_block_map\", \"rank\": 4},\n"
      "    {\"kind\": \"size\"";
  EXPECT_EQ(manifestError(editV2(param, "{\"kind\": \"workspace\", \"name\": "
                                        "\"block_map\", \"rank\": 4},\n"
                                        "    {\"kind\": \"size\"")),
            "params[5]: unknown workspace 'block_map' "
            "(expected one of mask_block_map)");
  EXPECT_EQ(manifestError(editV2(param, "{\"kind\": \"workspace\", \"name\": "
                                        "\"mask_block_map\", \"rank\": 3},\n"
                                        "    {\"kind\": \"size\"")),
            "params[5]: rank 3 but workspace "
            "'mask_block_map' has rank 4");
  EXPECT_EQ(manifestError(editV2(param, "{\"kind\": \"workspace\", \"name\": "
                                        "\"mask_block_map\", \"rank\": 0},\n"
                                        "    {\"kind\": \"size\"")),
            "params[5]: rank 0 but workspace 'mask_block_map' has rank 4");
  EXPECT_EQ(manifestError(editV2(param, "{\"kind\": \"workspace\", "
                                        "\"operand\": \"mask_block_map\", "
                                        "\"rank\": 4},\n"
                                        "    {\"kind\": \"size\"")),
            "params[5]: unknown key 'operand' (expected "
            "kind, name, rank)");
  EXPECT_EQ(manifestError(editV2("{\"kind\": \"size\", \"name\": \"Tk\"}\n  ],",
                                 "{\"kind\": \"workspace\", \"name\": "
                                 "\"mask_block_map\", \"rank\": 4}\n  ],")),
            "params[6]: workspace 'mask_block_map' is "
            "passed twice");
  // A workspace no kernel takes.
  std::string unused = editV2(param, "{\"kind\": \"size\"");
  unused = editText(unused,
                    "{\"kind\": \"workspace\", \"name\": \"mask_block_map\", "
                    "\"rank\": 4},\n       ",
                    "");
  EXPECT_EQ(manifestError(unused),
            "workspace[0]: 'mask_block_map' is passed to no "
            "kernel (no param of kind workspace names it)");
  // No workspace at all.
  Manifest manifest = makeExampleManifest();
  manifest.params.push_back(KernelParam::workspace("map", 1));
  std::string error;
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(
      error,
      "params[5]: unknown workspace 'map' (the manifest has no workspace)");
}

TEST(ManifestV2Test, PrologueErrors) {
  EXPECT_EQ(
      manifestError(editV2("{\"kernel\": \"attn_fwd_f_mask_map\", ", "{")),
      "prologue[0]: missing key 'kernel'");
  EXPECT_EQ(manifestError(editV2("\"attn_fwd_f_mask_map\"", "\"\"")),
            "prologue[0].kernel: the entry name is empty");
  EXPECT_EQ(manifestError(editV2("\"prologue\": [\n", "\"prologue\": [ 1,\n")),
            "prologue[0]: expected an object, found a "
            "number");
  const std::string block = "\"block\": [128, 1, 1],\n     \"grid\"";
  EXPECT_EQ(
      manifestError(editV2(block, "\"block\": [0, 1, 1],\n     \"grid\"")),
      "prologue[0].block[0] must be >= 1");
  EXPECT_EQ(
      manifestError(editV2(block, "\"block\": [128, 16, 1],\n     \"grid\"")),
      "prologue[0].block has 2048 threads (at most "
      "1024 per block)");
  EXPECT_EQ(manifestError(editV2("{\"ceil_div\": [\"Tq\", 128]}, 1],",
                                 "{\"ceil_div\": [\"Tq\", 128]}],")),
            "prologue[0].grid: expected 3 dimensions, "
            "found 2");
  EXPECT_EQ(manifestError(editV2("\"grid\": [{\"ceil_div\": [\"Tk\", 64]}",
                                 "\"grid\": [{\"ceil_div\": [\"Tx\", 64]}")),
            "prologue[0].grid[0]: unknown "
            "size name 'Tx' (expected one of B, Hq, Hkv, Tq, Tk, D, Dv, N)");
  EXPECT_EQ(manifestError(editV2("\"shared_memory_bytes\": 0,",
                                 "\"shared_memory_bytes\": -1,")),
            "prologue[0].shared_memory_bytes is -1 "
            "(expected 0 .. 2^31-1)");
  EXPECT_EQ(
      manifestError(editV2("\"shared_memory_bytes\": 0,", "\"stream\": 0,")),
      "prologue[0]: unknown key 'stream' (expected "
      "kernel, block, grid, shared_memory_bytes, params)");
  const std::string sizeTq = "{\"kind\": \"size\", \"name\": \"Tq\"}";
  EXPECT_EQ(
      manifestError(editV2(sizeTq, "{\"kind\": \"sizes\", \"name\": \"Tq\"}")),
      "prologue[0].params[2].kind: unknown param "
      "kind 'sizes' (expected memref, size, workspace or tensor_map)");
  EXPECT_EQ(
      manifestError(editV2(sizeTq, "{\"kind\": \"size\", \"name\": \"T\"}")),
      "prologue[0].params[2].name: unknown size "
      "name 'T' (expected one of B, Hq, Hkv, Tq, Tk, D, Dv, N)");
  EXPECT_EQ(manifestError(editV2(sizeTq, "{\"kind\": \"memref\", \"operand\": "
                                         "\"mask\", \"rank\": 4}")),
            "prologue[0].params[2]: operand 'mask' is "
            "passed twice");
  const std::string mask = "{\"kind\": \"memref\", \"operand\": \"mask\", "
                           "\"rank\": 4},\n       {\"kind\": \"workspace\"";
  EXPECT_EQ(manifestError(editV2(mask, "{\"kind\": \"memref\", \"operand\": "
                                       "\"mask\", \"rank\": 2},\n"
                                       "       {\"kind\": \"workspace\"")),
            "prologue[0].params[0]: rank 2 but mask has "
            "rank 4");
  // A prologue kernel takes any subset of the operands.
  Manifest manifest;
  std::string error;
  EXPECT_TRUE(parseManifest(editV2(mask, "{\"kind\": \"memref\", \"operand\": "
                                         "\"query\", \"rank\": 4},\n"
                                         "       {\"kind\": \"workspace\""),
                            manifest, error))
      << error;

  // The rules verifyManifest checks on manifests built in code.
  manifest = makeExampleV2Manifest();
  manifest.prologue[0].block[0] = 0;
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error, "prologue[0].block[0] must be >= 1");
  manifest = makeExampleV2Manifest();
  manifest.prologue[0].kernel = "";
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error, "prologue[0].kernel: the entry name is empty");
  manifest = makeExampleV2Manifest();
  manifest.prologue[0].sharedMemoryBytes = -4;
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error,
            "prologue[0].shared_memory_bytes is -4 (expected 0 .. 2^31-1)");
  manifest = makeExampleV2Manifest();
  manifest.prologue[0].grid[2] = GridExpr::size("T");
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error, "prologue[0].grid[2]: unknown size name 'T' (expected one "
                   "of B, Hq, Hkv, Tq, Tk, D, Dv, N)");
  manifest = makeExampleV2Manifest();
  manifest.prologue[0].params.push_back(KernelParam::memref("bias", 4));
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error,
            "prologue[0].params[4].operand: unknown operand 'bias' (expected "
            "query, key, value, mask or output)");
  manifest = makeExampleV2Manifest();
  manifest.workspaces[0].elementBytes = 16;
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error, "workspace[0].element_bytes: 16 (expected 1, 2, 4 or 8)");
  manifest = makeExampleV2Manifest();
  manifest.workspaces[0].name = "output";
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error, "workspace[0].name: 'output' is the name of an operand "
                   "(query, key, value, mask, output)");
  manifest = makeExampleV2Manifest();
  manifest.workspaces.push_back(manifest.workspaces[0]);
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error, "workspace[1].name: 'mask_block_map' is also the name of "
                   "workspace[0]");
  manifest = makeExampleV2Manifest();
  manifest.workspaces[0].shape.clear();
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error, "workspace[0].shape: expected 1 .. 8 dimensions, found 0");
  // The operand rules stay about the main kernel.
  manifest = makeExampleV2Manifest();
  manifest.params.erase(manifest.params.begin() + 3); // mask
  EXPECT_FALSE(verifyManifest(manifest, error));
  EXPECT_EQ(error,
            "params: the manifest has a mask but no memref param passes it");
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

TEST(ManifestV2EvaluateTest, WorkspaceBytes) {
  Manifest manifest = makeExampleV2Manifest();
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  std::string error;
  ASSERT_TRUE(evaluateWorkspace(manifest.workspaces[0],
                                makeSizes(2, 32, 8, 1000, 300, 128, 128), shape,
                                bytes, error))
      << error;
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 1, 8, 5})); // ceil(300 / 64) = 5
  EXPECT_EQ(bytes, 40);

  WorkspaceSpec counts;
  counts.name = "counts";
  counts.elementBytes = 4;
  counts.shape = {GridExpr::size("B"), GridExpr::size("Hq"),
                  GridExpr::size("Tq")};
  ASSERT_TRUE(evaluateWorkspace(counts, makeSizes(3, 5, 5, 7, 1, 1, 1), shape,
                                bytes, error))
      << error;
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(bytes, 3 * 5 * 7 * 4);

  // Every dimension >= 1.
  EXPECT_FALSE(evaluateWorkspace(manifest.workspaces[0],
                                 makeSizes(2, 32, 8, 0, 300, 128, 128), shape,
                                 bytes, error));
  EXPECT_EQ(error, "workspace 'mask_block_map': shape[2] = ceil_div(Tq, 128) "
                   "= 0 must be >= 1 (B=2 Hq=32 Hkv=8 Tq=0 Tk=300 D=128 "
                   "Dv=128)");
  // Overflow: in an expression and in the bytes.
  counts.shape[1] =
      GridExpr::mul(GridExpr::size("Hq"), GridExpr::constant(INT64_MAX / 2));
  EXPECT_FALSE(evaluateWorkspace(counts, makeSizes(3, 5, 5, 7, 1, 1, 1), shape,
                                 bytes, error));
  EXPECT_EQ(error, "workspace 'counts': shape[1] = mul(Hq, "
                   "4611686018427387903): mul(Hq, 4611686018427387903): "
                   "overflow (B=3 Hq=5 Hkv=5 Tq=7 Tk=1 D=1 Dv=1)");
  counts.shape[1] = GridExpr::constant(INT64_MAX / 8);
  EXPECT_FALSE(evaluateWorkspace(counts, makeSizes(3, 5, 5, 7, 1, 1, 1), shape,
                                 bytes, error));
  EXPECT_EQ(error, "workspace 'counts': shape 3x1152921504606846975x... times "
                   "4 bytes per element overflows int64 (B=3 Hq=5 Hkv=5 Tq=7 "
                   "Tk=1 D=1 Dv=1)");

  // The grid of a prologue kernel.
  unsigned grid[3];
  ASSERT_TRUE(evaluateGrid(manifest.prologue[0],
                           makeSizes(2, 32, 8, 1000, 300, 128, 128), grid,
                           error))
      << error;
  EXPECT_EQ(grid[0], 5u);
  EXPECT_EQ(grid[1], 8u);
  EXPECT_EQ(grid[2], 1u);
  EXPECT_FALSE(evaluateGrid(manifest.prologue[0],
                            makeSizes(2, 32, 8, 1000, 0, 128, 128), grid,
                            error));
  EXPECT_EQ(error, "prologue kernel 'attn_fwd_f_mask_map': grid.x = "
                   "ceil_div(Tk, 64) = 0 is out of range (1 .. 2147483647) "
                   "for B=2 Hq=32 Hkv=8 Tq=1000 Tk=0 D=128 Dv=128");
}

/// The operands of makeExampleV2Manifest for B=2 Hq=32 Hkv=8 Tq=1000
/// Tk=300 D=Dv=128, without the workspace.
std::map<std::string, TensorArg> makeV2Operands() {
  std::map<std::string, TensorArg> operands;
  operands["query"] = makeContiguousTensorArg(0x10000, {2, 32, 1000, 128});
  operands["key"] = makeContiguousTensorArg(0x20000, {2, 8, 300, 128});
  operands["value"] = makeContiguousTensorArg(0x30000, {2, 8, 300, 128});
  operands["mask"] = makeContiguousTensorArg(0x40000, {1, 1, 1000, 300});
  operands["output"] = makeContiguousTensorArg(0x50000, {2, 32, 1000, 128});
  return operands;
}

TEST(ManifestV2EvaluateTest, PackParamsWithWorkspaces) {
  Manifest manifest = makeExampleV2Manifest();
  ProblemSizes sizes = makeSizes(2, 32, 8, 1000, 300, 128, 128);
  std::map<std::string, TensorArg> operands = makeV2Operands();
  // Only the pointer of a workspace is needed.
  operands["mask_block_map"].devicePtr = 0x60000;

  ParamPack pack;
  std::string error;
  ASSERT_TRUE(packParams(manifest, operands, sizes, pack, error)) << error;
  ASSERT_EQ(pack.size(), manifest.getNumParamSlots());
  // The workspace param comes after 5 memrefs of rank 4: pointer twice,
  // offset 0, the shape 1x1x8x5, row-major strides.
  std::vector<uint64_t> expected = {0x60000, 0x60000, 0,  1, 1, 8,
                                    5,       40,      40, 5, 1};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(pack.getValue(55 + i), expected[i]) << pack.getName(55 + i);
  EXPECT_EQ(pack.getName(55), "mask_block_map.allocated");
  EXPECT_EQ(pack.getName(56), "mask_block_map.aligned");
  EXPECT_EQ(pack.getName(57), "mask_block_map.offset");
  EXPECT_EQ(pack.getName(60), "mask_block_map.sizes[2]");
  EXPECT_EQ(pack.getName(65), "mask_block_map.strides[3]");
  EXPECT_EQ(pack.getName(66), "Tk");
  EXPECT_EQ(pack.getValue(66), 300u);
  EXPECT_EQ(pack.getName(33), "mask.allocated");
  EXPECT_EQ(pack.getValue(33), 0x40000u);

  // The prologue kernel's params: mask, workspace, Tq, Tk.
  ParamPack prologue;
  ASSERT_TRUE(packParams(manifest, manifest.prologue[0].params, operands, sizes,
                         prologue, error))
      << error;
  ASSERT_EQ(prologue.size(), manifest.prologue[0].getNumParamSlots());
  EXPECT_EQ(prologue.getName(0), "mask.allocated");
  EXPECT_EQ(prologue.getValue(0), 0x40000u);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(prologue.getValue(11 + i), expected[i])
        << prologue.getName(11 + i);
  EXPECT_EQ(prologue.getName(22), "Tq");
  EXPECT_EQ(prologue.getValue(22), 1000u);
  EXPECT_EQ(prologue.getValue(23), 300u);

  // A full TensorArg that agrees is accepted as well.
  std::map<std::string, TensorArg> full = operands;
  full["mask_block_map"] = makeContiguousTensorArg(0x60000, {1, 1, 8, 5});
  ParamPack same;
  ASSERT_TRUE(packParams(manifest, full, sizes, same, error)) << error;
  for (size_t i = 0; i < pack.size(); ++i)
    EXPECT_EQ(same.getValue(i), pack.getValue(i)) << pack.getName(i);

  // Errors.
  auto packError = [&](const std::map<std::string, TensorArg> &ops) {
    ParamPack unused;
    std::string message;
    EXPECT_FALSE(packParams(manifest, ops, sizes, unused, message));
    return message;
  };
  EXPECT_EQ(packError(makeV2Operands()), "missing workspace 'mask_block_map'");
  std::map<std::string, TensorArg> bad = operands;
  bad["mask_block_map"].devicePtr = 0;
  EXPECT_EQ(packError(bad),
            "workspace 'mask_block_map' has a null device pointer");
  bad = operands;
  bad["block_map"] = operands["mask_block_map"];
  EXPECT_EQ(packError(bad),
            "operand 'block_map' is not a parameter of kernel 'attn_fwd_f'");
  // A workspace whose evaluated shape is empty fails with its message.
  Manifest shrunk = manifest;
  shrunk.workspaces[0].shape[0] = GridExpr::size("B");
  shrunk.workspaces[0].shape[1] = GridExpr::binary(
      GridExpr::Kind::Add, GridExpr::size("Hq"), GridExpr::constant(-32));
  ParamPack unused;
  EXPECT_FALSE(packParams(shrunk, operands, sizes, unused, error));
  EXPECT_EQ(error, "workspace 'mask_block_map': shape[1] = add(Hq, -32) = 0 "
                   "must be >= 1 (B=2 Hq=32 Hkv=8 Tq=1000 Tk=300 D=128 "
                   "Dv=128)");
}

} // namespace

//===- ManifestTest.cpp - Tests of the launch manifest --------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The manifest format (parseManifest, verifyManifest, serializeManifest and
// the manifest files), grid evaluation, shape checks and parameter packing.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "ManifestTestHelpers.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

using namespace attn::runtime;
using namespace attn::runtime::unittest;

namespace {

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// A manifest that sets every field to a non-default value.
Manifest makeFullManifest() {
  Manifest manifest = makeExampleManifest();
  manifest.elementType = ElementType::F32;
  manifest.function = "attention_\"quoted\"";
  manifest.query.shape = {2, 32, -1, 64};
  manifest.key.shape = {2, 8, -1, 64};
  manifest.value.shape = {2, 8, -1, 96};
  manifest.output.shape = {2, 32, -1, 96};
  manifest.mask = MaskSpec{ElementType::I1, {-1, -1}};
  manifest.attributes.scale = 0.125;
  manifest.attributes.causal = CausalMode::BottomRight;
  manifest.attributes.precision = PrecisionMode::IEEE;
  manifest.config.extra.emplace_back("swizzle", "\"128B\"");
  manifest.config.extra.emplace_back("warp_specialize", "true");
  manifest.block[0] = 32;
  manifest.block[1] = 4;
  manifest.block[2] = 2;
  manifest.grid[0] = GridExpr::binary(GridExpr::Kind::Min,
                                      GridExpr::binary(GridExpr::Kind::Add,
                                                       GridExpr::size("Tk"),
                                                       GridExpr::constant(3)),
                                      GridExpr::constant(1000));
  manifest.grid[1] = GridExpr::binary(
      GridExpr::Kind::Max, GridExpr::size("Hkv"),
      GridExpr::mul(GridExpr::size("D"), GridExpr::size("Dv")));
  manifest.grid[2] = GridExpr::size("B");
  manifest.sharedMemoryBytes = 100000;
  manifest.params = {
      KernelParam::size("B"),           KernelParam::memref("mask", 2),
      KernelParam::memref("output", 4), KernelParam::memref("query", 4),
      KernelParam::memref("key", 4),    KernelParam::memref("value", 4),
      KernelParam::size("Dv")};
  return manifest;
}

TEST(ManifestTest, ParsesTheDocumentedExample) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(kExampleText, manifest, error)) << error;
  EXPECT_EQ(manifest, makeExampleManifest());
  EXPECT_EQ(manifest.getNumParamSlots(), 4u * 11u + 1u);
}

TEST(ManifestTest, RoundTrip) {
  for (const Manifest &original : {makeExampleManifest(), makeFullManifest()}) {
    std::string error;
    ASSERT_TRUE(verifyManifest(original, error)) << error;
    std::string text = serializeManifest(original);
    Manifest back;
    ASSERT_TRUE(parseManifest(text, back, error)) << error << "\n" << text;
    EXPECT_EQ(back, original) << text;
    EXPECT_EQ(serializeManifest(back), text);
    EXPECT_EQ(text.back(), '\n');
  }
}

/// What serializeManifest wrote for the example before version 2 existed:
/// a manifest without workspaces or prologue kernels is still written byte
/// for byte the same, as version 1.
const char *const kExampleSerialized = R"({
  "format": "attn-mlir-manifest",
  "version": 1,
  "kernel": "attn_fwd_f",
  "ptx": "f.ptx",
  "chip": "sm_90a",
  "function": "f",
  "element_type": "bf16",
  "query": {"shape": [-1, 32, -1, 128]},
  "key": {"shape": [-1, 8, -1, 128]},
  "value": {"shape": [-1, 8, -1, 128]},
  "output": {"shape": [-1, 32, -1, 128]},
  "mask": null,
  "attributes": {
    "scale": 0.08838834764831845,
    "causal": null,
    "precision": null
  },
  "config": {"block_m": 128, "block_n": 64, "num_warps": 4, "num_stages": 2},
  "block": [128, 1, 1],
  "grid": [{"ceil_div": ["Tq", 128]}, {"mul": ["B", "Hq"]}, 1],
  "shared_memory_bytes": 49152,
  "params": [
    {"kind": "memref", "operand": "query", "rank": 4},
    {"kind": "memref", "operand": "key", "rank": 4},
    {"kind": "memref", "operand": "value", "rank": 4},
    {"kind": "memref", "operand": "output", "rank": 4},
    {"kind": "size", "name": "Tk"}
  ]
}
)";

TEST(ManifestTest, Version1IsWrittenAsBefore) {
  Manifest manifest = makeExampleManifest();
  EXPECT_EQ(manifest.getVersion(), 1);
  EXPECT_EQ(serializeManifest(manifest), kExampleSerialized);
  Manifest back;
  std::string error;
  ASSERT_TRUE(parseManifest(kExampleSerialized, back, error)) << error;
  EXPECT_EQ(serializeManifest(back), kExampleSerialized);
}

TEST(ManifestTest, EveryField) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(
      parseManifest(serializeManifest(makeFullManifest()), manifest, error))
      << error;
  EXPECT_EQ(manifest.kernel, "attn_fwd_f");
  EXPECT_EQ(manifest.ptx, "f.ptx");
  EXPECT_EQ(manifest.chip, "sm_90a");
  EXPECT_EQ(manifest.function, "attention_\"quoted\"");
  EXPECT_EQ(manifest.elementType, ElementType::F32);
  EXPECT_EQ(manifest.query.shape, (std::vector<int64_t>{2, 32, -1, 64}));
  EXPECT_EQ(manifest.key.shape, (std::vector<int64_t>{2, 8, -1, 64}));
  EXPECT_EQ(manifest.value.shape, (std::vector<int64_t>{2, 8, -1, 96}));
  EXPECT_EQ(manifest.output.shape, (std::vector<int64_t>{2, 32, -1, 96}));
  ASSERT_TRUE(manifest.mask.has_value());
  EXPECT_EQ(manifest.mask->elementType, ElementType::I1);
  EXPECT_EQ(manifest.mask->shape, (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(manifest.attributes.scale, 0.125);
  EXPECT_EQ(manifest.attributes.causal, CausalMode::BottomRight);
  EXPECT_EQ(manifest.attributes.precision, PrecisionMode::IEEE);
  EXPECT_EQ(manifest.config.blockM, 128);
  EXPECT_EQ(manifest.config.blockN, 64);
  EXPECT_EQ(manifest.config.numWarps, 4);
  EXPECT_EQ(manifest.config.numStages, 2);
  ASSERT_EQ(manifest.config.extra.size(), 2u);
  EXPECT_EQ(manifest.config.extra[0].first, "swizzle");
  EXPECT_EQ(manifest.config.extra[1].second, "true");
  EXPECT_EQ(manifest.block[0], 32u);
  EXPECT_EQ(manifest.block[1], 4u);
  EXPECT_EQ(manifest.block[2], 2u);
  EXPECT_EQ(manifest.grid[0].toString(), "min(add(Tk, 3), 1000)");
  EXPECT_EQ(manifest.grid[1].toString(), "max(Hkv, mul(D, Dv))");
  EXPECT_EQ(manifest.grid[2].toString(), "B");
  EXPECT_EQ(manifest.sharedMemoryBytes, 100000);
  ASSERT_EQ(manifest.params.size(), 7u);
  EXPECT_EQ(manifest.params[0], KernelParam::size("B"));
  EXPECT_EQ(manifest.params[1], KernelParam::memref("mask", 2));
  EXPECT_EQ(manifest.params[6], KernelParam::size("Dv"));
  EXPECT_EQ(manifest.getNumParamSlots(), 1u + 7u + 4u * 11u + 1u);

  // Optional keys may be left out.
  ASSERT_TRUE(parseManifest(R"({"format": "attn-mlir-manifest", "version": 1,
      "kernel": "k", "ptx": "k.ptx", "chip": "sm_80", "element_type": "f16",
      "query": {"shape": [1, 1, 1, 16]}, "key": {"shape": [1, 1, 1, 16]},
      "value": {"shape": [1, 1, 1, 16]}, "output": {"shape": [1, 1, 1, 16]},
      "block": [32, 1, 1], "grid": [1, 1, 1],
      "params": [{"kind": "memref", "operand": "query", "rank": 4},
                 {"kind": "memref", "operand": "key", "rank": 4},
                 {"kind": "memref", "operand": "value", "rank": 4},
                 {"kind": "memref", "operand": "output", "rank": 4}]})",
                            manifest, error))
      << error;
  EXPECT_EQ(manifest.function, "");
  EXPECT_FALSE(manifest.mask.has_value());
  EXPECT_FALSE(manifest.attributes.scale.has_value());
  EXPECT_EQ(manifest.attributes.causal, CausalMode::None);
  EXPECT_EQ(manifest.config.blockM, 0);
  EXPECT_EQ(manifest.sharedMemoryBytes, 0);
}

/// kExampleText with `from` replaced by `to` (once).
std::string editExample(const std::string &from, const std::string &to) {
  return editText(kExampleText, from, to);
}

TEST(ManifestTest, Errors) {
  // Malformed JSON.
  EXPECT_EQ(manifestError(editExample("\"chip\": \"sm_90a\",", "\"chip\": ,")),
            "parse error at line 5, column 11: syntax error while parsing "
            "value - unexpected ','; expected '[', '{', or a literal");
  EXPECT_EQ(
      manifestError(editExample("\"ptx\": \"f.ptx\",", "\"ptx\": \"f.ptx\"")),
      "parse error at line 5, column 8: syntax error while parsing object - "
      "unexpected string literal; expected '}'");
  // Format and version.
  EXPECT_EQ(manifestError("[]"),
            "manifest: expected an object, found an array");
  EXPECT_EQ(manifestError(editExample("attn-mlir-manifest", "other")),
            "format: 'other' is not an attn-mlir launch "
            "manifest (expected 'attn-mlir-manifest')");
  EXPECT_EQ(manifestError(editExample("\"version\": 1", "\"version\": 8")),
            "version: unsupported manifest version 8 (this "
            "reader supports versions 1, 2, 3, 4, 5, 6 and 7)");
  EXPECT_EQ(manifestError(editExample("\"version\": 1", "\"version\": 0")),
            "version: unsupported manifest version 0 (this "
            "reader supports versions 1, 2, 3, 4, 5, 6 and 7)");
  // Keys.
  EXPECT_EQ(manifestError(editExample("\"ptx\": \"f.ptx\",", "")),
            "missing key 'ptx'");
  std::string unknown = manifestError(
      editExample("\"chip\": \"sm_90a\",", "\"chip\": \"sm_90a\", \"x\": 1,"));
  EXPECT_EQ(unknown.substr(0, 28), "unknown key 'x' (expected fo");
  // Values.
  EXPECT_EQ(manifestError(editExample("\"bf16\"", "\"i1\"")),
            "element_type: unknown element type 'i1' "
            "(expected f32, f16 or bf16)");
  EXPECT_EQ(
      manifestError(editExample("[-1, 8, -1, 128]}", "[-1, 0, -1, 128]}")),
      "key.shape[1] is 0 (expected -1 for a dynamic size or a size >= 1)");
  EXPECT_EQ(manifestError(editExample("\"Tq\", 128", "\"Tx\", 128")),
            "grid[0]: unknown size name 'Tx' "
            "(expected one of B, Hq, Hkv, Tq, Tk, D, Dv, N)");
  EXPECT_EQ(manifestError(editExample("{\"mul\": [\"B\", \"Hq\"]}",
                                      "{\"pow\": [\"B\", \"Hq\"]}")),
            "grid[1]: unknown operator 'pow' (expected "
            "ceil_div, mul, add, min or max)");
  EXPECT_EQ(manifestError(editExample("[\"B\", \"Hq\"]", "[\"B\"]")),
            "grid[1].mul: expected an array of 2 "
            "expressions, found 1");
  EXPECT_EQ(manifestError(editExample("\"Hq\"]}, 1 ]", "\"Hq\"]} ]")),
            "grid: expected 3 dimensions, found 2");
  EXPECT_EQ(manifestError(editExample("[128, 1, 1]", "[128.5, 1, 1]")),
            "block[0]: expected an integer, found a "
            "number with a fraction");
  EXPECT_EQ(manifestError(editExample("[128, 1, 1]", "[2048, 1, 1]")),
            "block has 2048 threads (at most 1024 per block)");
  EXPECT_EQ(manifestError(editExample("\"causal\": null", "\"causal\": true")),
            "attributes.causal: expected a string, found "
            "a boolean");
  EXPECT_EQ(manifestError(editExample("\"causal\": null", "\"causal\": \"x\"")),
            "attributes.causal: unknown causal mode 'x' "
            "(expected null, top_left or bottom_right)");
  EXPECT_EQ(manifestError(editExample("\"kind\": \"size\"", "\"kind\": \"f\"")),
            "params[4].kind: unknown param kind 'f' "
            "(expected memref, size, workspace or tensor_map)");
  EXPECT_EQ(manifestError(editExample("\"operand\": \"key\", \"rank\": 4",
                                      "\"operand\": \"key\", \"rank\": 3")),
            "params[1]: rank 3 but key has rank 4");
  EXPECT_EQ(manifestError(
                editExample("\"operand\": \"key\"", "\"operand\": \"mask\"")),
            "params[1]: operand 'mask' but the manifest "
            "has no mask");
  EXPECT_EQ(manifestError(
                editExample("\"operand\": \"key\"", "\"operand\": \"query\"")),
            "params[1]: operand 'query' is passed twice");
  EXPECT_EQ(manifestError(editExample("\"mask\":   null",
                                      "\"mask\": {\"element_type\": \"f32\", "
                                      "\"shape\": [-1, -1]}")),
            "params: the manifest has a mask but no memref "
            "param passes it");
  EXPECT_EQ(
      manifestError(editExample("[-1, 32, -1, 128]}", "[-1, 12, -1, 128]}")),
      "Hq disagrees: query.shape[1] is 12 but "
      "output.shape[1] is 32");
}

TEST(ManifestTest, Files) {
  std::string dir =
      ::testing::TempDir() + "attn_manifest_" + std::to_string(getpid());
  std::string path = dir + "_f.manifest.json";
  Manifest manifest = makeFullManifest();
  std::string error;
  ASSERT_TRUE(writeManifestFile(path, manifest, error)) << error;
  Manifest back;
  ASSERT_TRUE(readManifestFile(path, back, error)) << error;
  EXPECT_EQ(back, manifest);
  std::string directory = path.substr(0, path.find_last_of('/'));
  EXPECT_EQ(back.directory, directory);
  EXPECT_EQ(back.getPtxPath(), directory + "/f.ptx");
  std::remove(path.c_str());

  EXPECT_FALSE(readManifestFile(path, back, error));
  EXPECT_EQ(error.substr(0, path.size() + 15), path + ": cannot open: ");

  back.ptx = "/abs/k.ptx";
  EXPECT_EQ(back.getPtxPath(), "/abs/k.ptx");
  back.ptx = "k.ptx";
  back.directory = "";
  EXPECT_EQ(back.getPtxPath(), "k.ptx");
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

TEST(EvaluateTest, Grid) {
  Manifest manifest = makeExampleManifest();
  unsigned grid[3];
  std::string error;
  ASSERT_TRUE(evaluateGrid(manifest, makeSizes(2, 32, 8, 1000, 77, 128, 128),
                           grid, error))
      << error;
  EXPECT_EQ(grid[0], 8u); // ceil(1000 / 128)
  EXPECT_EQ(grid[1], 64u);
  EXPECT_EQ(grid[2], 1u);
  ASSERT_TRUE(evaluateGrid(manifest, makeSizes(1, 32, 8, 1024, 1, 128, 128),
                           grid, error));
  EXPECT_EQ(grid[0], 8u);
  ASSERT_TRUE(
      evaluateGrid(manifest, makeSizes(1, 32, 8, 1, 1, 128, 128), grid, error));
  EXPECT_EQ(grid[0], 1u);

  manifest = makeFullManifest();
  ASSERT_TRUE(
      evaluateGrid(manifest, makeSizes(3, 32, 8, 5, 10, 64, 96), grid, error))
      << error;
  EXPECT_EQ(grid[0], 13u);       // min(10 + 3, 1000)
  EXPECT_EQ(grid[1], 64u * 96u); // max(8, 64 * 96)
  EXPECT_EQ(grid[2], 3u);        // B
  ASSERT_TRUE(evaluateGrid(manifest, makeSizes(3, 32, 8, 5, 5000, 64, 96), grid,
                           error));
  EXPECT_EQ(grid[0], 1000u);

  int64_t value;
  EXPECT_FALSE(evaluateGridExpr(
      GridExpr::ceilDiv(GridExpr::size("Tq"), GridExpr::constant(0)),
      makeSizes(1, 1, 1, 1, 1, 1, 1), value, error));
  EXPECT_EQ(error, "ceil_div(Tq, 0): division by 0");
  EXPECT_FALSE(evaluateGridExpr(
      GridExpr::mul(GridExpr::constant(INT64_MAX / 2), GridExpr::constant(3)),
      ProblemSizes(), value, error));
  EXPECT_EQ(error, "mul(4611686018427387903, 3): overflow");

  // Out of the CUDA limits: y is at most 65535.
  manifest = makeExampleManifest();
  EXPECT_FALSE(evaluateGrid(manifest, makeSizes(4096, 32, 8, 1, 1, 128, 128),
                            grid, error));
  EXPECT_EQ(error, "grid.y = mul(B, Hq) = 131072 is out of range (1 .. 65535) "
                   "for B=4096 Hq=32 Hkv=8 Tq=1 Tk=1 D=128 Dv=128");
  EXPECT_FALSE(
      evaluateGrid(manifest, makeSizes(0, 32, 8, 1, 1, 128, 128), grid, error));
}

OperandShapes makeShapes(int64_t b, int64_t hq, int64_t hkv, int64_t tq,
                         int64_t tk, int64_t d, int64_t dv) {
  OperandShapes shapes;
  shapes.query = {b, hq, tq, d};
  shapes.key = {b, hkv, tk, d};
  shapes.value = {b, hkv, tk, dv};
  shapes.output = {b, hq, tq, dv};
  return shapes;
}

std::string shapeError(const Manifest &manifest, const OperandShapes &shapes) {
  std::string error;
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  return error;
}

TEST(EvaluateTest, CheckShapes) {
  Manifest manifest = makeExampleManifest();
  std::string error;
  ProblemSizes sizes;
  ASSERT_TRUE(inferProblemSizes(
      manifest, makeShapes(2, 32, 8, 100, 300, 128, 128), sizes, error))
      << error;
  EXPECT_EQ(sizes, makeSizes(2, 32, 8, 100, 300, 128, 128));

  EXPECT_EQ(shapeError(manifest, makeShapes(2, 32, 16, 100, 300, 128, 128)),
            "key: dimension 1 is 16 but the kernel was compiled for 8 "
            "(compiled shape ?x8x?x128, actual 2x16x300x128)");
  OperandShapes shapes = makeShapes(2, 32, 8, 100, 300, 128, 128);
  shapes.query = {2, 32, 128};
  EXPECT_EQ(shapeError(manifest, shapes),
            "query: rank is 3 but the kernel takes rank 4 (compiled shape "
            "?x32x?x128, actual 2x32x128)");
  shapes = makeShapes(2, 32, 8, 100, 300, 128, 128);
  shapes.value[0] = 3;
  EXPECT_EQ(shapeError(manifest, shapes),
            "value: dimension 0 (B) is 3 but query has B = 2 (query "
            "2x32x100x128, value 3x8x300x128)");
  shapes = makeShapes(2, 32, 8, 100, 300, 128, 128);
  shapes.value[2] = 299;
  EXPECT_EQ(shapeError(manifest, shapes),
            "value: dimension 2 (Tk) is 299 but key has Tk = 300 (key "
            "2x8x300x128, value 2x8x299x128)");
  shapes = makeShapes(2, 32, 8, 0, 300, 128, 128);
  EXPECT_EQ(shapeError(manifest, shapes),
            "query: dimension 2 is 0; every size must be >= 1 (compiled "
            "shape ?x32x?x128, actual 2x32x0x128)");
  shapes = makeShapes(2, 32, 8, 100, 300, 128, 128);
  shapes.hasMask = true;
  shapes.mask = {100, 300};
  EXPECT_EQ(shapeError(manifest, shapes),
            "a mask was given but the kernel was compiled without one");

  // GQA divisibility, with dynamic heads.
  manifest.query.shape[1] = manifest.output.shape[1] = -1;
  manifest.key.shape[1] = manifest.value.shape[1] = -1;
  EXPECT_EQ(shapeError(manifest, makeShapes(1, 12, 5, 4, 4, 128, 128)),
            "query has 12 heads, which is not a multiple of the 5 heads of "
            "key and value");

  // Masks: presence, rank, broadcasting.
  manifest = makeFullManifest(); // i1 mask ?x?
  shapes = makeShapes(2, 32, 8, 100, 300, 64, 96);
  EXPECT_EQ(shapeError(manifest, shapes),
            "the kernel was compiled with a mask (?x?xi1) but none was given");
  shapes.hasMask = true;
  shapes.mask = {100, 300};
  EXPECT_TRUE(checkShapes(manifest, shapes, error)) << error;
  shapes.mask = {1, 300};
  EXPECT_TRUE(checkShapes(manifest, shapes, error)) << error;
  shapes.mask = {100, 7};
  EXPECT_EQ(shapeError(manifest, shapes),
            "mask: dimension 1 is 7; it must be 1 or Tk = 300 to broadcast "
            "to B x Hq x Tq x Tk = 2x32x100x300 (mask 100x7)");
  shapes.mask = {1, 1, 100, 300};
  EXPECT_EQ(shapeError(manifest, shapes),
            "mask: rank is 4 but the kernel takes rank 2 (compiled shape ?x?, "
            "actual 1x1x100x300)");
  manifest.mask->shape = {-1, -1, -1, -1};
  manifest.params[1].rank = 4;
  ASSERT_TRUE(verifyManifest(manifest, error)) << error;
  shapes.mask = {2, 1, 100, 300};
  EXPECT_TRUE(checkShapes(manifest, shapes, error)) << error;
  shapes.mask = {2, 8, 100, 300};
  EXPECT_EQ(shapeError(manifest, shapes),
            "mask: dimension 1 is 8; it must be 1 or Hq = 32 to broadcast to "
            "B x Hq x Tq x Tk = 2x32x100x300 (mask 2x8x100x300)");
}

TEST(EvaluateTest, PackParamsWithCustomStrides) {
  Manifest manifest = makeExampleManifest();
  ProblemSizes sizes = makeSizes(2, 32, 8, 100, 300, 128, 128);
  std::map<std::string, TensorArg> operands;
  // The query lives in a (B, T, H, D) buffer and is passed as (B, H, T, D)
  // by permuting its strides, starting 8 elements (16 bytes) into the
  // buffer.
  TensorArg query;
  query.devicePtr = 0x7f0000001000;
  query.sizes = {2, 32, 100, 128};
  query.strides = {100 * 32 * 128, 128, 32 * 128, 1};
  query.offset = 8;
  operands["query"] = query;
  operands["key"] = makeContiguousTensorArg(0x7f0000100000, {2, 8, 300, 128});
  operands["value"] = makeContiguousTensorArg(0x7f0000200000, {2, 8, 300, 128});
  operands["output"] =
      makeContiguousTensorArg(0x7f0000300000, {2, 32, 100, 128});
  EXPECT_EQ(operands["key"].strides,
            (std::vector<int64_t>{8 * 300 * 128, 300 * 128, 128, 1}));

  ParamPack pack;
  std::string error;
  ASSERT_TRUE(packParams(manifest, operands, sizes, pack, error)) << error;
  ASSERT_EQ(pack.size(), manifest.getNumParamSlots());
  ASSERT_EQ(pack.size(), 45u);
  // query: allocated, aligned, offset, 4 sizes, 4 strides.
  std::vector<uint64_t> expectedQuery = {0x7f0000001000,
                                         0x7f0000001000,
                                         8,
                                         2,
                                         32,
                                         100,
                                         128,
                                         100 * 32 * 128,
                                         128,
                                         32 * 128,
                                         1};
  for (size_t i = 0; i < expectedQuery.size(); ++i)
    EXPECT_EQ(pack.getValue(i), expectedQuery[i]) << pack.getName(i);
  EXPECT_EQ(pack.getName(0), "query.allocated");
  EXPECT_EQ(pack.getName(1), "query.aligned");
  EXPECT_EQ(pack.getName(2), "query.offset");
  EXPECT_EQ(pack.getName(3), "query.sizes[0]");
  EXPECT_EQ(pack.getName(10), "query.strides[3]");
  EXPECT_EQ(pack.getValue(11), 0x7f0000100000u); // key.allocated
  EXPECT_EQ(pack.getName(33), "output.allocated");
  EXPECT_EQ(pack.getValue(33), 0x7f0000300000u);
  EXPECT_EQ(pack.getName(44), "Tk");
  EXPECT_EQ(pack.getValue(44), 300u);

  // getArgs points at 8-byte values, also after a move.
  ParamPack moved = std::move(pack);
  void **args = moved.getArgs();
  EXPECT_EQ(*static_cast<uint64_t *>(args[0]), 0x7f0000001000u);
  EXPECT_EQ(*static_cast<int64_t *>(args[2]), 8);
  EXPECT_EQ(*static_cast<int64_t *>(args[44]), 300);
  std::string description = moved.describe();
  EXPECT_NE(description.find("0 query.allocated = 0x7f0000001000\n"),
            std::string::npos)
      << description;
  EXPECT_NE(description.find("44 Tk = 300\n"), std::string::npos);

  // Errors.
  auto packError = [&](std::map<std::string, TensorArg> ops,
                       const ProblemSizes &problem) {
    ParamPack unused;
    std::string message;
    EXPECT_FALSE(packParams(manifest, ops, problem, unused, message));
    return message;
  };
  std::map<std::string, TensorArg> bad = operands;
  bad.erase("value");
  EXPECT_EQ(packError(bad, sizes), "missing operand 'value'");
  bad = operands;
  bad["mask"] = makeContiguousTensorArg(0x1000, {100, 300});
  EXPECT_EQ(packError(bad, sizes),
            "a mask was given but the kernel was compiled without one");
  bad = operands;
  bad["bias"] = makeContiguousTensorArg(0x1000, {100, 300});
  EXPECT_EQ(packError(bad, sizes),
            "operand 'bias' is not a parameter of kernel 'attn_fwd_f'");
  bad = operands;
  bad["key"].devicePtr = 0;
  EXPECT_EQ(packError(bad, sizes), "operand 'key' has a null device pointer");
  bad = operands;
  bad["key"].strides.pop_back();
  EXPECT_EQ(packError(bad, sizes),
            "operand 'key' has 4 sizes and 3 strides but the kernel takes a "
            "rank-4 memref");
  bad = operands;
  bad["key"].offset = -1;
  EXPECT_EQ(packError(bad, sizes), "operand 'key' has a negative offset -1");
  EXPECT_EQ(packError(operands, makeSizes(2, 32, 8, 100, 301, 128, 128)),
            "the operand shapes give B=2 Hq=32 Hkv=8 Tq=100 Tk=300 D=128 "
            "Dv=128 but the launch is for B=2 Hq=32 Hkv=8 Tq=100 Tk=301 "
            "D=128 Dv=128");
  bad = operands;
  bad["output"].sizes[1] = 16;
  EXPECT_EQ(packError(bad, sizes),
            "output: dimension 1 is 16 but the kernel was compiled for 32 "
            "(compiled shape ?x32x?x128, actual 2x16x100x128)");
  // Query, key, value and output move in 16-byte vectors (bf16 here).
  struct Misaligned {
    std::function<void(std::map<std::string, TensorArg> &)> change;
    const char *error;
  };
  const Misaligned misaligned[] = {
      {[](auto &ops) { ops["key"].offset = 5; },
       "operand 'key' starts at 0x7f000010000a (pointer + offset 5 "
       "elements); the kernel moves 16-byte vectors and needs it 16-byte "
       "aligned"},
      {[](auto &ops) {
         ops["output"].strides = {32 * 100 * 136, 100 * 136, 129, 1};
       },
       "operand 'output' has stride 129 in dimension 2 (258 bytes); the "
       "kernel moves 16-byte vectors and needs every stride but the last to "
       "be a multiple of 16 bytes"},
      {[](auto &ops) {
         ops["value"].strides = {8 * 300 * 256, 300 * 256, 256, 2};
       },
       "operand 'value' has stride 2 in its last dimension; the kernel "
       "needs it contiguous (1)"},
  };
  for (const Misaligned &c : misaligned) {
    bad = operands;
    c.change(bad);
    EXPECT_EQ(packError(bad, sizes), c.error);
  }
  // Rows that are not whole 16-byte vectors (D = 59 of bf16: 118 bytes)
  // move in 2-byte vectors, rows of 120 bytes (Dv = 60) in 8-byte ones.
  Manifest narrow = manifest;
  narrow.query.shape.back() = narrow.key.shape.back() = 59;
  narrow.value.shape.back() = narrow.output.shape.back() = 60;
  ProblemSizes narrowSizes = makeSizes(2, 32, 8, 100, 300, 59, 60);
  std::map<std::string, TensorArg> narrowOps = {
      {"query", makeContiguousTensorArg(0x7f0000001000, {2, 32, 100, 59})},
      {"key", makeContiguousTensorArg(0x7f0000100000, {2, 8, 300, 59})},
      {"value", makeContiguousTensorArg(0x7f0000200000, {2, 8, 300, 60})},
      {"output", makeContiguousTensorArg(0x7f0000300000, {2, 32, 100, 60})}};
  narrowOps["key"].offset = 3;
  ParamPack narrowPack;
  std::string narrowError;
  EXPECT_TRUE(
      packParams(narrow, narrowOps, narrowSizes, narrowPack, narrowError))
      << narrowError;
  narrowOps["value"].offset = 2;
  EXPECT_FALSE(
      packParams(narrow, narrowOps, narrowSizes, narrowPack, narrowError));
  EXPECT_EQ(narrowError,
            "operand 'value' starts at 0x7f0000200004 (pointer + offset 2 "
            "elements); the kernel moves 8-byte vectors and needs it 8-byte "
            "aligned");
  // An output in a (B, T, H, D) buffer, viewed as (B, H, T, D), is written
  // through its strides.
  bad = operands;
  bad["output"].strides = {100 * 32 * 128, 128, 32 * 128, 1};
  ParamPack strided;
  std::string message;
  EXPECT_TRUE(packParams(manifest, bad, sizes, strided, message)) << message;
}

} // namespace

//===- ManifestV5Test.cpp - Tests of version 5 launch manifests -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Version 5 of the manifest format: epilogue kernels (split-KV's combine,
// launched after the main kernel) and the kv_lengths operand: parsing,
// errors, serialization, the version a writer writes, the launch order, the
// grids, the shape checks and parameter packing.
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

std::string editV5(const std::string &from, const std::string &to) {
  return editText(kExampleV5Text, from, to);
}

std::string verifyError(const Manifest &manifest) {
  std::string error;
  EXPECT_FALSE(verifyManifest(manifest, error));
  return error;
}

const char *const kLengthsEntry =
    "\"kv_lengths\": {\"element_type\": \"i32\", \"shape\": [-1]},";
const char *const kLengthsParam =
    "{\"kind\": \"memref\", \"operand\": \"kv_lengths\", \"rank\": 1},";

//===----------------------------------------------------------------------===//
// The format
//===----------------------------------------------------------------------===//

TEST(ManifestV5Test, ParsesTheExample) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(kExampleV5Text, manifest, error)) << error;
  EXPECT_EQ(manifest, makeExampleV5Manifest());
  EXPECT_EQ(manifest.getVersion(), 5);
  ASSERT_TRUE(manifest.kvLengths.has_value());
  EXPECT_EQ(manifest.kvLengths->elementType, ElementType::I32);
  EXPECT_EQ(manifest.kvLengths->shape, (std::vector<int64_t>{-1}));
  ASSERT_EQ(manifest.epilogue.size(), 1u);
  const EpilogueKernel &combine = manifest.epilogue[0];
  EXPECT_EQ(combine.kernel, "decode_combine");
  EXPECT_EQ(combine.grid[0].toString(), "Tq");
  // query, key, output (rank 4), lse (rank 3), the two workspaces.
  EXPECT_EQ(combine.getNumParamSlots(), 3u * 11u + 9u + 13u + 11u);
  EXPECT_EQ(manifest.grid[0].toString(),
            "min(ceil_div(Tk, 256), ceil_div(264, mul(B, 8)))");
  // query, key, value, kv_lengths (3 + 2), the workspaces.
  EXPECT_EQ(manifest.getNumParamSlots(), 3u * 11u + 5u + 11u + 13u);
}

TEST(ManifestV5Test, LaunchOrder) {
  Manifest manifest = makeExampleV5Manifest();
  PrologueKernel first;
  first.kernel = "first";
  first.params = {KernelParam::memref("key", 4)};
  manifest.prologue.push_back(first);
  EpilogueKernel last = first;
  last.kernel = "last";
  manifest.epilogue.push_back(last);
  std::string error;
  ASSERT_TRUE(verifyManifest(manifest, error)) << error;
  std::vector<LaunchStep> steps = manifest.getLaunchOrder();
  ASSERT_EQ(steps.size(), 4u);
  std::vector<std::string> names, paths, described;
  std::vector<size_t> indices;
  for (const LaunchStep &step : steps) {
    names.push_back(step.kernel->kernel);
    paths.push_back(step.getPath());
    described.push_back(step.describe());
    indices.push_back(step.kernelIndex);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"first", "decode_kernel",
                                             "decode_combine", "last"}));
  EXPECT_EQ(paths, (std::vector<std::string>{"prologue[0]", "", "epilogue[0]",
                                             "epilogue[1]"}));
  EXPECT_EQ(described[2], "epilogue kernel 'decode_combine'");
  EXPECT_EQ(described[1], "kernel 'decode_kernel'");
  // getKernels(): the main kernel, the prologue, then the epilogue kernels.
  EXPECT_EQ(indices, (std::vector<size_t>{1, 0, 2, 3}));
  std::vector<const KernelLaunch *> kernels = manifest.getKernels();
  ASSERT_EQ(kernels.size(), 4u);
  for (const LaunchStep &step : steps)
    EXPECT_EQ(kernels[step.kernelIndex], step.kernel);
}

TEST(ManifestV5Test, RoundTripAndVersion) {
  Manifest manifest = makeExampleV5Manifest();
  std::string text = serializeManifest(manifest);
  EXPECT_NE(text.find("\"version\": 5,"), std::string::npos) << text;
  // kv_lengths right after the mask, the epilogue after the workspaces.
  EXPECT_NE(text.find("\"mask\": null,\n  \"kv_lengths\": {\"element_type\": "
                      "\"i32\", \"shape\": [-1]},\n  \"attributes\""),
            std::string::npos)
      << text;
  size_t workspace = text.find("\n  \"workspace\": ");
  size_t epilogue = text.find("\n  \"epilogue\": ");
  ASSERT_NE(epilogue, std::string::npos) << text;
  EXPECT_LT(workspace, epilogue);
  Manifest back;
  std::string error;
  ASSERT_TRUE(parseManifest(text, back, error)) << error << "\n" << text;
  EXPECT_EQ(back, manifest);
  EXPECT_EQ(serializeManifest(back), text);

  // Either of the two makes version 5.
  Manifest lengthsOnly = manifest;
  lengthsOnly.epilogue.clear();
  lengthsOnly.workspaces.clear();
  lengthsOnly.grid[0] = GridExpr::size("Tq");
  lengthsOnly.params = {
      KernelParam::memref("query", 4), KernelParam::memref("key", 4),
      KernelParam::memref("value", 4), KernelParam::memref("kv_lengths", 1),
      KernelParam::memref("output", 4)};
  lengthsOnly.lse.reset();
  ASSERT_TRUE(verifyManifest(lengthsOnly, error)) << error;
  EXPECT_EQ(lengthsOnly.getVersion(), 5);
  Manifest epilogueOnly = manifest;
  epilogueOnly.kvLengths.reset();
  epilogueOnly.params.erase(epilogueOnly.params.begin() + 3);
  ASSERT_TRUE(verifyManifest(epilogueOnly, error)) << error;
  EXPECT_EQ(epilogueOnly.getVersion(), 5);
  text = serializeManifest(epilogueOnly);
  EXPECT_EQ(text.find("kv_lengths"), std::string::npos) << text;
  ASSERT_TRUE(parseManifest(text, back, error)) << error << "\n" << text;
  EXPECT_EQ(back, epilogueOnly);
  // Without them, as before; a version 5 manifest without them reads too.
  EXPECT_EQ(makeExampleV4Manifest().getVersion(), 4);
  EXPECT_EQ(serializeManifest(makeExampleV4Manifest()).find("epilogue"),
            std::string::npos);
  ASSERT_TRUE(parseManifest(
      editText(kExampleText, "\"version\": 1", "\"version\": 5"), back, error))
      << error;
  EXPECT_EQ(back, makeExampleManifest());
  // Equality sees both.
  Manifest other = manifest;
  other.epilogue[0].grid[0] = GridExpr::size("Hq");
  EXPECT_NE(other, manifest);
  other = manifest;
  other.kvLengths->shape = {2};
  EXPECT_NE(other, manifest);
}

TEST(ManifestV5Test, ReadErrors) {
  // The keys of version 5 in older manifests: a reader of those would
  // launch the main kernel alone, or without the lengths.
  EXPECT_EQ(manifestError(editV5("\"version\": 5", "\"version\": 4")),
            "kv_lengths: the key 'kv_lengths' requires version 5 (this "
            "manifest has version 4)");
  EXPECT_EQ(manifestError(editText(editV5(kLengthsEntry, ""), "\"version\": 5",
                                   "\"version\": 4")),
            "epilogue: the key 'epilogue' requires version 5 (this manifest "
            "has version 4)");
  // (Older still, the workspaces and the lse are reported first.)
  EXPECT_EQ(manifestError(editV5("\"version\": 5", "\"version\": 3")),
            "lse: the key 'lse' requires version 4 (this manifest has "
            "version 3)");
  EXPECT_EQ(manifestError(editV5("\"version\": 5", "\"version\": 8")),
            "version: unsupported manifest version 8 (this reader supports "
            "versions 1, 2, 3, 4, 5, 6 and 7)");
  EXPECT_EQ(
      manifestError(editV5(kLengthsEntry, "\"kv_lengths\": {\"element_type\": "
                                          "\"i64\", \"shape\": [-1]},")),
      "kv_lengths.element_type: unknown element type 'i64' (expected "
      "i32)");
  EXPECT_EQ(manifestError(editV5(kLengthsEntry, "\"kv_lengths\": [-1],")),
            "kv_lengths: expected an object, found an array");
  EXPECT_EQ(manifestError(
                editV5(kLengthsEntry, "\"kv_lengths\": {\"shape\": [-1]},")),
            "kv_lengths: missing key 'element_type'");
  EXPECT_EQ(manifestError(editV5("\"epilogue\": [", "\"epilogue\": [ 1,")),
            "epilogue[0]: expected an object, found a number");
  EXPECT_EQ(manifestError(editV5("\"kernel\": \"decode_combine\", ", "")),
            "epilogue[0]: missing key 'kernel'");
  EXPECT_EQ(manifestError(editV5("\"grid\": [\"Tq\", \"Hq\", \"B\"]",
                                 "\"grid\": [\"Tq\", \"Hq\"]")),
            "epilogue[0].grid: expected 3 dimensions, found 2");
  EXPECT_EQ(manifestError(editV5("\"shared_memory_bytes\": 0,",
                                 "\"shared_memory_bytes\": 0, \"stream\": 1,")),
            "epilogue[0]: unknown key 'stream' (expected kernel, block, grid, "
            "shared_memory_bytes, params)");
}

TEST(ManifestV5Test, VerifyErrors) {
  // kv_lengths: the entry and the param go together.
  EXPECT_EQ(manifestError(editV5(kLengthsEntry, "")),
            "params[3]: operand 'kv_lengths' but the manifest has no "
            "kv_lengths");
  EXPECT_EQ(manifestError(editV5(kLengthsParam, "")),
            "params: the manifest has kv_lengths but no memref param passes "
            "them");
  Manifest manifest = makeExampleV5Manifest();
  manifest.kvLengths->shape = {-1, 1};
  EXPECT_EQ(verifyError(manifest),
            "kv_lengths.shape has rank 2 (expected 1: B)");
  manifest.kvLengths->shape = {0};
  EXPECT_EQ(verifyError(manifest), "kv_lengths.shape[0] is 0 (expected -1 "
                                   "for a dynamic size or a size >= 1)");
  manifest.kvLengths->shape = {3};
  manifest.query.shape[0] = 2;
  EXPECT_EQ(verifyError(manifest),
            "B disagrees: query.shape[0] is 2 but kv_lengths.shape[0] is 3");
  manifest = makeExampleV5Manifest();
  manifest.kvLengths->elementType = ElementType::I64;
  EXPECT_EQ(verifyError(manifest),
            "kv_lengths.element_type: 'i64' (expected i32)");
  manifest = makeExampleV5Manifest();
  manifest.params[3].rank = 2;
  EXPECT_EQ(verifyError(manifest),
            "params[3]: rank 2 but kv_lengths has rank 1");
  // Unknown operands name kv_lengths among the expected ones when there
  // are any; it is no tensor map and no workspace name.
  manifest = makeExampleV5Manifest();
  manifest.params[0].operand = "lengths";
  EXPECT_EQ(verifyError(manifest),
            "params[0].operand: unknown operand 'lengths' (expected query, "
            "key, value, mask, output, lse or kv_lengths)");
  manifest = makeExampleV5Manifest();
  manifest.params.push_back(KernelParam::tensorMap("kv_lengths", {1}, 0));
  EXPECT_EQ(verifyError(manifest),
            "params[6].operand: unknown operand 'kv_lengths' (expected query, "
            "key, value or output)");
  manifest = makeExampleV5Manifest();
  manifest.workspaces[1].name = "kv_lengths";
  manifest.params[4].name = "kv_lengths";
  manifest.epilogue[0].params[5].name = "kv_lengths";
  EXPECT_EQ(verifyError(manifest),
            "workspace[1].name: 'kv_lengths' is the name of an operand");

  // Epilogue kernels: the main kernel and the epilogue kernels together
  // pass every operand; each kernel passes one at most once.
  manifest = makeExampleV5Manifest();
  manifest.epilogue[0].params.erase(manifest.epilogue[0].params.begin() + 3);
  EXPECT_EQ(verifyError(manifest), "params: no memref param passes 'output'");
  manifest = makeExampleV5Manifest();
  manifest.epilogue[0].params.erase(manifest.epilogue[0].params.begin() + 2);
  EXPECT_EQ(verifyError(manifest),
            "params: the manifest has an lse but no memref param passes it");
  manifest = makeExampleV5Manifest();
  manifest.epilogue[0].params.push_back(KernelParam::memref("output", 4));
  EXPECT_EQ(verifyError(manifest),
            "epilogue[0].params[6]: operand 'output' is passed twice");
  // A prologue kernel's operands do not count: it runs before the main
  // kernel.
  manifest = makeExampleV5Manifest();
  PrologueKernel prologue = manifest.epilogue[0];
  manifest.epilogue.clear();
  manifest.prologue.push_back(prologue);
  EXPECT_EQ(verifyError(manifest), "params: no memref param passes 'output'");
  // The rules of a launch, as for prologue kernels.
  manifest = makeExampleV5Manifest();
  manifest.epilogue[0].kernel = "";
  EXPECT_EQ(verifyError(manifest),
            "epilogue[0].kernel: the entry name is empty");
  manifest = makeExampleV5Manifest();
  manifest.epilogue[0].block[0] = 2048;
  EXPECT_EQ(verifyError(manifest),
            "epilogue[0].block has 2048 threads (at most 1024 per block)");
  manifest = makeExampleV5Manifest();
  manifest.epilogue[0].grid[1] = GridExpr::size("H");
  EXPECT_EQ(verifyError(manifest),
            "epilogue[0].grid[1]: unknown size name 'H' (expected one of B, "
            "Hq, Hkv, Tq, Tk, D, Dv, N)");
  manifest = makeExampleV5Manifest();
  manifest.epilogue[0].params[4].name = "split";
  EXPECT_EQ(verifyError(manifest),
            "epilogue[0].params[4]: unknown workspace 'split' (expected one "
            "of split_output, split_lse)");
  manifest.epilogue[0].params[4].name = "split_output";
  manifest.epilogue[0].params[4].rank = 4;
  EXPECT_EQ(verifyError(manifest),
            "epilogue[0].params[4]: rank 4 but workspace 'split_output' has "
            "rank 5");
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

OperandShapes makeDecodeShapes(int64_t b, int64_t tk) {
  OperandShapes shapes;
  shapes.query = {b, 8, 3, 64};
  shapes.key = {b, 2, tk, 64};
  shapes.value = {b, 2, tk, 64};
  shapes.output = {b, 8, 3, 64};
  shapes.hasLse = true;
  shapes.lse = {b, 8, 3};
  shapes.hasKvLengths = true;
  shapes.kvLengths = {b};
  return shapes;
}

TEST(ManifestV5Test, GridsAndWorkspaces) {
  Manifest manifest = makeExampleV5Manifest();
  std::string error;
  // S = min(ceil(Tk / 256), ceil(264 / (8 B))): B = 1 is limited by the
  // keys up to 33 splits; B = 4 gets ceil(264 / 32) = 9.
  struct Case {
    int64_t b, tk;
    unsigned splits;
  } cases[] = {{1, 1, 1},        {1, 256, 1},    {1, 257, 2},     {1, 8448, 33},
               {1, 1 << 20, 33}, {4, 100000, 9}, {33, 100000, 1}, {1000, 5, 1}};
  for (const Case &c : cases) {
    ProblemSizes sizes;
    ASSERT_TRUE(
        inferProblemSizes(manifest, makeDecodeShapes(c.b, c.tk), sizes, error))
        << error;
    unsigned grid[3];
    ASSERT_TRUE(evaluateGrid(manifest, sizes, grid, error)) << error;
    EXPECT_EQ(grid[0], c.splits) << c.b << " " << c.tk;
    EXPECT_EQ(grid[1], 8u);
    EXPECT_EQ(grid[2], unsigned(c.b));
    std::vector<int64_t> shape;
    int64_t bytes;
    ASSERT_TRUE(
        evaluateWorkspace(manifest.workspaces[0], sizes, shape, bytes, error))
        << error;
    EXPECT_EQ(shape, (std::vector<int64_t>{c.splits, c.b, 8, 3, 64}));
    EXPECT_EQ(bytes, int64_t(c.splits) * c.b * 8 * 3 * 64 * 4);
    std::vector<LaunchStep> steps = manifest.getLaunchOrder();
    ASSERT_TRUE(evaluateGrid(steps[1], sizes, grid, error)) << error;
    EXPECT_EQ(grid[0], 3u);
    EXPECT_EQ(grid[1], 8u);
    EXPECT_EQ(grid[2], unsigned(c.b));
  }
  // An epilogue kernel's grid errors name it.
  manifest.epilogue[0].grid[0] = GridExpr::constant(0);
  unsigned grid[3];
  EXPECT_FALSE(evaluateGrid(manifest.getLaunchOrder()[1],
                            makeSizes(2, 8, 2, 3, 10, 64, 64), grid, error));
  EXPECT_EQ(error, "epilogue kernel 'decode_combine': grid.x = 0 = 0 is out "
                   "of range (1 .. 2147483647) for B=2 Hq=8 Hkv=2 Tq=3 Tk=10 "
                   "D=64 Dv=64");
  ASSERT_FALSE(evaluateGrid(manifest.getLaunchOrder()[0],
                            makeSizes(2, 8, 2, 3, 0, 64, 64), grid, error));
  EXPECT_EQ(error, "grid.x = min(ceil_div(Tk, 256), ceil_div(264, mul(B, 8))) "
                   "= 0 is out of range (1 .. 2147483647) for B=2 Hq=8 Hkv=2 "
                   "Tq=3 Tk=0 D=64 Dv=64");
}

TEST(ManifestV5Test, CheckShapes) {
  Manifest manifest = makeExampleV5Manifest();
  std::string error;
  ProblemSizes sizes;
  ASSERT_TRUE(
      inferProblemSizes(manifest, makeDecodeShapes(2, 300), sizes, error))
      << error;
  EXPECT_EQ(sizes, makeSizes(2, 8, 2, 3, 300, 64, 64));
  OperandShapes shapes = makeDecodeShapes(2, 300);
  shapes.kvLengths = {3};
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "kv_lengths: dimension 0 (B) is 3 but query has B = 2 "
                   "(query 2x8x3x64, kv_lengths 3)");
  shapes.kvLengths = {2, 1};
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "kv_lengths: rank is 2 but the kernel takes rank 1 "
                   "(compiled shape ?, actual 2x1)");
  shapes.hasKvLengths = false;
  EXPECT_FALSE(checkShapes(manifest, shapes, error));
  EXPECT_EQ(error, "the kernel was compiled with kv_lengths (?xi32) but none "
                   "were given");
  Manifest noLengths = manifest;
  noLengths.kvLengths.reset();
  noLengths.params.erase(noLengths.params.begin() + 3);
  EXPECT_FALSE(checkShapes(noLengths, makeDecodeShapes(2, 300), error));
  EXPECT_EQ(error, "kv_lengths were given but the kernel was compiled "
                   "without them");
}

TEST(ManifestV5Test, PackParams) {
  Manifest manifest = makeExampleV5Manifest();
  ProblemSizes sizes = makeSizes(2, 8, 2, 3, 1000, 64, 64);
  std::map<std::string, TensorArg> operands = {
      {"query", makeContiguousTensorArg(0x10000, {2, 8, 3, 64})},
      {"key", makeContiguousTensorArg(0x20000, {2, 2, 1000, 64})},
      {"value", makeContiguousTensorArg(0x30000, {2, 2, 1000, 64})},
      {"output", makeContiguousTensorArg(0x40000, {2, 8, 3, 64})},
      {"lse", makeContiguousTensorArg(0x50000, {2, 8, 3})},
      {"kv_lengths", makeContiguousTensorArg(0x60004, {2})},
      {"split_output", makeContiguousTensorArg(0x70000, {})},
      {"split_lse", makeContiguousTensorArg(0x80000, {})}};
  ParamPack pack;
  std::string error;
  ASSERT_TRUE(packParams(manifest, operands, sizes, pack, error)) << error;
  ASSERT_EQ(pack.size(), manifest.getNumParamSlots());
  // kv_lengths after three rank-4 memrefs: any 4-byte address.
  EXPECT_EQ(pack.getName(33), "kv_lengths.allocated");
  EXPECT_EQ(pack.getValue(33), 0x60004u);
  EXPECT_EQ(pack.getValue(36), 2u); // sizes[0]
  EXPECT_EQ(pack.getValue(37), 1u); // strides[0]
  // split_lse: S = min(ceil(1000 / 256), ceil(264 / 16)) = 4.
  EXPECT_EQ(pack.getName(41), "split_lse.sizes[0]");
  EXPECT_EQ(pack.getValue(41), 4u);
  // The epilogue kernel's params: output and lse, which the main kernel
  // does not take.
  ParamPack combine;
  ASSERT_TRUE(packParams(manifest, manifest.epilogue[0].params, operands, sizes,
                         combine, error))
      << error;
  ASSERT_EQ(combine.size(), manifest.epilogue[0].getNumParamSlots());
  EXPECT_EQ(combine.getName(22), "lse.allocated");
  EXPECT_EQ(combine.getName(31), "output.allocated");
  EXPECT_EQ(combine.getValue(31), 0x40000u);
  EXPECT_EQ(combine.getName(42), "split_output.allocated");
  EXPECT_EQ(combine.getValue(45), 4u); // split_output.sizes[0]

  auto packError = [&](const std::map<std::string, TensorArg> &ops) {
    ParamPack unused;
    std::string message;
    EXPECT_FALSE(packParams(manifest, ops, sizes, unused, message));
    return message;
  };
  std::map<std::string, TensorArg> bad = operands;
  bad.erase("output");
  // The main kernel's params do not need it, the launch does.
  EXPECT_EQ(packError(bad), "missing operand 'output'");
  bad = operands;
  bad.erase("kv_lengths");
  EXPECT_EQ(packError(bad), "missing operand 'kv_lengths'");
  bad = operands;
  bad["kv_lengths"].sizes = {3};
  EXPECT_EQ(packError(bad), "kv_lengths: dimension 0 (B) is 3 but query has "
                            "B = 2 (query 2x8x3x64, kv_lengths 3)");
  bad["kv_lengths"].sizes = {2};
  bad["kv_lengths"].strides = {2};
  EXPECT_EQ(packError(bad), "operand 'kv_lengths' has stride 2 in its last "
                            "dimension; the kernel reads it with 1");
  bad["kv_lengths"].devicePtr = 0;
  EXPECT_EQ(packError(bad), "operand 'kv_lengths' has a null device pointer");
  // The output's vector rules hold though only the combine kernel takes it.
  bad = operands;
  bad["output"].devicePtr = 0x40008;
  EXPECT_EQ(packError(bad),
            "operand 'output' starts at 0x40008 (pointer + offset 0 "
            "elements); the kernel moves 16-byte vectors and needs it "
            "16-byte aligned");
}

} // namespace

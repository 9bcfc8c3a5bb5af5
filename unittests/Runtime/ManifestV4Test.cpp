//===- ManifestV4Test.cpp - Tests of version 4 launch manifests -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Version 4 of the manifest format: the "lse" entry and memref param of a
// kernel that writes the log-sum-exp result (SPEC.md section 1.2): parsing,
// errors, serialization, the version a writer writes, the shape checks and
// parameter packing.
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

std::string editV4(const std::string &from, const std::string &to) {
  return editText(kExampleV4Text, from, to);
}

std::string verifyError(const Manifest &manifest) {
  std::string error;
  EXPECT_FALSE(verifyManifest(manifest, error));
  return error;
}

const char *const kLseEntry = "\"lse\":    {\"shape\": [-1, 32, -1]},";
const char *const kLseParam =
    "{\"kind\": \"memref\", \"operand\": \"lse\", \"rank\": 3},";

//===----------------------------------------------------------------------===//
// The format
//===----------------------------------------------------------------------===//

TEST(ManifestV4Test, ParsesTheDocumentedExample) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(kExampleV4Text, manifest, error)) << error;
  EXPECT_EQ(manifest, makeExampleV4Manifest());
  EXPECT_EQ(manifest.getVersion(), 4);
  ASSERT_TRUE(manifest.lse.has_value());
  EXPECT_EQ(manifest.lse->shape, (std::vector<int64_t>{-1, 32, -1}));
  EXPECT_EQ(manifest.getOperand("lse"), &*manifest.lse);
  EXPECT_EQ(makeExampleManifest().getOperand("lse"), nullptr);
  ASSERT_EQ(manifest.params.size(), 6u);
  EXPECT_EQ(manifest.params[4], KernelParam::memref("lse", 3));
  // Four rank-4 memrefs, one rank-3 memref (3 + 2 * 3), Tk.
  EXPECT_EQ(manifest.getNumParamSlots(), 4u * 11u + 9u + 1u);
}

TEST(ManifestV4Test, RoundTripAndVersion) {
  Manifest manifest = makeExampleV4Manifest();
  std::string text = serializeManifest(manifest);
  EXPECT_NE(text.find("\"version\": 4,"), std::string::npos) << text;
  // Right after the output, as docs/ManifestKernels.md lists it.
  EXPECT_NE(text.find("\"output\": {\"shape\": [-1, 32, -1, 128]},\n  "
                      "\"lse\": {\"shape\": [-1, 32, -1]},\n  \"mask\": null"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"kind\": \"memref\", \"operand\": \"lse\", "
                      "\"rank\": 3}"),
            std::string::npos)
      << text;
  Manifest back;
  std::string error;
  ASSERT_TRUE(parseManifest(text, back, error)) << error << "\n" << text;
  EXPECT_EQ(back, manifest);
  EXPECT_EQ(serializeManifest(back), text);

  // The LSE makes version 4 whatever else the kernel uses: with tensor maps
  // (version 3) and with a workspace (version 2).
  Manifest maps = makeExampleV3Manifest();
  maps.lse = OperandSpec{{-1, 32, -1}};
  maps.params.push_back(KernelParam::memref("lse", 3));
  ASSERT_TRUE(verifyManifest(maps, error)) << error;
  EXPECT_EQ(maps.getVersion(), 4);
  Manifest workspace = makeExampleV2Manifest();
  workspace.lse = OperandSpec{{-1, 32, -1}};
  workspace.params.push_back(KernelParam::memref("lse", 3));
  ASSERT_TRUE(verifyManifest(workspace, error)) << error;
  EXPECT_EQ(workspace.getVersion(), 4);
  text = serializeManifest(workspace);
  ASSERT_TRUE(parseManifest(text, back, error)) << error << "\n" << text;
  EXPECT_EQ(back, workspace);

  // Without it, as before: a kernel without the LSE is read by older
  // readers. A version 4 manifest without it is read too.
  EXPECT_EQ(makeExampleManifest().getVersion(), 1);
  EXPECT_EQ(serializeManifest(makeExampleManifest()).find("lse"),
            std::string::npos);
  ASSERT_TRUE(parseManifest(
      editText(kExampleText, "\"version\": 1", "\"version\": 4"), back, error))
      << error;
  EXPECT_EQ(back, makeExampleManifest());
  // Equality sees the LSE.
  EXPECT_NE(makeExampleV4Manifest(), makeExampleManifest());
  Manifest other = makeExampleV4Manifest();
  other.lse->shape[1] = -1;
  EXPECT_NE(other, makeExampleV4Manifest());
}

TEST(ManifestV4Test, ReadErrors) {
  // The key of version 4 in older manifests: a reader of those would not
  // know it.
  for (const char *version : {"1", "2", "3"})
    EXPECT_EQ(manifestError(editV4("\"version\": 4",
                                   std::string("\"version\": ") + version)),
              std::string("lse: the key 'lse' requires version 4 (this "
                          "manifest has version ") +
                  version + ")");
  EXPECT_EQ(manifestError(editV4(kLseEntry, "\"lse\": {\"shape\": 3},")),
            "lse.shape: expected an array, found a number");
  EXPECT_EQ(manifestError(editV4(kLseEntry, "\"lse\": [-1, 32, -1],")),
            "lse: expected an object, found an array");
  EXPECT_EQ(
      manifestError(editV4(kLseEntry, "\"lse\": {\"shape\": [-1, 32, -1], "
                                      "\"element_type\": \"f32\"},")),
      "lse: unknown key 'element_type' (expected shape)");
}

TEST(ManifestV4Test, VerifyErrors) {
  // The entry and the param go together.
  EXPECT_EQ(manifestError(editV4(kLseEntry, "")),
            "params[4]: operand 'lse' but the manifest has no lse");
  EXPECT_EQ(manifestError(editV4(kLseParam, "")),
            "params: the manifest has an lse but no memref param passes it");
  // Rank 3: B x Hq x Tq, sizes >= 1 or -1, agreeing with the query's.
  EXPECT_EQ(manifestError(
                editV4(kLseEntry, "\"lse\": {\"shape\": [-1, 32, -1, 1]},")),
            "lse.shape has rank 4 (expected 3: B x Hq x Tq)");
  EXPECT_EQ(manifestError(editV4(kLseEntry, "\"lse\": {\"shape\": [-1, 0, "
                                            "-1]},")),
            "lse.shape[1] is 0 (expected -1 for a dynamic size or a size "
            ">= 1)");
  EXPECT_EQ(
      manifestError(editV4(kLseEntry, "\"lse\": {\"shape\": [-1, 16, -1]},")),
      "Hq disagrees: query.shape[1] is 32 but lse.shape[1] is 16");
  Manifest manifest = makeExampleV4Manifest();
  manifest.query.shape = {2, 32, 100, 128};
  manifest.lse->shape = {2, 32, 99};
  EXPECT_EQ(verifyError(manifest),
            "Tq disagrees: query.shape[2] is 100 but lse.shape[2] is 99");
  manifest.lse->shape = {3, 32, 100};
  EXPECT_EQ(verifyError(manifest),
            "B disagrees: query.shape[0] is 2 but lse.shape[0] is 3");
  EXPECT_EQ(manifestError(editV4(kLseParam, "{\"kind\": \"memref\", "
                                            "\"operand\": \"lse\", \"rank\": "
                                            "4},")),
            "params[4]: rank 4 but lse has rank 3");
  manifest = makeExampleV4Manifest();
  manifest.params.push_back(KernelParam::memref("lse", 3));
  EXPECT_EQ(verifyError(manifest), "params[6]: operand 'lse' is passed twice");
  // Unknown operands name lse among the expected ones when there is one.
  manifest = makeExampleV4Manifest();
  manifest.params[4].operand = "lse2";
  manifest.params.push_back(KernelParam::memref("lse", 3));
  EXPECT_EQ(verifyError(manifest),
            "params[4].operand: unknown operand 'lse2' (expected query, key, "
            "value, mask, output or lse)");
  // Not a tensor map, not a workspace name.
  manifest = makeExampleV4Manifest();
  manifest.params.push_back(KernelParam::tensorMap("lse", {1, 1, 64}, 0));
  EXPECT_EQ(verifyError(manifest),
            "params[6].operand: unknown operand 'lse' (expected query, key, "
            "value or output)");
  Manifest workspace = makeExampleV2Manifest();
  workspace.workspaces[0].name = "lse";
  workspace.params[5].name = "lse";
  workspace.prologue[0].params[1].name = "lse";
  EXPECT_EQ(verifyError(workspace),
            "workspace[0].name: 'lse' is the name of the log-sum-exp result");
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

OperandShapes makeShapes(std::vector<int64_t> lse) {
  OperandShapes shapes;
  shapes.query = {2, 32, 100, 128};
  shapes.key = {2, 8, 300, 128};
  shapes.value = {2, 8, 300, 128};
  shapes.output = {2, 32, 100, 128};
  shapes.hasLse = true;
  shapes.lse = std::move(lse);
  return shapes;
}

TEST(ManifestV4Test, CheckShapes) {
  Manifest manifest = makeExampleV4Manifest();
  std::string error;
  ProblemSizes sizes;
  ASSERT_TRUE(
      inferProblemSizes(manifest, makeShapes({2, 32, 100}), sizes, error))
      << error;
  EXPECT_EQ(sizes, makeSizes(2, 32, 8, 100, 300, 128, 128));
  EXPECT_FALSE(checkShapes(manifest, makeShapes({2, 32, 101}), error));
  EXPECT_EQ(error, "lse: dimension 2 (Tq) is 101 but query has Tq = 100 "
                   "(query 2x32x100x128, lse 2x32x101)");
  EXPECT_FALSE(checkShapes(manifest, makeShapes({2, 32, 100, 1}), error));
  EXPECT_EQ(error, "lse: rank is 4 but the kernel takes rank 3 (compiled "
                   "shape ?x32x?, actual 2x32x100x1)");
  EXPECT_FALSE(checkShapes(manifest, makeShapes({2, 16, 100}), error));
  EXPECT_EQ(error, "lse: dimension 1 is 16 but the kernel was compiled for 32 "
                   "(compiled shape ?x32x?, actual 2x16x100)");
  EXPECT_FALSE(
      checkShapes(makeExampleManifest(), makeShapes({2, 32, 100}), error));
  EXPECT_EQ(error, "an lse was given but the kernel was compiled without the "
                   "log-sum-exp result");
  // Not given: not checked (the launch needs it: packParams).
  OperandShapes shapes = makeShapes({});
  shapes.hasLse = false;
  EXPECT_TRUE(checkShapes(manifest, shapes, error)) << error;
}

TEST(ManifestV4Test, PackParams) {
  Manifest manifest = makeExampleV4Manifest();
  ProblemSizes sizes = makeSizes(2, 32, 8, 100, 300, 128, 128);
  std::map<std::string, TensorArg> operands;
  operands["query"] =
      makeContiguousTensorArg(0x7f0000000000, {2, 32, 100, 128});
  operands["key"] = makeContiguousTensorArg(0x7f0000100000, {2, 8, 300, 128});
  operands["value"] = makeContiguousTensorArg(0x7f0000200000, {2, 8, 300, 128});
  operands["output"] =
      makeContiguousTensorArg(0x7f0000300000, {2, 32, 100, 128});
  // The LSE with the caller's strides, at any 4-byte address: (B, T, H)
  // viewed as (B, H, T).
  TensorArg lse;
  lse.devicePtr = 0x7f0000400004;
  lse.sizes = {2, 32, 100};
  lse.strides = {100 * 32, 1, 32};
  operands["lse"] = lse;
  ParamPack pack;
  std::string error;
  ASSERT_TRUE(packParams(manifest, operands, sizes, pack, error)) << error;
  ASSERT_EQ(pack.size(), manifest.getNumParamSlots());
  // After four memrefs of 11 slots: allocated, aligned, offset, 3 sizes, 3
  // strides, then Tk.
  std::vector<uint64_t> expected = {
      0x7f0000400004, 0x7f0000400004, 0, 2, 32, 100, 3200, 1, 32};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(pack.getValue(44 + i), expected[i]) << pack.getName(44 + i);
  EXPECT_EQ(pack.getName(44), "lse.allocated");
  EXPECT_EQ(pack.getName(52), "lse.strides[2]");
  EXPECT_EQ(pack.getName(53), "Tk");

  auto packError = [&](const Manifest &kernel,
                       const std::map<std::string, TensorArg> &ops) {
    ParamPack unused;
    std::string message;
    EXPECT_FALSE(packParams(kernel, ops, sizes, unused, message));
    return message;
  };
  std::map<std::string, TensorArg> bad = operands;
  bad.erase("lse");
  EXPECT_EQ(packError(manifest, bad), "missing operand 'lse'");
  bad = operands;
  bad["lse"].sizes = {2, 32, 99};
  EXPECT_EQ(packError(manifest, bad),
            "lse: dimension 2 (Tq) is 99 but query has Tq = 100 (query "
            "2x32x100x128, lse 2x32x99)");
  bad["lse"].devicePtr = 0;
  EXPECT_EQ(packError(manifest, bad),
            "operand 'lse' has a null device pointer");
  EXPECT_EQ(packError(makeExampleManifest(), operands),
            "operand 'lse' is not a parameter of kernel 'attn_fwd_f'");
}

} // namespace

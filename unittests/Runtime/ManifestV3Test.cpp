//===- ManifestV3Test.cpp - Tests of version 3 launch manifests -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Version 3 of the manifest format: the "tensor_map" param (parsing, errors,
// serialization, equality, the version a writer writes) and parameter
// packing with a tensor map resolver. The encoding of the maps is in
// TensorMapTest.cpp.
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

std::string editV3(const std::string &from, const std::string &to) {
  return editText(kExampleV3Text, from, to);
}

std::string verifyError(const Manifest &manifest) {
  std::string error;
  EXPECT_FALSE(verifyManifest(manifest, error));
  return error;
}

/// The key's tensor map param of kExampleV3Text.
const char *const kKeyMap = "{\"kind\": \"tensor_map\", \"operand\": \"key\", "
                            "\"box\": [1, 1, 64, 32], \"swizzle\": 128}";

//===----------------------------------------------------------------------===//
// The format
//===----------------------------------------------------------------------===//

TEST(ManifestV3Test, ParsesTheDocumentedExample) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(kExampleV3Text, manifest, error)) << error;
  EXPECT_EQ(manifest, makeExampleV3Manifest());
  EXPECT_EQ(manifest.getVersion(), 3);
  EXPECT_TRUE(manifest.hasTensorMaps());
  EXPECT_FALSE(makeExampleManifest().hasTensorMaps());
  EXPECT_FALSE(makeExampleV2Manifest().hasTensorMaps());
  ASSERT_EQ(manifest.params.size(), 7u);
  const KernelParam &key = manifest.params[4];
  EXPECT_EQ(key.kind, KernelParam::Kind::TensorMap);
  EXPECT_EQ(key.operand, "key");
  EXPECT_EQ(key.box, (std::vector<int64_t>{1, 1, 64, 32}));
  EXPECT_EQ(key.swizzle, 128u);
  // A tensor map is one 8-byte parameter: a pointer.
  EXPECT_EQ(key.getNumSlots(), 1u);
  EXPECT_EQ(manifest.params[5].operand, "value");
  EXPECT_EQ(manifest.getNumParamSlots(), 4u * 11u + 2u + 1u);
}

TEST(ManifestV3Test, RoundTrip) {
  // The example, and a version 2 manifest with tensor maps in its prologue
  // kernel (of 2-byte elements, swizzle 0 and 64).
  Manifest prologueMaps = makeExampleV2Manifest();
  prologueMaps.prologue[0].params.push_back(KernelParam::memref("query", 4));
  prologueMaps.prologue[0].params.push_back(
      KernelParam::tensorMap("query", {1, 2, 128, 8}, 0));
  prologueMaps.params.push_back(
      KernelParam::tensorMap("output", {1, 1, 16, 32}, 64));
  for (const Manifest &manifest : {makeExampleV3Manifest(), prologueMaps}) {
    std::string error;
    ASSERT_TRUE(verifyManifest(manifest, error)) << error;
    EXPECT_EQ(manifest.getVersion(), 3);
    std::string text = serializeManifest(manifest);
    Manifest back;
    ASSERT_TRUE(parseManifest(text, back, error)) << error << "\n" << text;
    EXPECT_EQ(back, manifest) << text;
    EXPECT_EQ(serializeManifest(back), text);
    EXPECT_NE(text.find("\"version\": 3,"), std::string::npos) << text;
  }
  // Wider than 80 columns on one line, so one key per line.
  std::string text = serializeManifest(makeExampleV3Manifest());
  EXPECT_NE(text.find("    {\"kind\": \"memref\", \"operand\": \"output\", "
                      "\"rank\": 4},\n    {\n      \"kind\": \"tensor_map\",\n"
                      "      \"operand\": \"key\",\n      \"box\": [1, 1, 64, "
                      "32],\n      \"swizzle\": 128\n    },\n"),
            std::string::npos)
      << text;
  text = serializeManifest(prologueMaps);
  EXPECT_NE(text.find("\"operand\": \"query\",\n          \"box\": [1, 2, "
                      "128, 8],\n          \"swizzle\": 0\n"),
            std::string::npos)
      << text;

  // A tensor map in a prologue kernel alone makes version 3 too.
  prologueMaps.params.pop_back();
  EXPECT_EQ(prologueMaps.getVersion(), 3);
  prologueMaps.prologue[0].params.pop_back();
  EXPECT_EQ(prologueMaps.getVersion(), 2);
  // Without its tensor maps the example is written as version 1.
  Manifest plain = makeExampleV3Manifest();
  plain.params.erase(plain.params.begin() + 4, plain.params.begin() + 6);
  EXPECT_EQ(plain.getVersion(), 1);
  EXPECT_NE(serializeManifest(plain).find("\"version\": 1,"),
            std::string::npos);
  // Version 3 without tensor maps is read, and written back as version 1.
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(
      parseManifest(editText(kExampleText, "\"version\": 1", "\"version\": 3"),
                    manifest, error))
      << error;
  EXPECT_EQ(manifest, makeExampleManifest());
  EXPECT_EQ(manifest.getVersion(), 1);
}

TEST(ManifestV3Test, Equality) {
  KernelParam base = KernelParam::tensorMap("key", {1, 1, 64, 32}, 128);
  EXPECT_EQ(base, KernelParam::tensorMap("key", {1, 1, 64, 32}, 128));
  EXPECT_NE(base, KernelParam::tensorMap("value", {1, 1, 64, 32}, 128));
  EXPECT_NE(base, KernelParam::tensorMap("key", {1, 1, 64, 16}, 128));
  EXPECT_NE(base, KernelParam::tensorMap("key", {1, 64, 32}, 128));
  EXPECT_NE(base, KernelParam::tensorMap("key", {1, 1, 64, 32}, 64));
  EXPECT_NE(base, KernelParam::memref("key", 4));
  Manifest other = makeExampleV3Manifest();
  other.params[5].swizzle = 64;
  EXPECT_NE(other, makeExampleV3Manifest());
}

TEST(ManifestV3Test, VersionErrors) {
  EXPECT_EQ(manifestError(editV3("\"version\": 3", "\"version\": 2")),
            "params[4].kind: the param kind 'tensor_map' "
            "requires version 3 (this manifest has version 2)");
  EXPECT_EQ(manifestError(editV3("\"version\": 3", "\"version\": 1")),
            "params[4].kind: the param kind 'tensor_map' "
            "requires version 3 (this manifest has version 1)");
  // In a prologue kernel too.
  std::string text = editText(
      kExampleV2Text, "{\"kind\": \"size\", \"name\": \"Tq\"},",
      std::string(kKeyMap) + ", {\"kind\": \"size\", \"name\": \"Tq\"},");
  EXPECT_EQ(manifestError(text),
            "prologue[0].params[2].kind: the param kind "
            "'tensor_map' requires version 3 (this manifest has version 2)");
  EXPECT_EQ(manifestError(editText(text, "\"version\": 2", "\"version\": 3")),
            "prologue[0].params[2]: a tensor map of 'key' "
            "but no memref param of the same kernel passes 'key'");
  EXPECT_EQ(manifestError(editV3("\"version\": 3", "\"version\": 8")),
            "version: unsupported manifest version 8 (this "
            "reader supports versions 1, 2, 3, 4, 5, 6 and 7)");
}

TEST(ManifestV3Test, ParamErrors) {
  auto editKey = [](const std::string &to) { return editV3(kKeyMap, to); };
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"mask\", \"box\": [1, 1, 64, 32], "
                                  "\"swizzle\": 128}")),
            "params[4].operand: unknown operand 'mask' "
            "(expected query, key, value or output)");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 300, 32], "
                                  "\"swizzle\": 128}")),
            "params[4].box[2]: 300 (expected 1 .. 256)");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 0, 64, 32], "
                                  "\"swizzle\": 128}")),
            "params[4].box[1]: 0 (expected 1 .. 256)");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 64, 32.5], "
                                  "\"swizzle\": 128}")),
            "params[4].box[3]: expected an integer, found "
            "a number with a fraction");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": 64, \"swizzle\": 128}")),
            "params[4].box: expected an array, found a "
            "number");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 64, 32], "
                                  "\"swizzle\": 16}")),
            "params[4].swizzle: 16 (expected 0, 32, 64 or "
            "128)");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 64, 32]}")),
            "params[4]: missing key 'swizzle'");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"swizzle\": 128}")),
            "params[4]: missing key 'box'");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"rank\": 4, \"box\": [1, 1, 64, "
                                  "32], \"swizzle\": 128}")),
            "params[4]: unknown key 'rank' (expected "
            "kind, operand, box, swizzle)");

  // The rules that need the operand and the element type.
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 64, 32], "
                                  "\"swizzle\": 128}")),
            "params[4]: the box has 3 entries but key has "
            "rank 4");
  // f32: 64 elements of 4 bytes are more than a 128-byte swizzle span.
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 64, 64], "
                                  "\"swizzle\": 128}")),
            "params[4]: the box's inner dimension is 64 "
            "elements of 4 bytes = 256 bytes, more than the 128-byte swizzle "
            "span");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 64, 16], "
                                  "\"swizzle\": 32}")),
            "params[4]: the box's inner dimension is 16 "
            "elements of 4 bytes = 64 bytes, more than the 32-byte swizzle "
            "span");
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 64, 6], "
                                  "\"swizzle\": 0}")),
            "params[4]: the box's inner dimension is 6 "
            "elements of 4 bytes = 24 bytes, not a multiple of 16 bytes");
  // TMA moves 16-byte units with any swizzle.
  EXPECT_EQ(manifestError(editKey("{\"kind\": \"tensor_map\", \"operand\": "
                                  "\"key\", \"box\": [1, 1, 64, 2], "
                                  "\"swizzle\": 32}")),
            "params[4]: the box's inner dimension is 2 "
            "elements of 4 bytes = 8 bytes, not a multiple of 16 bytes");
  // Boxes that fit: 256 rows, no swizzle, 16-byte and 256-byte rows; the
  // same operand twice (two tile shapes).
  for (const char *param :
       {"{\"kind\": \"tensor_map\", \"operand\": \"key\", \"box\": [1, 1, "
        "256, 4], \"swizzle\": 0}",
        "{\"kind\": \"tensor_map\", \"operand\": \"key\", \"box\": [2, 2, "
        "16, 64], \"swizzle\": 0}",
        "{\"kind\": \"tensor_map\", \"operand\": \"key\", \"box\": [1, 1, "
        "8, 16], \"swizzle\": 64}",
        "{\"kind\": \"tensor_map\", \"operand\": \"value\", \"box\": [1, 1, "
        "64, 32], \"swizzle\": 128}"}) {
    Manifest manifest;
    std::string error;
    EXPECT_TRUE(parseManifest(editKey(param), manifest, error))
        << param << ": " << error;
  }
}

TEST(ManifestV3Test, VerifyErrors) {
  // The rules verifyManifest checks on manifests built in code.
  Manifest manifest = makeExampleV3Manifest();
  manifest.params[4].operand = "mask";
  EXPECT_EQ(verifyError(manifest),
            "params[4].operand: unknown operand 'mask' (expected "
            "query, key, value or output)");
  manifest = makeExampleV3Manifest();
  manifest.params[4].box = {1, 1, 64, 512};
  EXPECT_EQ(verifyError(manifest), "params[4].box[3]: 512 (expected 1 .. 256)");
  manifest = makeExampleV3Manifest();
  manifest.params[4].box = {1, 1, 64, 32, 1};
  EXPECT_EQ(verifyError(manifest),
            "params[4]: the box has 5 entries but key has rank 4");
  manifest = makeExampleV3Manifest();
  manifest.params[5].swizzle = 256;
  EXPECT_EQ(verifyError(manifest),
            "params[5].swizzle: 256 (expected 0, 32, 64 or 128)");
  // bf16: 64 elements of 2 bytes fill a 128-byte span; 32 do not fill a
  // 32-byte one.
  manifest = makeExampleV3Manifest();
  manifest.elementType = ElementType::BF16;
  manifest.params[4].box[3] = 64;
  std::string error;
  EXPECT_TRUE(verifyManifest(manifest, error)) << error;
  manifest.params[4].swizzle = 32;
  EXPECT_EQ(verifyError(manifest),
            "params[4]: the box's inner dimension is 64 elements of 2 bytes = "
            "128 bytes, more than the 32-byte swizzle span");
  // The operand must be passed by a memref param of the same kernel.
  manifest = makeExampleV2Manifest();
  manifest.prologue[0].params.push_back(
      KernelParam::tensorMap("value", {1, 1, 64, 64}, 128));
  EXPECT_EQ(verifyError(manifest),
            "prologue[0].params[4]: a tensor map of 'value' but no memref "
            "param of the same kernel passes 'value'");
  manifest.prologue[0].params.push_back(KernelParam::memref("value", 4));
  EXPECT_TRUE(verifyManifest(manifest, error)) << error;
}

//===----------------------------------------------------------------------===//
// Packing
//===----------------------------------------------------------------------===//

/// The operands of makeExampleV3Manifest for B=2 Hq=32 Hkv=8 Tq=1000
/// Tk=300 D=Dv=128.
std::map<std::string, TensorArg> makeV3Operands() {
  std::map<std::string, TensorArg> operands;
  operands["query"] = makeContiguousTensorArg(0x10000, {2, 32, 1000, 128});
  operands["key"] = makeContiguousTensorArg(0x20000, {2, 8, 300, 128});
  operands["value"] = makeContiguousTensorArg(0x30000, {2, 8, 300, 128});
  operands["output"] = makeContiguousTensorArg(0x50000, {2, 32, 1000, 128});
  return operands;
}

TEST(ManifestV3Test, PackParamsWithTensorMaps) {
  Manifest manifest = makeExampleV3Manifest();
  ProblemSizes sizes = makeSizes(2, 32, 8, 1000, 300, 128, 128);
  std::map<std::string, TensorArg> operands = makeV3Operands();
  // The resolver sees each tensor map param with its operand's TensorArg.
  std::vector<std::string> calls;
  TensorMapResolver resolver = [&](const KernelParam &param,
                                   const TensorArg &arg, uint64_t &devicePtr,
                                   std::string &) {
    calls.push_back(param.operand + " " + std::to_string(param.box[3]));
    devicePtr = 0x900000 + arg.devicePtr;
    return true;
  };
  ParamPack pack;
  std::string error;
  ASSERT_TRUE(packParams(manifest, operands, sizes, pack, error, resolver))
      << error;
  ASSERT_EQ(pack.size(), manifest.getNumParamSlots());
  EXPECT_EQ(calls, (std::vector<std::string>{"key 32", "value 32"}));
  EXPECT_EQ(pack.getName(43), "output.strides[3]");
  EXPECT_EQ(pack.getName(44), "key.tensor_map");
  EXPECT_EQ(pack.getValue(44), 0x920000u);
  EXPECT_EQ(pack.getName(45), "value.tensor_map");
  EXPECT_EQ(pack.getValue(45), 0x930000u);
  EXPECT_EQ(pack.getName(46), "Tk");
  EXPECT_EQ(pack.getValue(46), 300u);
  EXPECT_NE(pack.describe().find("44 key.tensor_map = 0x920000\n"),
            std::string::npos)
      << pack.describe();

  // Without a resolver, or when it fails.
  EXPECT_FALSE(packParams(manifest, operands, sizes, pack, error));
  EXPECT_EQ(error, "kernel 'attn_fwd_f' takes a tensor map of 'key', which "
                   "only a launch that encodes tensor maps can pass "
                   "(ManifestKernel::prepare)");
  TensorMapResolver failing = [](const KernelParam &param, const TensorArg &,
                                 uint64_t &, std::string &message) {
    message = "tensor map of '" + param.operand + "': no";
    return false;
  };
  EXPECT_FALSE(packParams(manifest, operands, sizes, pack, error, failing));
  EXPECT_EQ(error, "tensor map of 'key': no");
  // The operand checks come first: a tensor map is never encoded for a
  // layout the kernel refuses.
  calls.clear();
  std::map<std::string, TensorArg> bad = operands;
  bad["key"].strides[3] = 2;
  EXPECT_FALSE(packParams(manifest, bad, sizes, pack, error, resolver));
  EXPECT_EQ(error, "operand 'key' has stride 2 in its last dimension; the "
                   "kernel needs it contiguous (1)");
  EXPECT_TRUE(calls.empty());

  // A prologue kernel's tensor map.
  std::vector<KernelParam> prologue = {
      KernelParam::memref("query", 4),
      KernelParam::tensorMap("query", {1, 1, 128, 32}, 128),
      KernelParam::size("Tq")};
  ParamPack prologuePack;
  ASSERT_TRUE(packParams(manifest, prologue, operands, sizes, prologuePack,
                         error, resolver))
      << error;
  ASSERT_EQ(prologuePack.size(), 13u);
  EXPECT_EQ(prologuePack.getName(11), "query.tensor_map");
  EXPECT_EQ(prologuePack.getValue(11), 0x910000u);
  EXPECT_EQ(prologuePack.getValue(12), 1000u);
}

} // namespace

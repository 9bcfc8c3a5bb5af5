//===- ManifestTest.cpp - Tests of the launch manifest and CUDA runtime ---===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The JSON reader and writer, the manifest format, grid evaluation, shape
// checks and parameter packing; where cuda.h was found, also the CUDA launch
// helpers that need no GPU and CudaDevice::open, which must fail cleanly on
// a machine without a CUDA driver or device.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#ifdef ATTN_HAS_CUDA_DRIVER
#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/CudaLaunch.h"
#endif

#include "gtest/gtest.h"

#include <climits>
#include <cmath>
#include <cstdio>
#include <string>

#include <unistd.h>

using namespace attn::runtime;

namespace {

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

JsonValue parseOrDie(const std::string &text) {
  JsonValue value;
  std::string error;
  EXPECT_TRUE(parseJson(text, value, error)) << error << "\n" << text;
  return value;
}

std::string parseError(const std::string &text) {
  JsonValue value;
  std::string error;
  EXPECT_FALSE(parseJson(text, value, error)) << text;
  return error;
}

TEST(JsonTest, ParsesEveryKind) {
  JsonValue value = parseOrDie(
      R"({"n": null, "t": true, "f": false, "i": -42, "d": 0.5,
          "s": "x", "a": [1, [2, {}], []], "o": {"k": "v"}})");
  ASSERT_TRUE(value.isObject());
  EXPECT_TRUE(value.find("n")->isNull());
  EXPECT_TRUE(value.find("t")->getBool());
  EXPECT_TRUE(value.find("f")->isBool());
  EXPECT_FALSE(value.find("f")->getBool());
  EXPECT_TRUE(value.find("i")->isInteger());
  EXPECT_EQ(value.find("i")->getInteger(), -42);
  EXPECT_FALSE(value.find("d")->isInteger());
  EXPECT_EQ(value.find("d")->getNumber(), 0.5);
  EXPECT_EQ(value.find("s")->getString(), "x");
  ASSERT_EQ(value.find("a")->getArray().size(), 3u);
  EXPECT_TRUE(value.find("a")->getArray()[1].getArray()[1].isObject());
  EXPECT_EQ(value.find("o")->find("k")->getString(), "v");
  EXPECT_EQ(value.find("missing"), nullptr);
  // Members keep their file order.
  EXPECT_EQ(value.getObject()[0].first, "n");
  EXPECT_EQ(value.getObject()[7].first, "o");
  // Positions are recorded.
  EXPECT_EQ(value.getLine(), 1);
  EXPECT_EQ(value.getColumn(), 1);
  EXPECT_EQ(value.find("s")->getLine(), 2);
}

TEST(JsonTest, RoundTrip) {
  std::string text = R"({"format": "x", "list": [1, 2.5, -3e-7, "a\"b\\c\n"],
    "nested": {"deep": [[[]]], "empty": {}, "unicode": "\u00e9\ud83d\ude00"},
    "big": 123456789012345678, "min": -9223372036854775808,
    "max": 9223372036854775807, "huge": 1e300, "scale": 0.08838834764831845,
    "third": 0.3333333333333333, "t": true, "n": null})";
  JsonValue value = parseOrDie(text);
  for (int indent : {0, 2, 4}) {
    std::string written = writeJson(value, indent);
    JsonValue back = parseOrDie(written);
    EXPECT_EQ(back, value) << written;
    EXPECT_EQ(writeJson(back, indent), written);
  }
  EXPECT_EQ(value.find("min")->getInteger(), INT64_MIN);
  EXPECT_EQ(value.find("max")->getInteger(), INT64_MAX);
  EXPECT_EQ(value.find("scale")->getNumber(), 0.08838834764831845);
  EXPECT_EQ(value.find("nested")->find("unicode")->getString(),
            "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonTest, WriterForms) {
  JsonValue value;
  value.set("a", JsonValue::makeInteger(1));
  value.set("b", JsonValue::makeNumber(0.1));
  value.set("c", JsonValue::makeString("tab\there \x01"));
  value.set("a", JsonValue::makeInteger(2)); // Replaces.
  JsonValue list;
  list.push(JsonValue::makeNumber(1.0));
  list.push(JsonValue::makeNumber(1e-300));
  list.push(JsonValue::makeNumber(NAN));
  value.set("d", std::move(list));
  EXPECT_EQ(writeJson(value, 0),
            R"({"a": 2, "b": 0.1, "c": "tab\there \u0001", )"
            R"("d": [1, 1e-300, null]})");
  // Containers that do not fit in 80 columns are spread over lines.
  JsonValue wide;
  for (int i = 0; i < 12; ++i)
    wide.set("key" + std::to_string(i), JsonValue::makeInteger(i));
  std::string written = writeJson(wide, 2);
  EXPECT_EQ(written.substr(0, 14), "{\n  \"key0\": 0,");
  EXPECT_EQ(written.back(), '}');
  EXPECT_EQ(parseOrDie(written), wide);
  EXPECT_EQ(writeJson(JsonValue(), 2), "null");
  EXPECT_EQ(writeJson(JsonValue::makeArray(), 2), "[]");
}

TEST(JsonTest, ErrorsHaveLineAndColumn) {
  EXPECT_EQ(parseError(""),
            "line 1, column 1: expected a JSON value, found end of input");
  EXPECT_EQ(parseError("{\n  \"a\": 1,\n}"),
            "line 3, column 1: trailing comma in object");
  EXPECT_EQ(parseError("[1, 2,]"), "line 1, column 7: trailing comma in array");
  EXPECT_EQ(parseError("{\"a\": 1 \"b\": 2}"),
            "line 1, column 9: expected ',' or '}' in object, found "
            "character '\"'");
  EXPECT_EQ(parseError("{\"a\": 1, \"a\": 2}"),
            "line 1, column 10: duplicate key 'a'");
  EXPECT_EQ(parseError("{\"a\" 1}"),
            "line 1, column 6: expected ':' after object key, found "
            "character '1'");
  EXPECT_EQ(parseError("[01]"),
            "line 1, column 3: invalid number: leading zeros are not allowed");
  EXPECT_EQ(parseError("[1.]"),
            "line 1, column 4: invalid number: expected a digit after '.'");
  EXPECT_EQ(parseError("[-]"),
            "line 1, column 3: invalid number: expected a digit after '-'");
  EXPECT_EQ(parseError("1e999"),
            "line 1, column 1: number out of range: 1e999");
  EXPECT_EQ(parseError("\n\n  \"abc"), "line 3, column 7: unterminated string");
  EXPECT_EQ(parseError("\"a\nb\""),
            "line 1, column 3: unterminated string (newline in string)");
  EXPECT_EQ(parseError("\"\\x\""), "line 1, column 3: invalid escape '\\x'");
  EXPECT_EQ(parseError("\"\\ud800\""),
            "line 1, column 8: invalid \\u escape: unpaired high surrogate");
  EXPECT_EQ(parseError("\"\\u12g4\""),
            "line 1, column 6: invalid \\u escape: expected 4 hex digits");
  EXPECT_EQ(parseError("nul"),
            "line 1, column 1: invalid literal (expected true, false or null)");
  EXPECT_EQ(parseError("truex"),
            "line 1, column 5: invalid literal (expected true, false or null)");
  EXPECT_EQ(parseError("{} {}"),
            "line 1, column 4: unexpected character '{' after the JSON value");
  EXPECT_EQ(parseError("// comment\n{}"),
            "line 1, column 1: expected a JSON value, found character '/'");
  EXPECT_EQ(parseError("[\x01]"),
            "line 1, column 2: expected a JSON value, found byte 0x01");
  std::string deep(300, '[');
  EXPECT_EQ(parseError(deep).substr(0, 37),
            "line 1, column 258: nesting deeper th");
}

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// The example of docs/Manifest.md.
const char *const kExampleText = R"({
  "format": "attn-mlir-manifest", "version": 1,
  "kernel": "attn_fwd_f",
  "ptx": "f.ptx",
  "chip": "sm_90a",
  "function": "f",
  "element_type": "bf16",
  "query":  {"shape": [-1, 32, -1, 128]},
  "key":    {"shape": [-1, 8, -1, 128]},
  "value":  {"shape": [-1, 8, -1, 128]},
  "output": {"shape": [-1, 32, -1, 128]},
  "mask":   null,
  "attributes": {"scale": 0.08838834764831845, "causal": null, "precision": null},
  "config": {"block_m": 128, "block_n": 64, "num_warps": 4, "num_stages": 2},
  "block": [128, 1, 1],
  "grid": [ {"ceil_div": ["Tq", 128]}, {"mul": ["B", "Hq"]}, 1 ],
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

/// kExampleText, built in code.
Manifest makeExampleManifest() {
  Manifest manifest;
  manifest.kernel = "attn_fwd_f";
  manifest.ptx = "f.ptx";
  manifest.chip = "sm_90a";
  manifest.function = "f";
  manifest.elementType = ElementType::BF16;
  manifest.query.shape = {-1, 32, -1, 128};
  manifest.key.shape = {-1, 8, -1, 128};
  manifest.value.shape = {-1, 8, -1, 128};
  manifest.output.shape = {-1, 32, -1, 128};
  manifest.attributes.scale = 0.08838834764831845;
  manifest.config.blockM = 128;
  manifest.config.blockN = 64;
  manifest.config.numWarps = 4;
  manifest.config.numStages = 2;
  manifest.block[0] = 128;
  manifest.grid[0] =
      GridExpr::ceilDiv(GridExpr::size("Tq"), GridExpr::constant(128));
  manifest.grid[1] = GridExpr::mul(GridExpr::size("B"), GridExpr::size("Hq"));
  manifest.grid[2] = GridExpr::constant(1);
  manifest.sharedMemoryBytes = 49152;
  for (const char *operand : {"query", "key", "value", "output"})
    manifest.params.push_back(KernelParam::memref(operand, 4));
  manifest.params.push_back(KernelParam::size("Tk"));
  return manifest;
}

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
  manifest.config.extra.emplace_back("swizzle", JsonValue::makeString("128B"));
  manifest.config.extra.emplace_back("warp_specialize",
                                     JsonValue::makeBool(true));
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
  EXPECT_EQ(manifest.config.extra[1].second, JsonValue::makeBool(true));
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
  std::string text = kExampleText;
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to);
  return text;
}

std::string manifestError(const std::string &text) {
  Manifest manifest;
  std::string error;
  EXPECT_FALSE(parseManifest(text, manifest, error));
  return error;
}

TEST(ManifestTest, Errors) {
  // Malformed JSON.
  EXPECT_EQ(manifestError(editExample("\"chip\": \"sm_90a\",", "\"chip\": ,")),
            "line 5, column 11: expected a JSON value, found character ','");
  EXPECT_EQ(
      manifestError(editExample("\"ptx\": \"f.ptx\",", "\"ptx\": \"f.ptx\"")),
      "line 5, column 3: expected ',' or '}' in object, found "
      "character '\"'");
  // Format and version.
  EXPECT_EQ(manifestError("[]"),
            "line 1, column 1: manifest: expected an object, found an array");
  EXPECT_EQ(manifestError(editExample("attn-mlir-manifest", "other")),
            "line 2, column 13: format: 'other' is not an attn-mlir launch "
            "manifest (expected 'attn-mlir-manifest')");
  EXPECT_EQ(manifestError(editExample("\"version\": 1", "\"version\": 2")),
            "line 2, column 46: version: unsupported manifest version 2 (this "
            "reader supports version 1)");
  // Keys.
  EXPECT_EQ(manifestError(editExample("\"ptx\": \"f.ptx\",", "")),
            "line 1, column 1: missing key 'ptx'");
  std::string unknown = manifestError(
      editExample("\"chip\": \"sm_90a\",", "\"chip\": \"sm_90a\", \"x\": 1,"));
  EXPECT_EQ(unknown.substr(0, 47),
            "line 5, column 26: unknown key 'x' (expected fo");
  // Values.
  EXPECT_EQ(manifestError(editExample("\"bf16\"", "\"i1\"")),
            "line 7, column 19: element_type: unknown element type 'i1' "
            "(expected f32, f16 or bf16)");
  EXPECT_EQ(
      manifestError(editExample("[-1, 8, -1, 128]}", "[-1, 0, -1, 128]}")),
      "line 9, column 28: key.shape[1]: size 0 (expected -1 for a "
      "dynamic size or a size >= 1)");
  EXPECT_EQ(manifestError(editExample("\"Tq\", 128", "\"Tx\", 128")),
            "line 16, column 27: grid[0].ceil_div[0]: unknown size name 'Tx' "
            "(expected one of B, Hq, Hkv, Tq, Tk, D, Dv)");
  EXPECT_EQ(manifestError(editExample("{\"mul\": [\"B\", \"Hq\"]}",
                                      "{\"pow\": [\"B\", \"Hq\"]}")),
            "line 16, column 40: grid[1]: unknown operator 'pow' (expected "
            "ceil_div, mul, add, min or max)");
  EXPECT_EQ(manifestError(editExample("[\"B\", \"Hq\"]", "[\"B\"]")),
            "line 16, column 48: grid[1].mul: expected an array of 2 "
            "expressions, found 1");
  EXPECT_EQ(manifestError(editExample("\"Hq\"]}, 1 ]", "\"Hq\"]} ]")),
            "line 16, column 11: grid: expected 3 dimensions, found 2");
  EXPECT_EQ(manifestError(editExample("[128, 1, 1]", "[128.5, 1, 1]")),
            "line 15, column 13: block[0]: expected an integer, found a "
            "number with a fraction");
  EXPECT_EQ(manifestError(editExample("[128, 1, 1]", "[2048, 1, 1]")),
            "line 15, column 13: block[0]: 2048 threads (expected 1 .. 1024)");
  EXPECT_EQ(manifestError(editExample("\"causal\": null", "\"causal\": true")),
            "line 13, column 58: attributes.causal: expected a string, found "
            "a boolean");
  EXPECT_EQ(manifestError(editExample("\"causal\": null", "\"causal\": \"x\"")),
            "line 13, column 58: attributes.causal: unknown causal mode 'x' "
            "(expected null, top_left or bottom_right)");
  EXPECT_EQ(manifestError(editExample("\"kind\": \"size\"", "\"kind\": \"f\"")),
            "line 23, column 14: params[4].kind: unknown param kind 'f' "
            "(expected memref or size)");
  EXPECT_EQ(manifestError(editExample("\"operand\": \"key\", \"rank\": 4",
                                      "\"operand\": \"key\", \"rank\": 3")),
            "invalid manifest: params[1]: rank 3 but key has rank 4");
  EXPECT_EQ(manifestError(
                editExample("\"operand\": \"key\"", "\"operand\": \"mask\"")),
            "invalid manifest: params[1]: operand 'mask' but the manifest "
            "has no mask");
  EXPECT_EQ(manifestError(
                editExample("\"operand\": \"key\"", "\"operand\": \"query\"")),
            "invalid manifest: params[1]: operand 'query' is passed twice");
  EXPECT_EQ(manifestError(editExample("\"mask\":   null",
                                      "\"mask\": {\"element_type\": \"f32\", "
                                      "\"shape\": [-1, -1]}")),
            "invalid manifest: params: the manifest has a mask but no memref "
            "param passes it");
  EXPECT_EQ(
      manifestError(editExample("[-1, 32, -1, 128]}", "[-1, 12, -1, 128]}")),
      "invalid manifest: Hq disagrees: query.shape[1] is 12 but "
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

ProblemSizes makeSizes(int64_t b, int64_t hq, int64_t hkv, int64_t tq,
                       int64_t tk, int64_t d, int64_t dv) {
  ProblemSizes sizes;
  sizes.B = b;
  sizes.Hq = hq;
  sizes.Hkv = hkv;
  sizes.Tq = tq;
  sizes.Tk = tk;
  sizes.D = d;
  sizes.Dv = dv;
  return sizes;
}

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
  // by permuting its strides, starting 5 elements into the buffer.
  TensorArg query;
  query.devicePtr = 0x7f0000001000;
  query.sizes = {2, 32, 100, 128};
  query.strides = {100 * 32 * 128, 128, 32 * 128, 1};
  query.offset = 5;
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
                                         5,
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
  EXPECT_EQ(*static_cast<int64_t *>(args[2]), 5);
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
}

#ifdef ATTN_HAS_CUDA_DRIVER

//===----------------------------------------------------------------------===//
// CUDA launch helpers (no GPU needed)
//===----------------------------------------------------------------------===//

TEST(CudaLaunchTest, PrepareLaunch) {
  Manifest manifest = makeExampleManifest();
  ProblemSizes sizes = makeSizes(2, 32, 8, 1000, 300, 128, 128);
  std::map<std::string, TensorArg> operands = {
      {"query", makeContiguousTensorArg(0x1000, {2, 32, 1000, 128})},
      {"key", makeContiguousTensorArg(0x2000, {2, 8, 300, 128})},
      {"value", makeContiguousTensorArg(0x3000, {2, 8, 300, 128})},
      {"output", makeContiguousTensorArg(0x4000, {2, 32, 1000, 128})}};
  LaunchConfig config;
  std::string error;
  ASSERT_TRUE(prepareLaunch(manifest, operands, sizes, config, error)) << error;
  EXPECT_EQ(config.grid[0], 8u);
  EXPECT_EQ(config.grid[1], 64u);
  EXPECT_EQ(config.grid[2], 1u);
  EXPECT_EQ(config.block[0], 128u);
  EXPECT_EQ(config.block[1], 1u);
  EXPECT_EQ(config.sharedMemoryBytes, 49152u);
  EXPECT_EQ(config.params.size(), 45u);
}

const char *const kPtx = R"(//
// Generated by LLVM NVPTX Back-End
//
.version 8.7
.target sm_90a
.address_size 64

	// .globl	attn_fwd_f // -- .entry fake(
.extern .shared .align 16 .b8 __dynamic_shmem__0[];

.visible .entry other_kernel()
{
	ret;
}

.visible .entry attn_fwd_f(
	.param .u64 .ptr .global .align 16 attn_fwd_f_param_0,
	.param .u64 attn_fwd_f_param_1, /* a comment, with a comma */
	.param .s64 attn_fwd_f_param_2,
	.param .align 8 .b8 attn_fwd_f_param_3[16],
	.param .u32 attn_fwd_f_param_4
)
.maxntid 128, 1, 1
{
	ret;
}
)";

TEST(CudaLaunchTest, PtxEntryParams) {
  std::vector<unsigned> bytes;
  std::string error;
  ASSERT_TRUE(getPtxEntryParamBytes(kPtx, "attn_fwd_f", bytes, error)) << error;
  EXPECT_EQ(bytes, (std::vector<unsigned>{8, 8, 8, 16, 4}));
  ASSERT_TRUE(getPtxEntryParamBytes(kPtx, "other_kernel", bytes, error))
      << error;
  EXPECT_TRUE(bytes.empty());
  EXPECT_FALSE(getPtxEntryParamBytes(kPtx, "fake", bytes, error));
  EXPECT_EQ(error,
            "the PTX has no entry 'fake' (entries: other_kernel, attn_fwd_f)");
  EXPECT_FALSE(getPtxEntryParamBytes("", "k", bytes, error));
  EXPECT_EQ(error, "the PTX has no entry 'k' (it has no .entry at all)");
}

TEST(CudaLaunchTest, Chips) {
  int major, minor;
  char suffix;
  ASSERT_TRUE(parseChipName("sm_90a", major, minor, suffix));
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_EQ(suffix, 'a');
  ASSERT_TRUE(parseChipName("sm_100f", major, minor, suffix));
  EXPECT_EQ(major, 10);
  EXPECT_EQ(suffix, 'f');
  ASSERT_TRUE(parseChipName("sm_86", major, minor, suffix));
  EXPECT_EQ(major, 8);
  EXPECT_EQ(minor, 6);
  EXPECT_EQ(suffix, '\0');
  EXPECT_FALSE(parseChipName("sm_9", major, minor, suffix));
  EXPECT_FALSE(parseChipName("compute_90", major, minor, suffix));
  EXPECT_FALSE(parseChipName("sm_90ab", major, minor, suffix));

  EXPECT_TRUE(isChipCompatible("sm_90a", 9, 0));
  EXPECT_FALSE(isChipCompatible("sm_90a", 10, 0));
  EXPECT_TRUE(isChipCompatible("sm_80", 9, 0));
  EXPECT_FALSE(isChipCompatible("sm_90", 8, 6));
  EXPECT_TRUE(isChipCompatible("sm_100f", 10, 3));
  EXPECT_FALSE(isChipCompatible("sm_100f", 12, 0));
  EXPECT_TRUE(isChipCompatible("gfx942", 9, 0)); // Unknown: the driver decides.
}

TEST(CudaLaunchTest, InputCopies) {
  const uint64_t l2 = 60ull << 20, lots = 100ull << 30;
  // A set larger than twice the L2: no copies.
  EXPECT_EQ(chooseNumInputCopies(200ull << 20, l2, lots, 64), 1u);
  EXPECT_EQ(chooseNumInputCopies(120ull << 20, l2, lots, 64), 1u);
  // 16 MiB sets: 8 of them cover 2 * 60 MiB.
  EXPECT_EQ(chooseNumInputCopies(16ull << 20, l2, lots, 64), 8u);
  // Capped by memory (2 extra copies fit) and by maxCopies.
  EXPECT_EQ(chooseNumInputCopies(16ull << 20, l2, 40ull << 20, 64), 3u);
  EXPECT_EQ(chooseNumInputCopies(1024, l2, lots, 64), 64u);
  EXPECT_EQ(chooseNumInputCopies(0, l2, lots, 64), 1u);
  EXPECT_EQ(chooseNumInputCopies(1024, l2, 0, 64), 1u);

  int64_t first, end;
  getTensorByteSpan(makeContiguousTensorArg(0x1000, {2, 3, 4}), 2, first, end);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(end, 48);
  TensorArg view;
  view.sizes = {2, 3};
  view.strides = {-10, 0};
  view.offset = 10;
  getTensorByteSpan(view, 4, first, end);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(end, 44);

  EXPECT_EQ(getMedian({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(getMedian({4.0, 1.0, 2.0, 3.0}), 2.5);
  EXPECT_EQ(getMedian({}), 0.0);
}

TEST(CudaLaunchTest, Roofline) {
  std::string note;
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_90a", "NVIDIA H200", ElementType::BF16,
                                 PrecisionMode::Default, note),
                   989.4);
  EXPECT_EQ(note, "H100/H200 SXM dense f16/bf16 tensor cores: 989.4 TFLOP/s");
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_90", "NVIDIA H100 80GB HBM3",
                                 ElementType::F32, PrecisionMode::Default,
                                 note),
                   494.7);
  EXPECT_DOUBLE_EQ(
      getPeakTflops("sm_90", "", ElementType::F32, PrecisionMode::IEEE, note),
      66.9);
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_90", "NVIDIA H100 PCIe", ElementType::F16,
                                 PrecisionMode::Default, note),
                   756.5);
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_80", "NVIDIA A100-SXM4-80GB",
                                 ElementType::F32, PrecisionMode::TF32, note),
                   156.0);
  EXPECT_DOUBLE_EQ(
      getPeakTflops("sm_80", "", ElementType::F32, PrecisionMode::IEEE, note),
      19.5);
  EXPECT_EQ(getPeakTflops("sm_86", "NVIDIA RTX A6000", ElementType::BF16,
                          PrecisionMode::Default, note),
            0.0);
  EXPECT_EQ(note, "no peak FLOP/s known for sm_86 (NVIDIA RTX A6000); the "
                  "floor counts bytes only");

  // The seed workload of DESIGN.md: fp32, B32 H96 T512 D128.
  ProblemSizes sizes = makeSizes(32, 96, 96, 512, 512, 128, 128);
  EXPECT_DOUBLE_EQ(getAttentionFlops(sizes, CausalMode::None),
                   4.0 * 32 * 96 * 512 * 512 * 128);
  EXPECT_DOUBLE_EQ(getAttentionFlops(sizes, CausalMode::TopLeft),
                   2.0 * 32 * 96 * 512 * 512 * 128);
  ProblemSizes uneven = sizes;
  uneven.Tk = 1024;
  EXPECT_DOUBLE_EQ(getAttentionFlops(uneven, CausalMode::BottomRight),
                   4.0 * 32 * 96 * 512 * 1024 * 128);
  double bytes = getAttentionBytes(sizes, ElementType::F32);
  EXPECT_DOUBLE_EQ(bytes, 4.0 * 32 * 96 * 512 * 128 * 4);
  EXPECT_DOUBLE_EQ(
      getAttentionBytes(sizes, ElementType::F32, 512 * 512, ElementType::I1),
      bytes + 512 * 512);
  // Causal: the HBM floor at 4.2 TB/s, about 0.77 ms, is above the tf32
  // floor, about 0.42 ms.
  double floorMs = rooflineFloorMs(
      getAttentionFlops(sizes, CausalMode::TopLeft), bytes, 494.7, 4.2e12);
  EXPECT_NEAR(floorMs, bytes / 4.2e12 * 1e3, 1e-12);
  EXPECT_NEAR(floorMs, 0.767, 0.001);
  EXPECT_DOUBLE_EQ(rooflineFloorMs(1e12, 0, 1.0, 0), 1000.0);
  EXPECT_DOUBLE_EQ(rooflineFloorMs(1e12, 1e9, 0, 1e12), 1.0);
  EXPECT_EQ(rooflineFloorMs(1e12, 1e9, 0, 0), 0.0);
}

//===----------------------------------------------------------------------===//
// CudaDevice::open: clean errors without a driver or device
//===----------------------------------------------------------------------===//

TEST(CudaDeviceTest, OpenFailsCleanlyOrDescribesTheDevice) {
  CudaDevice device;
  std::string error;
  if (!CudaDevice::open(0, device, error)) {
    // A machine without a GPU: one of the documented messages, and the same
    // one again on a second attempt.
    EXPECT_FALSE(device.isOpen());
    EXPECT_TRUE(error == "no CUDA driver found (libcuda.so.1 could not be "
                         "loaded)" ||
                error == "no CUDA driver found (libcuda.so.1 is the CUDA "
                         "toolkit's stub library)" ||
                error == "no CUDA device present")
        << error;
    std::string again;
    EXPECT_FALSE(CudaDevice::open(0, device, again));
    EXPECT_EQ(again, error);
    std::string loadError;
    EXPECT_EQ(loadCudaDriver(loadError), nullptr);
    EXPECT_EQ(loadError, error);
    return;
  }
  // A machine with a GPU.
  EXPECT_TRUE(device.isOpen());
  EXPECT_FALSE(device.getName().empty());
  EXPECT_GE(device.getComputeCapabilityMajor(), 3);
  EXPECT_GT(device.getMultiprocessorCount(), 0);
  EXPECT_GT(device.getL2CacheBytes(), 0);
  EXPECT_GT(device.getMemoryBandwidthBytesPerSecond(), 1e10);
  EXPECT_GT(device.getTotalMemoryBytes(), 0u);
  CudaDevice missing;
  EXPECT_FALSE(CudaDevice::open(1 << 20, missing, error));
  EXPECT_EQ(error.substr(0, 28), "CUDA device 1048576 not pres");
}

#endif // ATTN_HAS_CUDA_DRIVER

} // namespace

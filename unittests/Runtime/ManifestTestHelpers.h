//===- ManifestTestHelpers.h - Manifests shared by the tests ----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The example manifests of docs/Manifest.md (version 1),
// docs/ManifestKernels.md (version 2 with a workspace and a prologue kernel,
// version 3 with tensor maps, version 4 with the log-sum-exp) and
// docs/ManifestServing.md (version 5 with an epilogue kernel and kv_lengths),
// as text and built in code, and problem sizes in one call, for
// ManifestTest.cpp, ManifestV2Test.cpp ... ManifestV5Test.cpp,
// TensorMapTest.cpp and CudaLaunchTest.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_RUNTIME_MANIFESTTESTHELPERS_H
#define ATTN_UNITTESTS_RUNTIME_MANIFESTTESTHELPERS_H

#include "attn/Runtime/Manifest.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <string>

namespace attn {
namespace runtime {
namespace unittest {

/// `base` with `from` replaced by `to` (once; a test failure if `from` is
/// not in it).
inline std::string editText(const std::string &base, const std::string &from,
                            const std::string &to) {
  std::string text = base;
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to);
  return text;
}

/// The error of parsing `text` (a test failure if it parses).
inline std::string manifestError(const std::string &text) {
  Manifest manifest;
  std::string error;
  EXPECT_FALSE(parseManifest(text, manifest, error));
  return error;
}

/// The example of docs/Manifest.md.
inline const char *const kExampleText = R"({
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
inline Manifest makeExampleManifest() {
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

/// The version 2 example of docs/ManifestKernels.md: a mask whose block map a
/// prologue kernel writes into a workspace.
inline const char *const kExampleV2Text = R"({
  "format": "attn-mlir-manifest", "version": 2,
  "kernel": "attn_fwd_f",
  "ptx": "f.ptx",
  "chip": "sm_90a",
  "function": "f",
  "element_type": "bf16",
  "query":  {"shape": [-1, 32, -1, 128]},
  "key":    {"shape": [-1, 8, -1, 128]},
  "value":  {"shape": [-1, 8, -1, 128]},
  "output": {"shape": [-1, 32, -1, 128]},
  "mask":   {"element_type": "i1", "shape": [1, 1, -1, -1]},
  "attributes": {"scale": 0.08838834764831845, "causal": null, "precision": null},
  "config": {"block_m": 128, "block_n": 64, "num_warps": 4, "num_stages": 2},
  "block": [128, 1, 1],
  "grid": [ {"ceil_div": ["Tq", 128]}, {"mul": ["B", "Hq"]}, 1 ],
  "shared_memory_bytes": 49152,
  "params": [
    {"kind": "memref", "operand": "query", "rank": 4},
    {"kind": "memref", "operand": "key", "rank": 4},
    {"kind": "memref", "operand": "value", "rank": 4},
    {"kind": "memref", "operand": "mask", "rank": 4},
    {"kind": "memref", "operand": "output", "rank": 4},
    {"kind": "workspace", "name": "mask_block_map", "rank": 4},
    {"kind": "size", "name": "Tk"}
  ],
  "workspace": [
    {"name": "mask_block_map", "element_bytes": 1,
     "shape": [1, 1, {"ceil_div": ["Tq", 128]}, {"ceil_div": ["Tk", 64]}]}
  ],
  "prologue": [
    {"kernel": "attn_fwd_f_mask_map", "block": [128, 1, 1],
     "grid": [{"ceil_div": ["Tk", 64]}, {"ceil_div": ["Tq", 128]}, 1],
     "shared_memory_bytes": 0,
     "params": [
       {"kind": "memref", "operand": "mask", "rank": 4},
       {"kind": "workspace", "name": "mask_block_map", "rank": 4},
       {"kind": "size", "name": "Tq"},
       {"kind": "size", "name": "Tk"}
     ]}
  ]
}
)";

/// kExampleV2Text, built in code.
inline Manifest makeExampleV2Manifest() {
  Manifest manifest = makeExampleManifest();
  manifest.mask = MaskSpec{ElementType::I1, {1, 1, -1, -1}};
  manifest.params.insert(manifest.params.begin() + 3,
                         KernelParam::memref("mask", 4));
  manifest.params.insert(manifest.params.begin() + 5,
                         KernelParam::workspace("mask_block_map", 4));
  WorkspaceSpec map;
  map.name = "mask_block_map";
  map.elementBytes = 1;
  map.shape = {GridExpr::constant(1), GridExpr::constant(1),
               GridExpr::ceilDiv(GridExpr::size("Tq"), GridExpr::constant(128)),
               GridExpr::ceilDiv(GridExpr::size("Tk"), GridExpr::constant(64))};
  manifest.workspaces.push_back(map);
  PrologueKernel prologue;
  prologue.kernel = "attn_fwd_f_mask_map";
  prologue.block[0] = 128;
  prologue.grid[0] =
      GridExpr::ceilDiv(GridExpr::size("Tk"), GridExpr::constant(64));
  prologue.grid[1] =
      GridExpr::ceilDiv(GridExpr::size("Tq"), GridExpr::constant(128));
  prologue.grid[2] = GridExpr::constant(1);
  prologue.params = {KernelParam::memref("mask", 4),
                     KernelParam::workspace("mask_block_map", 4),
                     KernelParam::size("Tq"), KernelParam::size("Tk")};
  manifest.prologue.push_back(prologue);
  return manifest;
}

/// The version 3 example of docs/ManifestKernels.md: an f32 kernel that loads key
/// and value tiles with TMA, through a tensor map of each.
inline const char *const kExampleV3Text = R"({
  "format": "attn-mlir-manifest", "version": 3,
  "kernel": "attn_fwd_f",
  "ptx": "f.ptx",
  "chip": "sm_90a",
  "function": "f",
  "element_type": "f32",
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
    {"kind": "tensor_map", "operand": "key", "box": [1, 1, 64, 32], "swizzle": 128},
    {"kind": "tensor_map", "operand": "value", "box": [1, 1, 64, 32], "swizzle": 128},
    {"kind": "size", "name": "Tk"}
  ]
}
)";

/// kExampleV3Text, built in code.
inline Manifest makeExampleV3Manifest() {
  Manifest manifest = makeExampleManifest();
  manifest.elementType = ElementType::F32;
  manifest.params.insert(
      manifest.params.begin() + 4,
      {KernelParam::tensorMap("key", {1, 1, 64, 32}, 128),
       KernelParam::tensorMap("value", {1, 1, 64, 32}, 128)});
  return manifest;
}

/// The version 4 example of docs/ManifestKernels.md: the version 1 example that
/// also writes the log-sum-exp result.
inline const char *const kExampleV4Text = R"({
  "format": "attn-mlir-manifest", "version": 4,
  "kernel": "attn_fwd_f",
  "ptx": "f.ptx",
  "chip": "sm_90a",
  "function": "f",
  "element_type": "bf16",
  "query":  {"shape": [-1, 32, -1, 128]},
  "key":    {"shape": [-1, 8, -1, 128]},
  "value":  {"shape": [-1, 8, -1, 128]},
  "output": {"shape": [-1, 32, -1, 128]},
  "lse":    {"shape": [-1, 32, -1]},
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
    {"kind": "memref", "operand": "lse", "rank": 3},
    {"kind": "size", "name": "Tk"}
  ]
}
)";

/// kExampleV4Text, built in code.
inline Manifest makeExampleV4Manifest() {
  Manifest manifest = makeExampleManifest();
  manifest.lse = OperandSpec{{-1, 32, -1}};
  manifest.params.insert(manifest.params.begin() + 4,
                         KernelParam::memref("lse", 3));
  return manifest;
}

/// A version 5 manifest after docs/ManifestServing.md's: a split decode kernel (f16,
/// Tq 3, Hq 8, Hkv 2, D 64) with its combine kernel as an epilogue kernel,
/// and per-batch key lengths.
inline const char *const kExampleV5Text = R"({
  "format": "attn-mlir-manifest", "version": 5,
  "kernel": "decode_kernel",
  "ptx": "decode.ptx",
  "chip": "sm_90a",
  "function": "decode",
  "element_type": "f16",
  "query":  {"shape": [-1, 8, 3, 64]},
  "key":    {"shape": [-1, 2, -1, 64]},
  "value":  {"shape": [-1, 2, -1, 64]},
  "output": {"shape": [-1, 8, 3, 64]},
  "lse":    {"shape": [-1, 8, 3]},
  "mask":   null,
  "kv_lengths": {"element_type": "i32", "shape": [-1]},
  "attributes": {"scale": 0.125, "causal": "bottom_right", "precision": null},
  "config": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},
  "block": [128, 1, 1],
  "grid": [
    {"min": [{"ceil_div": ["Tk", 256]}, {"ceil_div": [264, {"mul": ["B", 8]}]}]},
    "Hq", "B"],
  "shared_memory_bytes": 42016,
  "params": [
    {"kind": "memref", "operand": "query", "rank": 4},
    {"kind": "memref", "operand": "key", "rank": 4},
    {"kind": "memref", "operand": "value", "rank": 4},
    {"kind": "memref", "operand": "kv_lengths", "rank": 1},
    {"kind": "workspace", "name": "split_lse", "rank": 4},
    {"kind": "workspace", "name": "split_output", "rank": 5}
  ],
  "workspace": [
    {"name": "split_output", "element_bytes": 4,
     "shape": [{"min": [{"ceil_div": ["Tk", 256]}, {"ceil_div": [264, {"mul": ["B", 8]}]}]},
               "B", 8, 3, 64]},
    {"name": "split_lse", "element_bytes": 4,
     "shape": [{"min": [{"ceil_div": ["Tk", 256]}, {"ceil_div": [264, {"mul": ["B", 8]}]}]},
               "B", 8, 3]}
  ],
  "epilogue": [
    {"kernel": "decode_combine", "block": [128, 1, 1], "grid": ["Tq", "Hq", "B"],
     "shared_memory_bytes": 0,
     "params": [
       {"kind": "memref", "operand": "query", "rank": 4},
       {"kind": "memref", "operand": "key", "rank": 4},
       {"kind": "memref", "operand": "lse", "rank": 3},
       {"kind": "memref", "operand": "output", "rank": 4},
       {"kind": "workspace", "name": "split_output", "rank": 5},
       {"kind": "workspace", "name": "split_lse", "rank": 4}
     ]}
  ]
}
)";

/// kExampleV5Text, built in code.
inline Manifest makeExampleV5Manifest() {
  using K = GridExpr::Kind;
  Manifest manifest;
  manifest.kernel = "decode_kernel";
  manifest.ptx = "decode.ptx";
  manifest.chip = "sm_90a";
  manifest.function = "decode";
  manifest.elementType = ElementType::F16;
  manifest.query.shape = {-1, 8, 3, 64};
  manifest.key.shape = {-1, 2, -1, 64};
  manifest.value.shape = {-1, 2, -1, 64};
  manifest.output.shape = {-1, 8, 3, 64};
  manifest.lse = OperandSpec{{-1, 8, 3}};
  manifest.kvLengths = MaskSpec{ElementType::I32, {-1}};
  manifest.attributes.scale = 0.125;
  manifest.attributes.causal = CausalMode::BottomRight;
  manifest.config = {64, 64, 4, 2, {}};
  manifest.block[0] = 128;
  GridExpr splits = GridExpr::binary(
      K::Min, GridExpr::ceilDiv(GridExpr::size("Tk"), GridExpr::constant(256)),
      GridExpr::ceilDiv(
          GridExpr::constant(264),
          GridExpr::mul(GridExpr::size("B"), GridExpr::constant(8))));
  manifest.grid[0] = splits;
  manifest.grid[1] = GridExpr::size("Hq");
  manifest.grid[2] = GridExpr::size("B");
  manifest.sharedMemoryBytes = 42016;
  manifest.params = {KernelParam::memref("query", 4),
                     KernelParam::memref("key", 4),
                     KernelParam::memref("value", 4),
                     KernelParam::memref("kv_lengths", 1),
                     KernelParam::workspace("split_lse", 4),
                     KernelParam::workspace("split_output", 5)};
  GridExpr b = GridExpr::size("B"), hq = GridExpr::constant(8),
           tq = GridExpr::constant(3), dv = GridExpr::constant(64);
  manifest.workspaces = {{"split_output", 4, {splits, b, hq, tq, dv}},
                         {"split_lse", 4, {splits, b, hq, tq}}};
  EpilogueKernel combine;
  combine.kernel = "decode_combine";
  combine.block[0] = 128;
  combine.grid[0] = GridExpr::size("Tq");
  combine.grid[1] = GridExpr::size("Hq");
  combine.grid[2] = GridExpr::size("B");
  combine.params = {KernelParam::memref("query", 4),
                    KernelParam::memref("key", 4),
                    KernelParam::memref("lse", 3),
                    KernelParam::memref("output", 4),
                    KernelParam::workspace("split_output", 5),
                    KernelParam::workspace("split_lse", 4)};
  manifest.epilogue.push_back(combine);
  return manifest;
}

/// The problem sizes, in the order of ProblemSizes.
inline ProblemSizes makeSizes(int64_t b, int64_t hq, int64_t hkv, int64_t tq,
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

} // namespace unittest
} // namespace runtime
} // namespace attn

#endif // ATTN_UNITTESTS_RUNTIME_MANIFESTTESTHELPERS_H

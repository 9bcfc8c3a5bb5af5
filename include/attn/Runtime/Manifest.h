//===- Manifest.h - Launch manifests of compiled kernels --------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The launch manifest that `attn-translate` writes next to a kernel's PTX:
// everything a program needs to launch the kernel through the CUDA driver
// without LLVM or MLIR (docs/Manifest.md), and the evaluation that turns a
// manifest and an actual problem into a launch. Errors are `false` plus one
// line that starts with the path of the offending member, e.g. "grid[0]:
// unknown size name 'Tx' (...)"; python/attn_mlir/manifest.py reads the same
// files with the same messages (python/tests/shared_cases.json).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MANIFEST_H
#define ATTN_RUNTIME_MANIFEST_H

#include "attn/Runtime/Reference.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn {
namespace runtime {

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// `precision` of the attn op (Default: absent, which means tf32 for f32).
enum class PrecisionMode { Default, TF32, IEEE };

/// A tensor operand as compiled (-1: a dynamic dimension).
struct OperandSpec {
  std::vector<int64_t> shape;
};

/// The optional mask operand; also a tensor the op's score_mod / mask_mod
/// regions read (CaptureSpec, SPEC section 1.1): f32, i32 or i64, passed
/// after the operands as "capture0", "capture1", ...
struct MaskSpec {
  ElementType elementType = ElementType::F32;
  std::vector<int64_t> shape;
};
using CaptureSpec = MaskSpec;

/// Version 7: a paged KV cache's block table, i32 of shape [B, P], and the
/// keys of a page (the key's and value's dim 2).
struct BlockTableSpec : MaskSpec {
  int64_t pageSize = 0;
};

/// The attributes of the attn op the kernel was compiled from.
struct ManifestAttributes {
  /// Absent: the op's default, 1/sqrt(D).
  std::optional<double> scale;
  CausalMode causal = CausalMode::None;
  PrecisionMode precision = PrecisionMode::Default;
  /// `window`'s (left, right), -1 unbounded; absent: no window.
  std::optional<std::pair<int64_t, int64_t>> window;
  /// Absent: no softcap.
  std::optional<double> softcap;
  /// Whether the op has a score_mod / mask_mod region. The regions are not
  /// in the manifest: a runner without MLIR cannot evaluate them.
  bool scoreMod = false, maskMod = false;
};

/// The kernel config (0: not stated). Other members of "config" are kept in
/// order in `extra` as (key, JSON text): an autotuner may add keys.
struct KernelConfig {
  int64_t blockM = 0, blockN = 0, numWarps = 0, numStages = 0;
  std::vector<std::pair<std::string, std::string>> extra;
};

/// A grid dimension as a function of the problem sizes.
struct GridExpr {
  enum class Kind { Constant, Size, CeilDiv, Mul, Add, Min, Max };
  Kind kind = Kind::Constant;
  int64_t value = 1;              // Constant
  std::string name;               // Size: one of getSizeNames()
  std::vector<GridExpr> operands; // the binary kinds: two

  static GridExpr constant(int64_t value) {
    return {Kind::Constant, value, "", {}};
  }
  static GridExpr size(std::string name) {
    return {Kind::Size, 1, std::move(name), {}};
  }
  static GridExpr binary(Kind kind, GridExpr lhs, GridExpr rhs) {
    return {kind, 1, "", {std::move(lhs), std::move(rhs)}};
  }
  static GridExpr ceilDiv(GridExpr lhs, GridExpr rhs) {
    return binary(Kind::CeilDiv, std::move(lhs), std::move(rhs));
  }
  static GridExpr mul(GridExpr lhs, GridExpr rhs) {
    return binary(Kind::Mul, std::move(lhs), std::move(rhs));
  }

  /// "ceil_div", "mul", "add", "min", "max" (nullptr for the leaf kinds).
  static const char *getOperatorName(Kind kind);
  /// E.g. "ceil_div(Tq, 128)".
  std::string toString() const;
};

/// One entry of "params".
struct KernelParam {
  enum class Kind { MemRef, Size, Workspace, TensorMap };
  Kind kind = Kind::MemRef;
  /// MemRef and TensorMap: "query", "key", "value", "output" ("mask",
  /// "lse" and "captureI": a memref only).
  std::string operand;
  /// MemRef and Workspace: the rank.
  unsigned rank = 0;
  /// Size: one of getSizeNames(); Workspace: a Manifest::workspaces name.
  std::string name;
  /// TensorMap: the box (the tile one TMA copy moves), outermost first,
  /// each 1 .. 256, and the swizzle in bytes (0, 32, 64 or 128).
  std::vector<int64_t> box;
  unsigned swizzle = 0;

  static KernelParam memref(std::string operand, unsigned rank) {
    return {Kind::MemRef, std::move(operand), rank, "", {}, 0};
  }
  static KernelParam size(std::string name) {
    return {Kind::Size, "", 0, std::move(name), {}, 0};
  }
  static KernelParam workspace(std::string name, unsigned rank) {
    return {Kind::Workspace, "", rank, std::move(name), {}, 0};
  }
  static KernelParam tensorMap(std::string operand, std::vector<int64_t> box,
                               unsigned swizzle) {
    return {Kind::TensorMap, std::move(operand), 0, "", std::move(box),
            swizzle};
  }

  /// The 8-byte kernel parameters it expands to: 3 + 2 * rank for a memref
  /// or a workspace, 1 for a size or a tensor map (a device pointer).
  unsigned getNumSlots() const {
    return kind == Kind::Size || kind == Kind::TensorMap ? 1 : 3 + 2 * rank;
  }

  bool operator==(const KernelParam &other) const {
    return kind == other.kind && operand == other.operand &&
           rank == other.rank && name == other.name && box == other.box &&
           swizzle == other.swizzle;
  }
  bool operator!=(const KernelParam &other) const { return !(*this == other); }
};

/// A dense device buffer a launch allocates for its kernels (version 2),
/// e.g. the block map of a mask tensor, written by a prologue kernel.
struct WorkspaceSpec {
  std::string name;
  int64_t elementBytes = 1;    // 1, 2, 4 or 8
  std::vector<GridExpr> shape; // each >= 1 when evaluated
};

/// How one kernel of the PTX module is launched: the main kernel (these
/// members of the Manifest), a prologue kernel, launched before it on the
/// same stream (version 2), or an epilogue kernel, launched after it
/// (version 5; split-KV's combine).
struct KernelLaunch {
  std::string kernel; // the PTX entry name
  unsigned block[3] = {1, 1, 1};
  GridExpr grid[3];
  /// Dynamic shared memory bytes (without the PTX's static .shared ones).
  int64_t sharedMemoryBytes = 0;
  std::vector<KernelParam> params;

  unsigned getNumParamSlots() const;
};
using PrologueKernel = KernelLaunch;
using EpilogueKernel = KernelLaunch;

/// Where a kernel runs in a launch.
enum class KernelStage { Prologue, Main, Epilogue };

/// One kernel of a launch (Manifest::getLaunchOrder).
struct LaunchStep {
  KernelStage stage = KernelStage::Main;
  /// In Manifest::prologue or Manifest::epilogue (0 for the main kernel).
  size_t index = 0;
  /// In Manifest::getKernels(): the main kernel 0, the prologue kernels
  /// 1 .. P, the epilogue kernels P + 1 .. P + E.
  size_t kernelIndex = 0;
  const KernelLaunch *kernel = nullptr;

  /// The JSON path of the kernel: "prologue[1]", "epilogue[0]", "" for the
  /// main kernel.
  std::string getPath() const;
  /// "prologue kernel 'NAME'", "epilogue kernel 'NAME'", "kernel 'NAME'".
  std::string describe() const;
};

/// A launch manifest (format "attn-mlir-manifest").
struct Manifest : KernelLaunch {
  static constexpr const char *kFormat = "attn-mlir-manifest";
  static constexpr int64_t kVersion = 7; // the newest

  std::string ptx;      // relative to the manifest's directory, or absolute
  std::string chip;     // e.g. "sm_90a"
  std::string function; // the MLIR function (may be empty)
  /// Of query, key, value and output (never I1).
  ElementType elementType = ElementType::F32;
  OperandSpec query, key, value, output;
  /// Version 4: the log-sum-exp result (SPEC.md section 1.2), f32
  /// B x Hq x Tq, passed by the memref param "lse"; absent when the kernel
  /// writes none.
  std::optional<OperandSpec> lse;
  std::optional<MaskSpec> mask;
  /// Version 5: the per-batch key counts (FlashAttention's cache_seqlens),
  /// i32 of shape [B], passed by the memref param "kv_lengths"; absent when
  /// the op has none.
  std::optional<MaskSpec> kvLengths;
  /// Version 6: packed sequences' offsets (FlashAttention's varlen
  /// cu_seqlens), i32 of shape [N + 1] each, passed by the memref params
  /// "cu_seqlens_q" and "cu_seqlens_k"; both absent when the op has none.
  std::optional<MaskSpec> cuSeqlensQ, cuSeqlensK;
  /// Version 7: a paged KV cache (vLLM's and FlashAttention's block_table):
  /// key and value are NP x Hkv x page x D pools of pages, the table i32 of
  /// shape [B, P] passed by the memref param "block_table"; the sizes' Tk is
  /// P * page. Absent when the op has none.
  std::optional<BlockTableSpec> blockTable;
  std::vector<CaptureSpec> captures; // "captures", absent when empty
  ManifestAttributes attributes;
  KernelConfig config;
  std::vector<WorkspaceSpec> workspaces; // version 2: "workspace"
  std::vector<PrologueKernel> prologue;  // version 2: "prologue"
  std::vector<EpilogueKernel> epilogue;  // version 5: "epilogue"
  /// Not serialized: the manifest file's directory (readManifestFile).
  std::string directory;

  /// 7 with a block_table, else 6 with cu_seqlens, else 5 with epilogue
  /// kernels or kv_lengths, else 4
  /// with an lse, else 3 with
  /// a tensor_map param, else 2 with workspaces or prologue kernels, else 1:
  /// what serializeManifest writes, so that older readers keep reading the
  /// kernels they can launch.
  int64_t getVersion() const;
  bool hasTensorMaps() const;
  /// The main kernel, then the prologue kernels, then the epilogue kernels.
  std::vector<const KernelLaunch *> getKernels() const;
  /// The kernels in launch order: the prologue kernels, the main kernel,
  /// the epilogue kernels.
  std::vector<LaunchStep> getLaunchOrder() const;
  /// nullptr when there is none.
  const WorkspaceSpec *getWorkspace(std::string_view name) const;
  /// The PTX path resolved against `directory`.
  std::string getPtxPath() const;
  /// "query", "key", "value", "output" or, when the kernel writes one,
  /// "lse" (nullptr otherwise).
  const OperandSpec *getOperand(std::string_view name) const;
  /// The capture an operand name ("capture0", ...) passes, or nullptr.
  const CaptureSpec *getCapture(std::string_view name) const;
};

/// B, Hq, Hkv, Tq, Tk, D, Dv, N: the names of grid expressions and size
/// params (N, version 6: the packed sequences of cu_seqlens, 0 without).
const std::vector<std::string> &getSizeNames();

/// Checks the rules of docs/Manifest.md; parseManifest calls it.
bool verifyManifest(const Manifest &manifest, std::string &error);

/// Parses manifest JSON text (version 1 to 5), then verifyManifest.
/// Unknown keys are errors, except inside "config", and so are the members
/// of a newer version.
bool parseManifest(const std::string &text, Manifest &out, std::string &error);

/// The manifest as JSON text, version getVersion(): keys in the order of
/// docs/Manifest.md, containers on one line where they fit in 80 columns.
std::string serializeManifest(const Manifest &manifest);

/// Reads and parses a manifest file and sets `out.directory`.
bool readManifestFile(const std::string &path, Manifest &out,
                      std::string &error);

bool writeManifestFile(const std::string &path, const Manifest &manifest,
                       std::string &error);

/// Equality of what is serialized.
bool operator==(const Manifest &lhs, const Manifest &rhs);
inline bool operator!=(const Manifest &lhs, const Manifest &rhs) {
  return !(lhs == rhs);
}

//===----------------------------------------------------------------------===//
// Evaluation: from a manifest and an actual problem to a launch
//===----------------------------------------------------------------------===//

/// The sizes of one problem: Q is B x Hq x Tq x D, K is B x Hkv x Tk x D,
/// V is B x Hkv x Tk x Dv, O is B x Hq x Tq x Dv. With a paged cache
/// (version 7), K and V are pools of pages and Tk is P * page, the keys
/// each batch addresses.
struct ProblemSizes {
  int64_t B = 0, Hq = 0, Hkv = 0, Tq = 0, Tk = 0, D = 0, Dv = 0;
  /// The number of packed sequences (cu_seqlens' length - 1), 0 without.
  int64_t N = 0;

  /// False for an unknown name.
  bool get(std::string_view name, int64_t &value) const;
  /// "B=2 Hq=32 Hkv=8 Tq=... Dv=128" (and " N=..." when N is not 0).
  std::string toString() const;

  bool operator==(const ProblemSizes &other) const {
    return toString() == other.toString();
  }
  bool operator!=(const ProblemSizes &other) const { return !(*this == other); }
};

/// Fails on an unknown size, a division by a non-positive number, overflow.
bool evaluateGridExpr(const GridExpr &expr, const ProblemSizes &sizes,
                      int64_t &value, std::string &error);

/// Evaluates the grid; fails unless each dimension is >= 1 and within CUDA's
/// limits (x < 2^31, y and z <= 65535).
bool evaluateGrid(const Manifest &manifest, const ProblemSizes &sizes,
                  unsigned grid[3], std::string &error);
/// A prologue kernel's, whose messages start "prologue kernel 'NAME': ".
bool evaluateGrid(const KernelLaunch &kernel, const ProblemSizes &sizes,
                  unsigned grid[3], std::string &error);
/// Any kernel's of a launch; the messages of a prologue or epilogue kernel
/// start with LaunchStep::describe(), e.g. "epilogue kernel 'f_combine': ".
bool evaluateGrid(const LaunchStep &step, const ProblemSizes &sizes,
                  unsigned grid[3], std::string &error);

/// The shape of `workspace` and its bytes; fails unless every dimension is
/// >= 1 and on overflow, e.g. "workspace 'mask_block_map': shape[2] =
/// ceil_div(Tq, 128) = 0 must be >= 1 (B=2 Hq=32 ...)".
bool evaluateWorkspace(const WorkspaceSpec &workspace,
                       const ProblemSizes &sizes, std::vector<int64_t> &shape,
                       int64_t &bytes, std::string &error);

/// The actual shapes of the operands of one call; the log-sum-exp result's
/// is checked when given.
struct OperandShapes {
  std::vector<int64_t> query, key, value, output, mask, lse, kvLengths;
  std::vector<int64_t> cuSeqlensQ, cuSeqlensK, blockTable;
  bool hasMask = false, hasLse = false, hasKvLengths = false;
  bool hasCuSeqlens = false, hasBlockTable = false;
};

/// Checks actual shapes against the manifest and against each other (SPEC.md
/// section 1), e.g. "key: dimension 1 is 16 but the kernel was compiled for
/// 8 (compiled shape ?x8x?x128, actual 2x16x512x128)".
bool checkShapes(const Manifest &manifest, const OperandShapes &shapes,
                 std::string &error);

/// checkShapes, then reads the problem sizes off the shapes.
bool inferProblemSizes(const Manifest &manifest, const OperandShapes &shapes,
                       ProblemSizes &sizes, std::string &error);

/// inferProblemSizes of the tensors of `problem` and an output of
/// `outputShape`.
bool inferProblemSizes(const Manifest &manifest,
                       const AttentionProblem &problem,
                       const std::vector<int64_t> &outputShape,
                       ProblemSizes &sizes, std::string &error);

/// A tensor in device memory: element (i0, ..) lives at devicePtr + (offset +
/// sum_k i_k * strides[k]) * element bytes (a (B, T, H, D) tensor passes as
/// (B, H, T, D) with permuted strides).
struct TensorArg {
  uint64_t devicePtr = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

/// A row-major (C order) TensorArg over `sizes`.
TensorArg makeContiguousTensorArg(uint64_t devicePtr,
                                  std::vector<int64_t> sizes);

/// The 8-byte kernel parameters of one launch; getArgs() is cuLaunchKernel's
/// `kernelParams`, valid until the pack changes.
class ParamPack {
public:
  /// `name` is for describe(), which shows a pointer in hex and any other
  /// value as an int64.
  void append(std::string name, uint64_t value, bool pointer = false);

  size_t size() const { return values.size(); }
  uint64_t getValue(size_t index) const { return values[index]; }
  /// E.g. "query.strides[2]".
  const std::string &getName(size_t index) const { return names[index]; }
  void **getArgs();
  /// One line per parameter, "index name = value" (pointers in hex).
  std::string describe() const;

private:
  std::vector<uint64_t> values;
  std::vector<std::string> names;
  std::vector<bool> isPointer;
  std::vector<void *> args;
};

/// The device address of the encoded CUtensorMap a tensor_map param passes
/// for the operand's TensorArg (ManifestKernel::prepare: TensorMap.h).
using TensorMapResolver =
    std::function<bool(const KernelParam &param, const TensorArg &arg,
                       uint64_t &devicePtr, std::string &error)>;

/// The kernel parameters of `params` (the main kernel's, a prologue or an
/// epilogue kernel's) for `operands`, keyed by operand and workspace names: a
/// memref of rank r is the pointer twice, the offset, r sizes and r strides; a
/// workspace the same over its dense evaluated shape (its TensorArg gives
/// the pointer); a size one int64; a tensor map the pointer
/// `resolveTensorMap` gives. Fails on missing or unknown operands, null
/// pointers, negative offsets, ranks, shapes that disagree with the manifest
/// or with `sizes`, the 16-byte vector rules of query, key, value and
/// output, and tensor maps without a resolver.
bool packParams(const Manifest &manifest,
                const std::vector<KernelParam> &params,
                const std::map<std::string, TensorArg> &operands,
                const ProblemSizes &sizes, ParamPack &out, std::string &error,
                const TensorMapResolver &resolveTensorMap = nullptr);
/// packParams of the main kernel's params.
inline bool packParams(const Manifest &manifest,
                       const std::map<std::string, TensorArg> &operands,
                       const ProblemSizes &sizes, ParamPack &out,
                       std::string &error,
                       const TensorMapResolver &resolveTensorMap = nullptr) {
  return packParams(manifest, manifest.params, operands, sizes, out, error,
                    resolveTensorMap);
}

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_MANIFEST_H

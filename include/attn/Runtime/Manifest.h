//===- Manifest.h - Launch manifests of compiled kernels --------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The launch manifest is the JSON file that `attn-translate` writes next to
// the PTX of a compiled attention kernel. It says everything a program needs
// to launch that kernel through the CUDA driver without LLVM or MLIR: the
// entry name, the parameter order and kinds, the block size, the grid as a
// function of the dynamic sizes, the dynamic shared memory, the target chip
// and the attributes of the `attn.attention` op. docs/Manifest.md describes
// the format (versions 1 to 3: version 2 adds workspaces and prologue
// kernels, version 3 the tensor_map param, a TMA descriptor).
//
// This header also holds the evaluation helpers that turn a manifest and the
// actual problem into a launch: evaluateGrid, evaluateWorkspace, checkShapes /
// inferProblemSizes and packParams. The JSON reader and writer the manifest is
// read and written with (JsonValue, parseJson, writeJson) are in Json.h,
// included here.
//
// Standard C++17 only (no CUDA, LLVM or MLIR), compatible with
// -fno-exceptions: errors are returned as `false` plus a one-line message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MANIFEST_H
#define ATTN_RUNTIME_MANIFEST_H

#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Json.h"

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

/// `causal` of the attn op.
enum class CausalMode { None, TopLeft, BottomRight };
/// `precision` of the attn op (Default: the attribute is absent, which means
/// tf32 for f32 inputs).
enum class PrecisionMode { Default, TF32, IEEE };

/// "top_left", "bottom_right" (nullptr for None).
const char *getCausalName(CausalMode mode);
/// "tf32", "ieee" (nullptr for Default).
const char *getPrecisionName(PrecisionMode mode);

/// A tensor operand of the kernel: its shape as compiled, -1 for a dynamic
/// dimension.
struct OperandSpec {
  std::vector<int64_t> shape;
};

/// The optional mask operand.
struct MaskSpec {
  ElementType elementType = ElementType::F32;
  std::vector<int64_t> shape;
};

/// The attributes of the attn op the kernel was compiled from.
struct ManifestAttributes {
  /// Absent: the op's default, 1/sqrt(D).
  std::optional<double> scale;
  CausalMode causal = CausalMode::None;
  PrecisionMode precision = PrecisionMode::Default;
};

/// The kernel config chosen by `--attn-tile` (0: not stated). Members of the
/// "config" object other than the four below are kept, in order, in `extra`
/// (the config is data: an autotuner may add keys).
struct KernelConfig {
  int64_t blockM = 0;
  int64_t blockN = 0;
  int64_t numWarps = 0;
  int64_t numStages = 0;
  JsonValue::Object extra;
};

/// A grid dimension as a function of the problem sizes.
struct GridExpr {
  enum class Kind { Constant, Size, CeilDiv, Mul, Add, Min, Max };
  Kind kind = Kind::Constant;
  /// Kind::Constant.
  int64_t value = 1;
  /// Kind::Size: one of the names of getSizeNames().
  std::string name;
  /// Binary kinds: exactly two operands.
  std::vector<GridExpr> operands;

  static GridExpr constant(int64_t value);
  static GridExpr size(std::string name);
  static GridExpr binary(Kind kind, GridExpr lhs, GridExpr rhs);
  static GridExpr ceilDiv(GridExpr lhs, GridExpr rhs) {
    return binary(Kind::CeilDiv, std::move(lhs), std::move(rhs));
  }
  static GridExpr mul(GridExpr lhs, GridExpr rhs) {
    return binary(Kind::Mul, std::move(lhs), std::move(rhs));
  }

  /// "ceil_div", "mul", "add", "min", "max" (nullptr for the leaf kinds).
  static const char *getOperatorName(Kind kind);

  /// Returns e.g. "ceil_div(Tq, 128)".
  std::string toString() const;

  bool operator==(const GridExpr &other) const;
  bool operator!=(const GridExpr &other) const { return !(*this == other); }
};

/// One entry of "params".
struct KernelParam {
  enum class Kind { MemRef, Size, Workspace, TensorMap };
  Kind kind = Kind::MemRef;
  /// Kind::MemRef: "query", "key", "value", "mask" or "output".
  /// Kind::TensorMap: "query", "key", "value" or "output".
  std::string operand;
  /// Kind::MemRef and Kind::Workspace: the rank (the number of sizes and of
  /// strides).
  unsigned rank = 0;
  /// Kind::Size: one of the names of getSizeNames(). Kind::Workspace: the
  /// name of an entry of Manifest::workspaces.
  std::string name;
  /// Kind::TensorMap (version 3): the box (the tile one TMA copy moves), one
  /// entry per dimension of the operand, outermost first like its shape;
  /// each 1 .. 256.
  std::vector<int64_t> box;
  /// Kind::TensorMap: the shared memory swizzle in bytes, 0 (none), 32, 64
  /// or 128.
  unsigned swizzle = 0;

  static KernelParam memref(std::string operand, unsigned rank);
  static KernelParam size(std::string name);
  /// A memref over workspace `name` (version 2): pointer, pointer, offset 0,
  /// the workspace's evaluated shape and its row-major strides.
  static KernelParam workspace(std::string name, unsigned rank);
  /// A TMA descriptor of `operand` (version 3): one pointer to a 64-byte
  /// aligned CUtensorMap in device memory, encoded at launch from the
  /// operand's TensorArg (TensorMap.h).
  static KernelParam tensorMap(std::string operand, std::vector<int64_t> box,
                               unsigned swizzle);

  /// The number of 8-byte kernel parameters this entry expands to:
  /// 3 + 2 * rank for a memref or a workspace, 1 for a size or a tensor map.
  unsigned getNumSlots() const {
    return kind == Kind::Size || kind == Kind::TensorMap ? 1 : 3 + 2 * rank;
  }

  bool operator==(const KernelParam &other) const;
  bool operator!=(const KernelParam &other) const { return !(*this == other); }
};

/// A device buffer the launch allocates for its kernels (version 2), e.g.
/// the block map of a mask tensor. Dense, row-major; its contents are
/// undefined until a prologue kernel writes them.
struct WorkspaceSpec {
  /// Named by "workspace" params, e.g. "mask_block_map".
  std::string name;
  /// Bytes per element (1, 2, 4 or 8).
  int64_t elementBytes = 1;
  /// The shape, each dimension a grid expression (>= 1 when evaluated).
  std::vector<GridExpr> shape;

  bool operator==(const WorkspaceSpec &other) const;
  bool operator!=(const WorkspaceSpec &other) const {
    return !(*this == other);
  }
};

/// A kernel of the same PTX module launched before the main one, on the same
/// stream, in the order of Manifest::prologue (version 2).
struct PrologueKernel {
  /// The PTX entry name.
  std::string kernel;
  unsigned block[3] = {1, 1, 1};
  GridExpr grid[3];
  int64_t sharedMemoryBytes = 0;
  std::vector<KernelParam> params;

  /// The total number of 8-byte kernel parameters.
  unsigned getNumParamSlots() const;

  bool operator==(const PrologueKernel &other) const;
  bool operator!=(const PrologueKernel &other) const {
    return !(*this == other);
  }
};

/// A launch manifest (format "attn-mlir-manifest", version 1, 2 when it
/// has workspaces or prologue kernels, 3 when it has tensor_map params).
struct Manifest {
  static constexpr const char *kFormat = "attn-mlir-manifest";
  /// The newest version this reader and writer know.
  static constexpr int64_t kVersion = 3;

  /// The PTX entry name.
  std::string kernel;
  /// The PTX file, relative to the manifest's directory (or absolute).
  std::string ptx;
  /// The target chip, e.g. "sm_90a".
  std::string chip;
  /// The MLIR function the kernel was compiled from (may be empty).
  std::string function;
  /// Element type of query, key, value and output (never I1).
  ElementType elementType = ElementType::F32;
  OperandSpec query, key, value, output;
  std::optional<MaskSpec> mask;
  ManifestAttributes attributes;
  KernelConfig config;
  unsigned block[3] = {1, 1, 1};
  GridExpr grid[3];
  /// Dynamic shared memory bytes passed to cuLaunchKernel (the PTX's static
  /// .shared variables are not included).
  int64_t sharedMemoryBytes = 0;
  std::vector<KernelParam> params;
  /// Version 2: device buffers allocated per launch ("workspace").
  std::vector<WorkspaceSpec> workspaces;
  /// Version 2: kernels launched before the main one ("prologue").
  std::vector<PrologueKernel> prologue;

  /// 3 with a tensor_map param (of the main kernel or of a prologue
  /// kernel), else 2 with workspaces or prologue kernels, else 1 (what
  /// serializeManifest writes, so that older readers keep reading the
  /// kernels they can launch).
  int64_t getVersion() const;
  /// Whether a param of the main kernel or of a prologue kernel is a
  /// tensor map.
  bool hasTensorMaps() const;
  /// The workspace called `name`, nullptr if none.
  const WorkspaceSpec *getWorkspace(std::string_view name) const;

  /// Not serialized: the directory of the manifest file, set by
  /// readManifestFile ("" otherwise). Used by getPtxPath.
  std::string directory;

  /// The PTX path resolved against `directory`.
  std::string getPtxPath() const;

  /// The spec of "query", "key", "value" or "output"; nullptr otherwise
  /// (also for "mask": see `mask`).
  const OperandSpec *getOperand(std::string_view name) const;

  /// The total number of 8-byte kernel parameters of the main kernel.
  unsigned getNumParamSlots() const;
};

/// The size names grid expressions and "size" params may use:
/// B, Hq, Hkv, Tq, Tk, D, Dv.
const std::vector<std::string> &getSizeNames();

/// Checks the semantic rules of docs/Manifest.md (ranks, dimensions, size
/// names, operands named by params, block size, workspaces and prologue
/// kernels, tensor maps: operand, box and swizzle, ...). parseManifest calls
/// it. (A manifest in memory has no version: getVersion() follows from its
/// contents, and parseManifest rejects what the file's version lacks.)
bool verifyManifest(const Manifest &manifest, std::string &error);

/// Parses manifest JSON text (version 1, 2 or 3). Unknown keys are errors,
/// except inside "config"; "workspace" and "prologue" are errors in a
/// version 1 manifest, the param kind "tensor_map" before version 3. Errors
/// name the line and column, e.g. "line 12, column 11: grid[0]: unknown size
/// name 'Tx' (expected one of B, Hq, Hkv, Tq, Tk, D, Dv)".
bool parseManifest(const std::string &text, Manifest &out, std::string &error);

/// Writes the manifest as JSON (keys in the order of docs/Manifest.md,
/// indented, with a trailing newline), as version getVersion(): a manifest
/// without workspaces, prologue kernels or tensor maps is written exactly as
/// a version 1 writer wrote it. parseManifest reads it back to an equal
/// manifest
/// (`directory` aside).
std::string serializeManifest(const Manifest &manifest);

/// Reads and parses the manifest file at `path` and sets `out.directory`.
/// Errors start with the path.
bool readManifestFile(const std::string &path, Manifest &out,
                      std::string &error);

/// Writes serializeManifest(manifest) to `path`.
bool writeManifestFile(const std::string &path, const Manifest &manifest,
                       std::string &error);

/// Equality of everything that is serialized.
bool operator==(const Manifest &lhs, const Manifest &rhs);
inline bool operator!=(const Manifest &lhs, const Manifest &rhs) {
  return !(lhs == rhs);
}

//===----------------------------------------------------------------------===//
// Evaluation: from a manifest and an actual problem to a launch
//===----------------------------------------------------------------------===//

/// The sizes of one attention problem (SPEC.md section 1): Q is B x Hq x Tq x
/// D, K is B x Hkv x Tk x D, V is B x Hkv x Tk x Dv, O is B x Hq x Tq x Dv.
struct ProblemSizes {
  int64_t B = 0, Hq = 0, Hkv = 0, Tq = 0, Tk = 0, D = 0, Dv = 0;

  /// The size called `name` (see getSizeNames()); false if unknown.
  bool get(std::string_view name, int64_t &value) const;

  bool operator==(const ProblemSizes &other) const;
  bool operator!=(const ProblemSizes &other) const { return !(*this == other); }
};

/// Evaluates one expression. Fails on an unknown size name, a division by a
/// non-positive number and int64 overflow.
bool evaluateGridExpr(const GridExpr &expr, const ProblemSizes &sizes,
                      int64_t &value, std::string &error);

/// Evaluates the three grid dimensions. Fails unless each is >= 1 and within
/// the CUDA limits (x < 2^31, y and z <= 65535).
bool evaluateGrid(const Manifest &manifest, const ProblemSizes &sizes,
                  unsigned grid[3], std::string &error);
/// The same for a prologue kernel; the message starts with "prologue kernel
/// 'NAME': ".
bool evaluateGrid(const PrologueKernel &kernel, const ProblemSizes &sizes,
                  unsigned grid[3], std::string &error);

/// Evaluates the shape of `workspace` and its size in bytes (the product of
/// the shape times elementBytes). Fails unless every dimension is >= 1, and
/// on int64 overflow; the message names the workspace, the expression, its
/// value and the sizes, e.g. "workspace 'mask_block_map': shape[2] =
/// ceil_div(Tq, 128) = 0 must be >= 1 (B=2 Hq=32 Hkv=8 Tq=0 ...)".
bool evaluateWorkspace(const WorkspaceSpec &workspace,
                       const ProblemSizes &sizes, std::vector<int64_t> &shape,
                       int64_t &bytes, std::string &error);

/// The actual shapes of the operands of one call.
struct OperandShapes {
  std::vector<int64_t> query, key, value, output;
  /// Empty when there is no mask.
  std::vector<int64_t> mask;
  bool hasMask = false;
};

/// Validates actual shapes against the manifest (rank, static dimensions,
/// mask presence and rank) and against each other (SPEC.md section 1: equal
/// B, Tq, Tk, D, Dv where they are shared, Hq % Hkv == 0, a mask
/// broadcastable to B x Hq x Tq x Tk, every size >= 1). The message names
/// the operand, the dimension, the compiled shape and the actual one, e.g.
/// "key: dimension 1 is 16 but the kernel was compiled for 8 (compiled
/// shape ?x8x?x128, actual 2x16x512x128)".
bool checkShapes(const Manifest &manifest, const OperandShapes &shapes,
                 std::string &error);

/// checkShapes, then reads the problem sizes off the shapes.
bool inferProblemSizes(const Manifest &manifest, const OperandShapes &shapes,
                       ProblemSizes &sizes, std::string &error);

/// A tensor in device memory as a memref: element (i0, .., i{r-1}) lives at
/// devicePtr + (offset + sum_k i_k * strides[k]) * elementBytes. Strides and
/// offset are in elements; strides may be anything the kernel accepts (a
/// (B, T, H, D) tensor is passed as (B, H, T, D) by permuting its strides).
struct TensorArg {
  uint64_t devicePtr = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

/// A row-major (C order) TensorArg over `sizes`.
TensorArg makeContiguousTensorArg(uint64_t devicePtr,
                                  std::vector<int64_t> sizes);

/// The kernel parameters of one launch. Every parameter is 8 bytes (a device
/// pointer or an int64); the pack owns their storage, and getArgs() returns
/// the `void **kernelParams` array cuLaunchKernel takes, valid until the
/// pack is next modified, moved or destroyed.
class ParamPack {
public:
  ParamPack() = default;
  ParamPack(ParamPack &&) = default;
  ParamPack &operator=(ParamPack &&) = default;
  ParamPack(const ParamPack &) = delete;
  ParamPack &operator=(const ParamPack &) = delete;

  void clear();
  /// Appends one 8-byte parameter; `name` is for describe() only.
  void appendPointer(std::string name, uint64_t devicePtr);
  void appendInt64(std::string name, int64_t value);

  size_t size() const { return values.size(); }
  /// The raw 8 bytes of parameter `index`.
  uint64_t getValue(size_t index) const { return values[index]; }
  /// E.g. "query.strides[2]".
  const std::string &getName(size_t index) const { return names[index]; }

  /// The array of pointers to each parameter, for cuLaunchKernel.
  void **getArgs();

  /// One line per parameter, "index name = value" (pointers in hex).
  std::string describe() const;

private:
  std::vector<uint64_t> values;
  std::vector<std::string> names;
  std::vector<bool> isPointer;
  std::vector<void *> args;
};

/// Gives the device address of the encoded CUtensorMap that a tensor_map
/// param (version 3) passes, for the operand's TensorArg `arg` (the one its
/// memref param passes). ManifestKernel::prepare supplies one that encodes
/// the map (TensorMap.h) and keeps a device copy of it.
using TensorMapResolver =
    std::function<bool(const KernelParam &param, const TensorArg &arg,
                       uint64_t &devicePtr, std::string &error)>;

/// Builds the kernel parameters in the order of `manifest.params`: a memref
/// of rank r expands to the allocated pointer, the aligned pointer (both
/// devicePtr), the offset, r sizes and r strides; a size to one int64 taken
/// from `sizes`; a workspace of rank r to its pointer twice, offset 0, its
/// evaluated shape (evaluateWorkspace) and the row-major strides of that
/// shape; a tensor map to the pointer `resolveTensorMap` gives for its
/// operand (named "key.tensor_map" in describe()). `operands` is keyed by
/// "query", "key", "value", "mask", "output" and the names of the
/// manifest's workspaces. Fails if an operand or a workspace the params name
/// is missing, if an operand is given that no param of the main kernel
/// names (and that is no workspace), on a null pointer, a negative offset, a
/// size or stride list whose length is not the rank, when the operand sizes
/// disagree with the manifest or with `sizes` (inferProblemSizes(...) must
/// give `sizes`), when a workspace's TensorArg has an offset or sizes and
/// strides other than its evaluated shape and row-major strides (empty sizes
/// and strides are filled in), or at a tensor map without a
/// `resolveTensorMap` or whose resolver fails.
bool packParams(const Manifest &manifest,
                const std::map<std::string, TensorArg> &operands,
                const ProblemSizes &sizes, ParamPack &out, std::string &error,
                const TensorMapResolver &resolveTensorMap = nullptr);

/// packParams for `params`, the params of the main kernel or of one of
/// `manifest.prologue`: the same checks of `operands` (against the main
/// kernel's params and the manifest's workspaces), then `params` in order.
bool packParams(const Manifest &manifest,
                const std::vector<KernelParam> &params,
                const std::map<std::string, TensorArg> &operands,
                const ProblemSizes &sizes, ParamPack &out, std::string &error,
                const TensorMapResolver &resolveTensorMap = nullptr);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_MANIFEST_H

//===- Manifest.h - Launch manifests of compiled kernels --------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The launch manifest is the JSON file that `attn-translate` writes next to
// the PTX of a compiled attention kernel: everything a program needs to
// launch that kernel through the CUDA driver without LLVM or MLIR (the entry
// name, the parameter order and kinds, the block size, the grid as a
// function of the dynamic sizes, the dynamic shared memory, the target chip
// and the attributes of the `attn.attention` op). docs/Manifest.md describes
// the format: version 1, version 2 with workspaces and prologue kernels,
// version 3 with tensor_map params (TMA descriptors).
//
// Also here: the evaluation that turns a manifest and an actual problem into
// a launch (evaluateGrid, evaluateWorkspace, checkShapes, inferProblemSizes,
// packParams). Standard C++17 only; errors are `false` plus a one-line
// message that starts with the path of the offending member, e.g.
// "grid[0]: unknown size name 'Tx' (expected one of B, Hq, Hkv, Tq, Tk, D,
// Dv)". python/attn_mlir/manifest.py reads the same files with the same
// messages (python/tests/shared_cases.json holds cases both must pass).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MANIFEST_H
#define ATTN_RUNTIME_MANIFEST_H

#include "attn/Runtime/HostTensor.h"

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

/// `causal` of the attn op.
enum class CausalMode { None, TopLeft, BottomRight };
/// `precision` of the attn op (Default: absent, which means tf32 for f32).
enum class PrecisionMode { Default, TF32, IEEE };

/// "top_left", "bottom_right" (nullptr for None).
const char *getCausalName(CausalMode mode);
/// "tf32", "ieee" (nullptr for Default).
const char *getPrecisionName(PrecisionMode mode);

/// A tensor operand as compiled: -1 for a dynamic dimension.
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

/// The kernel config chosen by `--attn-tile` (0: not stated). Other members
/// of "config" are kept, in order, in `extra` as (key, value as JSON text):
/// the config is data, an autotuner may add keys.
struct KernelConfig {
  int64_t blockM = 0, blockN = 0, numWarps = 0, numStages = 0;
  std::vector<std::pair<std::string, std::string>> extra;
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
  /// E.g. "ceil_div(Tq, 128)".
  std::string toString() const;

  bool operator==(const GridExpr &other) const {
    return kind == other.kind && value == other.value && name == other.name &&
           operands == other.operands;
  }
  bool operator!=(const GridExpr &other) const { return !(*this == other); }
};

/// One entry of "params".
struct KernelParam {
  enum class Kind { MemRef, Size, Workspace, TensorMap };
  Kind kind = Kind::MemRef;
  /// MemRef: "query", "key", "value", "mask" or "output"; TensorMap: the
  /// same but "mask".
  std::string operand;
  /// MemRef and Workspace: the rank (the number of sizes and of strides).
  unsigned rank = 0;
  /// Size: one of getSizeNames(); Workspace: a Manifest::workspaces name.
  std::string name;
  /// TensorMap (version 3): the box (the tile one TMA copy moves), one entry
  /// per operand dimension, outermost first, each 1 .. 256; the shared
  /// memory swizzle in bytes, 0 (none), 32, 64 or 128.
  std::vector<int64_t> box;
  unsigned swizzle = 0;

  static KernelParam memref(std::string operand, unsigned rank);
  static KernelParam size(std::string name);
  /// A memref over workspace `name` (version 2): pointer, pointer, offset 0,
  /// the workspace's evaluated shape and its row-major strides.
  static KernelParam workspace(std::string name, unsigned rank);
  /// A TMA descriptor of `operand` (version 3): one pointer to a 64-byte
  /// aligned CUtensorMap in device memory, encoded at launch (TensorMap.h).
  static KernelParam tensorMap(std::string operand, std::vector<int64_t> box,
                               unsigned swizzle);

  /// The 8-byte kernel parameters this entry expands to: 3 + 2 * rank for a
  /// memref or a workspace, 1 for a size or a tensor map.
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

/// A device buffer the launch allocates for its kernels (version 2), e.g.
/// the block map of a mask tensor. Dense, row-major; undefined until a
/// prologue kernel writes it.
struct WorkspaceSpec {
  /// Named by "workspace" params, e.g. "mask_block_map".
  std::string name;
  /// Bytes per element (1, 2, 4 or 8).
  int64_t elementBytes = 1;
  /// Each dimension a grid expression (>= 1 when evaluated).
  std::vector<GridExpr> shape;

  bool operator==(const WorkspaceSpec &other) const {
    return name == other.name && elementBytes == other.elementBytes &&
           shape == other.shape;
  }
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

  bool operator==(const PrologueKernel &other) const {
    return kernel == other.kernel &&
           std::equal(block, block + 3, other.block) &&
           std::equal(grid, grid + 3, other.grid) &&
           sharedMemoryBytes == other.sharedMemoryBytes &&
           params == other.params;
  }
  bool operator!=(const PrologueKernel &other) const {
    return !(*this == other);
  }
};

/// A launch manifest (format "attn-mlir-manifest").
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
  /// kernel), else 2 with workspaces or prologue kernels, else 1: what
  /// serializeManifest writes, so that older readers keep reading the
  /// kernels they can launch.
  int64_t getVersion() const;
  /// Whether a param of any kernel is a tensor map.
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

/// Checks the rules of docs/Manifest.md (ranks, dimensions, size names,
/// operands named by params, block size, workspaces, prologue kernels,
/// tensor maps). parseManifest calls it; a manifest built in code has no
/// version (getVersion() follows from its contents).
bool verifyManifest(const Manifest &manifest, std::string &error);

/// Parses manifest JSON text (version 1, 2 or 3), then verifyManifest.
/// Unknown keys are errors, except inside "config"; "workspace" and
/// "prologue" are errors before version 2, the param kind "tensor_map"
/// before version 3.
bool parseManifest(const std::string &text, Manifest &out, std::string &error);

/// The manifest as JSON text (keys in the order of docs/Manifest.md,
/// indented, containers on one line where they fit in 80 columns, a
/// trailing newline), as version getVersion(). parseManifest reads it back
/// to an equal manifest (`directory` aside).
std::string serializeManifest(const Manifest &manifest);

/// Reads and parses the manifest file at `path` and sets `out.directory`.
/// Errors start with the path.
bool readManifestFile(const std::string &path, Manifest &out,
                      std::string &error);

/// Writes serializeManifest(manifest) to `path` (writeWholeFile).
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
  /// "B=2 Hq=32 Hkv=8 Tq=... Dv=128".
  std::string toString() const;

  bool operator==(const ProblemSizes &other) const {
    return toString() == other.toString();
  }
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

/// Evaluates the shape of `workspace` and its bytes (the shape's product
/// times elementBytes). Fails unless every dimension is >= 1, and on int64
/// overflow, naming the workspace, the expression, its value and the sizes:
/// "workspace 'mask_block_map': shape[2] = ceil_div(Tq, 128) = 0 must be
/// >= 1 (B=2 Hq=32 ...)".
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
/// mask presence) and against each other (SPEC.md section 1: equal B, Tq,
/// Tk, D, Dv where shared, Hq % Hkv == 0, a mask broadcastable to B x Hq x
/// Tq x Tk, every size >= 1), naming the operand, the dimension and both
/// shapes: "key: dimension 1 is 16 but the kernel was compiled for 8
/// (compiled shape ?x8x?x128, actual 2x16x512x128)".
bool checkShapes(const Manifest &manifest, const OperandShapes &shapes,
                 std::string &error);

/// checkShapes, then reads the problem sizes off the shapes.
bool inferProblemSizes(const Manifest &manifest, const OperandShapes &shapes,
                       ProblemSizes &sizes, std::string &error);

/// A tensor in device memory as a memref: element (i0, .., i{r-1}) lives at
/// devicePtr + (offset + sum_k i_k * strides[k]) * elementBytes. Strides and
/// offset are in elements (a (B, T, H, D) tensor is passed as (B, H, T, D)
/// by permuting its strides).
struct TensorArg {
  uint64_t devicePtr = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

/// A row-major (C order) TensorArg over `sizes`.
TensorArg makeContiguousTensorArg(uint64_t devicePtr,
                                  std::vector<int64_t> sizes);

/// The kernel parameters of one launch, each 8 bytes (a device pointer or an
/// int64). getArgs() returns the `void **kernelParams` of cuLaunchKernel,
/// valid until the pack is next modified, moved or destroyed.
class ParamPack {
public:
  void clear() { *this = ParamPack(); }
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
/// param passes for the operand's TensorArg `arg`. ManifestKernel::prepare
/// supplies one that encodes the map and keeps a device copy (TensorMap.h).
using TensorMapResolver =
    std::function<bool(const KernelParam &param, const TensorArg &arg,
                       uint64_t &devicePtr, std::string &error)>;

/// Builds the kernel parameters of `params` (the main kernel's or a
/// prologue kernel's): a memref of rank r expands to the allocated pointer,
/// the aligned pointer (both devicePtr), the offset, r sizes and r strides;
/// a size to one int64 of `sizes`; a workspace to the same over its
/// evaluated shape, row-major, offset 0; a tensor map to the pointer
/// `resolveTensorMap` gives (named "key.tensor_map" in describe()).
/// `operands` is keyed by "query", "key", "value", "mask", "output" and the
/// workspace names. Fails when an operand or workspace a param names is
/// missing, an operand no param of the main kernel names is given, on a null
/// pointer, a negative offset, sizes or strides whose count is not the rank,
/// operand sizes that disagree with the manifest or with `sizes`
/// (inferProblemSizes(...) must give `sizes`), 16-byte vector rules of the
/// query, key, value and output, a workspace TensorArg other than its
/// evaluated shape (empty sizes and strides are filled in), or a tensor map
/// without a resolver or whose resolver fails.
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

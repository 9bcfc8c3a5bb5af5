//===- ManifestVerify.cpp - The rules of launch manifests -----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// verifyManifest: the semantic rules of docs/Manifest.md, for manifests read
// by parseManifest (which calls it) and for manifests built in code.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "ManifestNames.h"

#include <cmath>
#include <cstdint>
#include <set>

using namespace attn::runtime;
using namespace attn::runtime::detail;

//===----------------------------------------------------------------------===//
// verifyManifest
//===----------------------------------------------------------------------===//

static bool verifyGridExpr(const GridExpr &expr, const std::string &path,
                           std::string &error) {
  switch (expr.kind) {
  case GridExpr::Kind::Constant:
    if (expr.value < 0) {
      error = path + ": negative constant " + std::to_string(expr.value);
      return false;
    }
    return true;
  case GridExpr::Kind::Size:
    if (!isSizeName(expr.name)) {
      error = path + ": unknown size name '" + expr.name +
              "' (expected one of " + getSizeNameList() + ")";
      return false;
    }
    return true;
  default:
    if (expr.operands.size() != 2) {
      error = path + ": '" + GridExpr::getOperatorName(expr.kind) +
              "' takes 2 operands, not " + std::to_string(expr.operands.size());
      return false;
    }
    return verifyGridExpr(expr.operands[0], path, error) &&
           verifyGridExpr(expr.operands[1], path, error);
  }
}

static bool verifyShape(const std::vector<int64_t> &shape,
                        const std::string &name, std::string &error) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 || shape[i] >= 1)
      continue;
    error = name + ".shape[" + std::to_string(i) + "] is " +
            std::to_string(shape[i]) +
            " (expected -1 for a dynamic size or a size >= 1)";
    return false;
  }
  return true;
}

/// The block, grid and shared memory of a kernel; `prefix` is "" for the
/// main kernel, "prologue[i]." for a prologue kernel.
static bool verifyLaunch(const unsigned block[3], const GridExpr grid[3],
                         int64_t sharedMemoryBytes, const std::string &prefix,
                         std::string &error) {
  int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (block[i] < 1) {
      error = prefix + "block[" + std::to_string(i) + "] must be >= 1";
      return false;
    }
    threads *= block[i];
  }
  if (threads > 1024) {
    error = prefix + "block has " + std::to_string(threads) +
            " threads (at most 1024 per block)";
    return false;
  }
  for (int i = 0; i < 3; ++i)
    if (!verifyGridExpr(grid[i], prefix + "grid[" + std::to_string(i) + "]",
                        error))
      return false;
  if (sharedMemoryBytes < 0 || sharedMemoryBytes > INT32_MAX) {
    error = prefix + "shared_memory_bytes is " +
            std::to_string(sharedMemoryBytes) + " (expected 0 .. 2^31-1)";
    return false;
  }
  return true;
}

/// "a, b" or "none" for the workspace names of `manifest`.
static std::string getWorkspaceNameList(const Manifest &manifest) {
  std::string list;
  for (const WorkspaceSpec &workspace : manifest.workspaces)
    list += (list.empty() ? "" : ", ") + workspace.name;
  return list;
}

static bool verifyWorkspace(const Manifest &manifest, size_t index,
                            std::string &error) {
  const WorkspaceSpec &workspace = manifest.workspaces[index];
  std::string path = "workspace[" + std::to_string(index) + "]";
  if (workspace.name.empty()) {
    error = path + ".name: the name is empty";
    return false;
  }
  if (isMemRefOperandName(workspace.name)) {
    error = path + ".name: '" + workspace.name +
            "' is the name of an operand (query, key, value, mask, output)";
    return false;
  }
  for (size_t i = 0; i < index; ++i) {
    if (manifest.workspaces[i].name != workspace.name)
      continue;
    error = path + ".name: '" + workspace.name +
            "' is also the name of workspace[" + std::to_string(i) + "]";
    return false;
  }
  if (!isWorkspaceElementBytes(workspace.elementBytes)) {
    error = path + ".element_bytes is " +
            std::to_string(workspace.elementBytes) + " (expected 1, 2, 4 or 8)";
    return false;
  }
  if (workspace.shape.empty() ||
      workspace.shape.size() > static_cast<size_t>(kMaxRank)) {
    error = path + ".shape has rank " + std::to_string(workspace.shape.size()) +
            " (expected 1 .. " + std::to_string(kMaxRank) + ")";
    return false;
  }
  for (size_t i = 0; i < workspace.shape.size(); ++i)
    if (!verifyGridExpr(workspace.shape[i],
                        path + ".shape[" + std::to_string(i) + "]", error))
      return false;
  return true;
}

/// A tensor_map param at `path` (version 3): a known operand, a box of the
/// operand's rank whose entries are 1 .. 256, a known swizzle, and an inner
/// box dimension that TMA takes with that swizzle.
static bool verifyTensorMap(const Manifest &manifest, const KernelParam &param,
                            const std::string &path, std::string &error) {
  if (!isTensorMapOperandName(param.operand)) {
    error = path + ": a tensor map of unknown operand '" + param.operand +
            "' (expected query, key, value or output)";
    return false;
  }
  size_t rank = manifest.getOperand(param.operand)->shape.size();
  if (param.box.size() != rank) {
    error = path + ": the box has " + std::to_string(param.box.size()) +
            " entries but " + param.operand + " has rank " +
            std::to_string(rank);
    return false;
  }
  for (size_t i = 0; i < param.box.size(); ++i) {
    if (param.box[i] >= 1 && param.box[i] <= kMaxTensorMapBox)
      continue;
    error = path + ": box[" + std::to_string(i) + "] is " +
            std::to_string(param.box[i]) + " (expected 1 .. " +
            std::to_string(kMaxTensorMapBox) + ")";
    return false;
  }
  if (!isTensorMapSwizzle(param.swizzle)) {
    error = path + ": swizzle " + std::to_string(param.swizzle) +
            " (expected 0, 32, 64 or 128)";
    return false;
  }
  // TMA copies the box's inner dimension in 16-byte units, which a swizzle
  // permutes within its span.
  int64_t elementBytes =
      static_cast<int64_t>(getElementBytes(manifest.elementType));
  int64_t inner = param.box.back();
  int64_t rowBytes = inner * elementBytes;
  std::string row = "the box's inner dimension is " + std::to_string(inner) +
                    " elements of " + std::to_string(elementBytes) +
                    " bytes = " + std::to_string(rowBytes) + " bytes";
  if (param.swizzle != 0 && rowBytes > param.swizzle) {
    error = path + ": " + row + ", more than the " +
            std::to_string(param.swizzle) + "-byte swizzle span";
    return false;
  }
  if (rowBytes % 16 != 0) {
    error = path + ": " + row + ", not a multiple of 16 bytes";
    return false;
  }
  return true;
}

/// The params of one kernel (`path` is "params" or "prologue[i].params"):
/// known names, ranks that match, each operand and workspace at most once,
/// tensor maps of operands that a memref param of the same kernel passes.
/// Adds the operands passed to `seen` and the workspaces to `workspaces`.
static bool
verifyParams(const Manifest &manifest, const std::vector<KernelParam> &params,
             const std::string &listPath, std::set<std::string> &seen,
             std::set<std::string> &workspaces, std::string &error) {
  std::set<std::string> seenWorkspaces;
  for (size_t i = 0; i < params.size(); ++i) {
    const KernelParam &param = params[i];
    std::string path = listPath + "[" + std::to_string(i) + "]";
    if (param.kind == KernelParam::Kind::TensorMap) {
      if (!verifyTensorMap(manifest, param, path, error))
        return false;
      continue;
    }
    if (param.kind == KernelParam::Kind::Size) {
      if (!isSizeName(param.name)) {
        error = path + ": unknown size name '" + param.name +
                "' (expected one of " + getSizeNameList() + ")";
        return false;
      }
      continue;
    }
    if (param.kind == KernelParam::Kind::Workspace) {
      const WorkspaceSpec *workspace = manifest.getWorkspace(param.name);
      if (!workspace) {
        error = path + ": unknown workspace '" + param.name + "' (" +
                (manifest.workspaces.empty()
                     ? std::string("the manifest has no workspace")
                     : "expected one of " + getWorkspaceNameList(manifest)) +
                ")";
        return false;
      }
      if (!seenWorkspaces.insert(param.name).second) {
        error = path + ": workspace '" + param.name + "' is passed twice";
        return false;
      }
      if (param.rank != workspace->shape.size()) {
        error = path + ": rank " + std::to_string(param.rank) +
                " but workspace '" + param.name + "' has rank " +
                std::to_string(workspace->shape.size());
        return false;
      }
      workspaces.insert(param.name);
      continue;
    }
    if (!isMemRefOperandName(param.operand)) {
      error = path + ": unknown operand '" + param.operand +
              "' (expected query, key, value, mask or output)";
      return false;
    }
    if (!seen.insert(param.operand).second) {
      error = path + ": operand '" + param.operand + "' is passed twice";
      return false;
    }
    size_t rank;
    if (param.operand == "mask") {
      if (!manifest.mask) {
        error = path + ": operand 'mask' but the manifest has no mask";
        return false;
      }
      rank = manifest.mask->shape.size();
    } else {
      rank = manifest.getOperand(param.operand)->shape.size();
    }
    if (param.rank != rank) {
      error = path + ": rank " + std::to_string(param.rank) + " but " +
              param.operand + " has rank " + std::to_string(rank);
      return false;
    }
  }
  // A tensor map is passed besides the operand's memref, not instead of it.
  for (size_t i = 0; i < params.size(); ++i) {
    const KernelParam &param = params[i];
    if (param.kind != KernelParam::Kind::TensorMap || seen.count(param.operand))
      continue;
    error = listPath + "[" + std::to_string(i) + "]: a tensor map of '" +
            param.operand +
            "' but no memref param of the same kernel passes '" +
            param.operand + "'";
    return false;
  }
  return true;
}

bool attn::runtime::verifyManifest(const Manifest &manifest,
                                   std::string &error) {
  if (manifest.kernel.empty()) {
    error = "kernel: the entry name is empty";
    return false;
  }
  if (manifest.ptx.empty()) {
    error = "ptx: the PTX path is empty";
    return false;
  }
  if (manifest.chip.empty()) {
    error = "chip: the target chip is empty";
    return false;
  }
  if (!isFloatType(manifest.elementType)) {
    error = std::string("element_type: '") + getTypeName(manifest.elementType) +
            "' is not a query/key/value type (expected f32, f16 or bf16)";
    return false;
  }

  struct Named {
    const char *name;
    const OperandSpec *spec;
  } operands[] = {{"query", &manifest.query},
                  {"key", &manifest.key},
                  {"value", &manifest.value},
                  {"output", &manifest.output}};
  for (const Named &operand : operands) {
    if (operand.spec->shape.size() != 4) {
      error = std::string(operand.name) + ".shape has rank " +
              std::to_string(operand.spec->shape.size()) + " (expected 4)";
      return false;
    }
    if (!verifyShape(operand.spec->shape, operand.name, error))
      return false;
  }
  // Dimensions that the operands share must agree where both are static.
  struct Shared {
    const char *size;
    const char *lhsName;
    const OperandSpec *lhs;
    const char *rhsName;
    const OperandSpec *rhs;
    unsigned lhsDim, rhsDim;
  } shared[] = {
      {"B", "query", &manifest.query, "key", &manifest.key, 0, 0},
      {"B", "query", &manifest.query, "value", &manifest.value, 0, 0},
      {"B", "query", &manifest.query, "output", &manifest.output, 0, 0},
      {"Hq", "query", &manifest.query, "output", &manifest.output, 1, 1},
      {"Hkv", "key", &manifest.key, "value", &manifest.value, 1, 1},
      {"Tq", "query", &manifest.query, "output", &manifest.output, 2, 2},
      {"Tk", "key", &manifest.key, "value", &manifest.value, 2, 2},
      {"D", "query", &manifest.query, "key", &manifest.key, 3, 3},
      {"Dv", "value", &manifest.value, "output", &manifest.output, 3, 3},
  };
  for (const Shared &entry : shared) {
    int64_t lhs = entry.lhs->shape[entry.lhsDim];
    int64_t rhs = entry.rhs->shape[entry.rhsDim];
    if (lhs >= 0 && rhs >= 0 && lhs != rhs) {
      error = std::string(entry.size) + " disagrees: " + entry.lhsName +
              ".shape[" + std::to_string(entry.lhsDim) + "] is " +
              std::to_string(lhs) + " but " + entry.rhsName + ".shape[" +
              std::to_string(entry.rhsDim) + "] is " + std::to_string(rhs);
      return false;
    }
  }
  int64_t hq = manifest.query.shape[1], hkv = manifest.key.shape[1];
  if (hq > 0 && hkv > 0 && hq % hkv != 0) {
    error = "query has " + std::to_string(hq) +
            " heads, which is not a multiple of the " + std::to_string(hkv) +
            " heads of key";
    return false;
  }
  if (manifest.mask) {
    size_t rank = manifest.mask->shape.size();
    if (rank != 2 && rank != 4) {
      error =
          "mask.shape has rank " + std::to_string(rank) + " (expected 2 or 4)";
      return false;
    }
    if (!verifyShape(manifest.mask->shape, "mask", error))
      return false;
  }

  if (const std::optional<double> &scale = manifest.attributes.scale) {
    if (!std::isfinite(*scale) || *scale <= 0.0) {
      error = "attributes.scale must be finite and > 0";
      return false;
    }
  }
  const KernelConfig &config = manifest.config;
  if (config.blockM < 0 || config.blockN < 0 || config.numWarps < 0 ||
      config.numStages < 0) {
    error = "config: block_m, block_n, num_warps and num_stages must be >= 0";
    return false;
  }

  if (!verifyLaunch(manifest.block, manifest.grid, manifest.sharedMemoryBytes,
                    "", error))
    return false;

  // Workspaces (version 2).
  for (size_t i = 0; i < manifest.workspaces.size(); ++i)
    if (!verifyWorkspace(manifest, i, error))
      return false;

  // The params of the main kernel pass every operand; a prologue kernel
  // takes any of them.
  std::set<std::string> usedWorkspaces;
  std::set<std::string> seen;
  if (!verifyParams(manifest, manifest.params, "params", seen, usedWorkspaces,
                    error))
    return false;
  for (const char *name : {"query", "key", "value", "output"}) {
    if (!seen.count(name)) {
      error = std::string("params: no memref param passes '") + name + "'";
      return false;
    }
  }
  if (manifest.mask && !seen.count("mask")) {
    error = "params: the manifest has a mask but no memref param passes it";
    return false;
  }

  // Prologue kernels (version 2).
  for (size_t i = 0; i < manifest.prologue.size(); ++i) {
    const PrologueKernel &kernel = manifest.prologue[i];
    std::string path = "prologue[" + std::to_string(i) + "]";
    if (kernel.kernel.empty()) {
      error = path + ".kernel: the entry name is empty";
      return false;
    }
    std::set<std::string> prologueSeen;
    if (!verifyLaunch(kernel.block, kernel.grid, kernel.sharedMemoryBytes,
                      path + ".", error) ||
        !verifyParams(manifest, kernel.params, path + ".params", prologueSeen,
                      usedWorkspaces, error))
      return false;
  }
  for (size_t i = 0; i < manifest.workspaces.size(); ++i) {
    const std::string &name = manifest.workspaces[i].name;
    if (usedWorkspaces.count(name))
      continue;
    error = "workspace[" + std::to_string(i) + "]: '" + name +
            "' is passed to no kernel (no param of kind workspace names it)";
    return false;
  }
  return true;
}

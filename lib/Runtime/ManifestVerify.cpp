//===- ManifestVerify.cpp - The rules of launch manifests -----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// verifyManifest: the rules of docs/Manifest.md, for manifests read by
// parseManifest (which calls it) and for manifests built in code.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

using namespace attn::runtime;

static bool contains(std::initializer_list<std::string_view> list,
                     std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

//===----------------------------------------------------------------------===//
// verifyManifest
//===----------------------------------------------------------------------===//

namespace {
/// The rules of docs/Manifest.md; the first broken one sets `error`.
class ManifestVerifier {
public:
  ManifestVerifier(const Manifest &manifest, std::string &error)
      : manifest(manifest), error(error) {}
  bool verify();

private:
  template <typename... Parts>
  bool fail(const Parts &...parts) {
    return failWith(error, parts...);
  }
  bool gridExpr(const GridExpr &expr, const std::string &path);
  bool shape(const std::vector<int64_t> &shape, const std::string &name);
  bool launch(const KernelLaunch &kernel, const std::string &prefix);
  bool workspace(size_t index);
  bool tensorMap(const KernelParam &param, const std::string &path);
  bool params(const std::vector<KernelParam> &list, const std::string &path,
              std::set<std::string> &seen);

  const Manifest &manifest;
  std::string &error;
  /// The workspaces some param passes.
  std::set<std::string> usedWorkspaces;
};
} // namespace

static bool isSizeName(std::string_view name) {
  const std::vector<std::string> &names = getSizeNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool ManifestVerifier::gridExpr(const GridExpr &expr, const std::string &path) {
  if (expr.kind == GridExpr::Kind::Constant)
    return expr.value >= 0 || fail(path, ": negative constant ", expr.value);
  if (expr.kind == GridExpr::Kind::Size)
    return isSizeName(expr.name) ||
           fail(path, ": unknown size name '", expr.name,
                "' (expected one of B, Hq, Hkv, Tq, Tk, D, Dv, N)");
  if (expr.operands.size() != 2)
    return fail(path, ": '", GridExpr::getOperatorName(expr.kind),
                "' takes 2 operands, not ", expr.operands.size());
  return gridExpr(expr.operands[0], path) && gridExpr(expr.operands[1], path);
}

bool ManifestVerifier::shape(const std::vector<int64_t> &dims,
                             const std::string &name) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != -1 && dims[i] < 1)
      return fail(name, ".shape[", i, "] is ", dims[i],
                  " (expected -1 for a dynamic size or a size >= 1)");
  return true;
}

bool ManifestVerifier::launch(const KernelLaunch &kernel,
                              const std::string &prefix) {
  int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (kernel.block[i] < 1)
      return fail(prefix, "block[", i, "] must be >= 1");
    threads *= kernel.block[i];
  }
  if (threads > 1024)
    return fail(prefix, "block has ", threads,
                " threads (at most 1024 per block)");
  for (int i = 0; i < 3; ++i)
    if (!gridExpr(kernel.grid[i], prefix + "grid[" + std::to_string(i) + "]"))
      return false;
  return (kernel.sharedMemoryBytes >= 0 &&
          kernel.sharedMemoryBytes <= INT32_MAX) ||
         fail(prefix, "shared_memory_bytes is ", kernel.sharedMemoryBytes,
              " (expected 0 .. 2^31-1)");
}

bool ManifestVerifier::workspace(size_t index) {
  const WorkspaceSpec &spec = manifest.workspaces[index];
  std::string path = "workspace[" + std::to_string(index) + "]";
  if (spec.name.empty())
    return fail(path, ".name: the name is empty");
  if (contains({"query", "key", "value", "mask", "output"}, spec.name))
    return fail(path, ".name: '", spec.name,
                "' is the name of an operand (query, key, value, mask, "
                "output)");
  if (contains({"kv_lengths", "cu_seqlens_q", "cu_seqlens_k", "block_table"},
               spec.name))
    return fail(path, ".name: '", spec.name, "' is the name of an operand");
  if (spec.name == "lse")
    return fail(path, ".name: 'lse' is the name of the log-sum-exp result");
  for (size_t i = 0; i < index; ++i)
    if (manifest.workspaces[i].name == spec.name)
      return fail(path, ".name: '", spec.name,
                  "' is also the name of workspace[", i, "]");
  if (spec.elementBytes != 1 && spec.elementBytes != 2 &&
      spec.elementBytes != 4 && spec.elementBytes != 8)
    return fail(path, ".element_bytes: ", spec.elementBytes,
                " (expected 1, 2, 4 or 8)");
  if (spec.shape.empty() || spec.shape.size() > 8)
    return fail(path, ".shape: expected 1 .. 8 dimensions, found ",
                spec.shape.size());
  for (size_t i = 0; i < spec.shape.size(); ++i)
    if (!gridExpr(spec.shape[i], path + ".shape[" + std::to_string(i) + "]"))
      return false;
  return true;
}

bool ManifestVerifier::tensorMap(const KernelParam &param,
                                 const std::string &path) {
  if (!contains({"query", "key", "value", "output"}, param.operand))
    return fail(path, ".operand: unknown operand '", param.operand,
                "' (expected query, key, value or output)");
  for (size_t i = 0; i < param.box.size(); ++i)
    if (param.box[i] < 1 || param.box[i] > 256)
      return fail(path, ".box[", i, "]: ", param.box[i],
                  " (expected 1 .. 256)");
  if (param.swizzle != 0 && param.swizzle != 32 && param.swizzle != 64 &&
      param.swizzle != 128)
    return fail(path, ".swizzle: ", param.swizzle,
                " (expected 0, 32, 64 or 128)");
  size_t rank = manifest.getOperand(param.operand)->shape.size();
  if (param.box.size() != rank)
    return fail(path, ": the box has ", param.box.size(), " entries but ",
                param.operand, " has rank ", rank);
  // TMA copies the box's inner dimension in 16-byte units, which a swizzle
  // permutes within its span.
  int64_t bytes = int64_t(getElementBytes(manifest.elementType));
  int64_t row = param.box.back() * bytes;
  std::string what =
      concat(path, ": the box's inner dimension is ", param.box.back(),
             " elements of ", bytes, " bytes = ", row, " bytes");
  if (param.swizzle != 0 && row > param.swizzle)
    return fail(what, ", more than the ", param.swizzle, "-byte swizzle span");
  return row % 16 == 0 || fail(what, ", not a multiple of 16 bytes");
}

bool ManifestVerifier::params(const std::vector<KernelParam> &list,
                              const std::string &listPath,
                              std::set<std::string> &seen) {
  std::set<std::string> workspaces;
  for (size_t i = 0; i < list.size(); ++i) {
    const KernelParam &param = list[i];
    std::string path = listPath + "[" + std::to_string(i) + "]";
    switch (param.kind) {
    case KernelParam::Kind::TensorMap:
      if (!tensorMap(param, path))
        return false;
      continue;
    case KernelParam::Kind::Size:
      if (!isSizeName(param.name))
        return fail(path, ".name: unknown size name '", param.name,
                    "' (expected one of B, Hq, Hkv, Tq, Tk, D, Dv, N)");
      continue;
    case KernelParam::Kind::Workspace: {
      const WorkspaceSpec *spec = manifest.getWorkspace(param.name);
      std::string names;
      for (const WorkspaceSpec &candidate : manifest.workspaces)
        names += (names.empty() ? "" : ", ") + candidate.name;
      if (!spec)
        return fail(path, ": unknown workspace '", param.name, "' (",
                    names.empty() ? "the manifest has no workspace"
                                  : "expected one of " + names,
                    ")");
      if (!workspaces.insert(param.name).second)
        return fail(path, ": workspace '", param.name, "' is passed twice");
      if (param.rank != spec->shape.size())
        return fail(path, ": rank ", param.rank, " but workspace '", param.name,
                    "' has rank ", spec->shape.size());
      usedWorkspaces.insert(param.name);
      continue;
    }
    case KernelParam::Kind::MemRef:
      break;
    }
    const CaptureSpec *capture = manifest.getCapture(param.operand);
    if (!capture &&
        !contains({"query", "key", "value", "mask", "output", "lse",
                   "kv_lengths", "cu_seqlens_q", "cu_seqlens_k", "block_table"},
                  param.operand)) {
      // "query, key, value, mask or output", with lse and kv_lengths where
      // the manifest has them.
      std::vector<std::string> names = {"query", "key", "value", "mask",
                                        "output"};
      if (manifest.lse)
        names.push_back("lse");
      if (manifest.kvLengths)
        names.push_back("kv_lengths");
      if (manifest.cuSeqlensQ)
        names.insert(names.end(), {"cu_seqlens_q", "cu_seqlens_k"});
      if (manifest.blockTable)
        names.push_back("block_table");
      std::string expected;
      for (size_t n = 0; n < names.size(); ++n)
        expected += (n == 0                  ? ""
                     : n + 1 == names.size() ? " or "
                                             : ", ") +
                    names[n];
      return fail(path, ".operand: unknown operand '", param.operand,
                  "' (expected ", expected,
                  manifest.captures.empty()
                      ? std::string()
                      : concat(", or capture0 to capture",
                               manifest.captures.size() - 1),
                  ")");
    }
    if (!seen.insert(param.operand).second)
      return fail(path, ": operand '", param.operand, "' is passed twice");
    if (param.operand == "mask" && !manifest.mask)
      return fail(path, ": operand 'mask' but the manifest has no mask");
    if (param.operand == "lse" && !manifest.lse)
      return fail(path, ": operand 'lse' but the manifest has no lse");
    if (param.operand == "kv_lengths" && !manifest.kvLengths)
      return fail(path,
                  ": operand 'kv_lengths' but the manifest has no kv_lengths");
    bool offsets =
        param.operand == "cu_seqlens_q" || param.operand == "cu_seqlens_k";
    if (offsets && !manifest.cuSeqlensQ)
      return fail(path, ": operand '", param.operand,
                  "' but the manifest has no cu_seqlens");
    if (param.operand == "block_table" && !manifest.blockTable)
      return fail(path, ": operand 'block_table' but the manifest has no "
                        "block_table");
    size_t rank = capture                          ? capture->shape.size()
                  : offsets                        ? 1
                  : param.operand == "block_table" ? 2
                  : param.operand == "mask"        ? manifest.mask->shape.size()
                  : param.operand == "kv_lengths"
                      ? manifest.kvLengths->shape.size()
                      : manifest.getOperand(param.operand)->shape.size();
    if (param.rank != rank)
      return fail(path, ": rank ", param.rank, " but ", param.operand,
                  " has rank ", rank);
  }
  // A tensor map is passed besides the operand's memref, not instead of it.
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].kind == KernelParam::Kind::TensorMap &&
        !seen.count(list[i].operand))
      return fail(listPath, "[", i, "]: a tensor map of '", list[i].operand,
                  "' but no memref param of the same kernel passes '",
                  list[i].operand, "'");
  return true;
}

bool ManifestVerifier::verify() {
  if (manifest.kernel.empty())
    return fail("kernel: the entry name is empty");
  if (manifest.ptx.empty())
    return fail("ptx: the PTX path is empty");
  if (manifest.chip.empty())
    return fail("chip: the target chip is empty");
  if (!isFloatType(manifest.elementType))
    return fail("element_type: '", getTypeName(manifest.elementType),
                "' is not a query/key/value type (expected f32, f16 or bf16)");
  for (const char *name : {"query", "key", "value", "output"}) {
    const std::vector<int64_t> &dims = manifest.getOperand(name)->shape;
    if (dims.size() != 4)
      return fail(name, ".shape has rank ", dims.size(), " (expected 4)");
    if (!shape(dims, name))
      return false;
  }
  // The log-sum-exp result: f32 B x Hq x Tq.
  if (manifest.lse) {
    const std::vector<int64_t> &dims = manifest.lse->shape;
    if (dims.size() != 3)
      return fail("lse.shape has rank ", dims.size(),
                  " (expected 3: B x Hq x Tq)");
    if (!shape(dims, "lse"))
      return false;
  }
  // Dimensions that the operands share must agree where both are static.
  struct Shared {
    const char *size, *lhs, *rhs;
    unsigned dim;
  } shared[] = {{"B", "query", "key", 0},     {"B", "query", "value", 0},
                {"B", "query", "output", 0},  {"Hq", "query", "output", 1},
                {"Hkv", "key", "value", 1},   {"Tq", "query", "output", 2},
                {"Tk", "key", "value", 2},    {"D", "query", "key", 3},
                {"Dv", "value", "output", 3}, {"B", "query", "lse", 0},
                {"Hq", "query", "lse", 1},    {"Tq", "query", "lse", 2}};
  for (const Shared &entry : shared) {
    if (!manifest.getOperand(entry.rhs))
      continue; // no lse
    // A paged cache's key and value count pages in dim 0, not batches.
    if (manifest.blockTable && entry.dim == 0 &&
        (std::string_view(entry.rhs) == "key" ||
         std::string_view(entry.rhs) == "value"))
      continue;
    int64_t lhs = manifest.getOperand(entry.lhs)->shape[entry.dim];
    int64_t rhs = manifest.getOperand(entry.rhs)->shape[entry.dim];
    if (lhs >= 0 && rhs >= 0 && lhs != rhs)
      return fail(entry.size, " disagrees: ", entry.lhs, ".shape[", entry.dim,
                  "] is ", lhs, " but ", entry.rhs, ".shape[", entry.dim,
                  "] is ", rhs);
  }
  int64_t hq = manifest.query.shape[1], hkv = manifest.key.shape[1];
  if (hq > 0 && hkv > 0 && hq % hkv != 0)
    return fail("query has ", hq, " heads, which is not a multiple of the ",
                hkv, " heads of key");
  if (manifest.mask) {
    size_t rank = manifest.mask->shape.size();
    if (rank != 2 && rank != 4)
      return fail("mask.shape has rank ", rank, " (expected 2 or 4)");
    if (!shape(manifest.mask->shape, "mask"))
      return false;
  }
  // The per-batch key counts: i32 [B].
  if (manifest.kvLengths) {
    const MaskSpec &lengths = *manifest.kvLengths;
    if (lengths.elementType != ElementType::I32)
      return fail("kv_lengths.element_type: '",
                  getTypeName(lengths.elementType), "' (expected i32)");
    if (lengths.shape.size() != 1)
      return fail("kv_lengths.shape has rank ", lengths.shape.size(),
                  " (expected 1: B)");
    if (!shape(lengths.shape, "kv_lengths"))
      return false;
    int64_t batch = manifest.query.shape[0], count = lengths.shape[0];
    if (batch >= 0 && count >= 0 && batch != count)
      return fail("B disagrees: query.shape[0] is ", batch,
                  " but kv_lengths.shape[0] is ", count);
  }
  // A paged cache: an i32 [B, P] table, a static page of 1 or more keys in
  // the key's and value's dim 2, no packed sequences.
  if (const std::optional<BlockTableSpec> &table = manifest.blockTable) {
    if (table->elementType != ElementType::I32)
      return fail("block_table.element_type: '",
                  getTypeName(table->elementType), "' (expected i32)");
    if (table->shape.size() != 2)
      return fail("block_table.shape has rank ", table->shape.size(),
                  " (expected 2: B x P)");
    if (!shape(table->shape, "block_table"))
      return false;
    int64_t batch = manifest.query.shape[0], rows = table->shape[0];
    if (batch >= 0 && rows >= 0 && batch != rows)
      return fail("B disagrees: query.shape[0] is ", batch,
                  " but block_table.shape[0] is ", rows);
    if (table->pageSize < 1 || manifest.key.shape[2] != table->pageSize)
      return fail("block_table.page_size is ", table->pageSize,
                  " (expected key.shape[2], the keys of a page: ",
                  manifest.key.shape[2], ")");
    if (manifest.cuSeqlensQ)
      return fail("block_table excludes cu_seqlens");
  }
  // Packed sequences' offsets: both, i32 [N + 1] of one length, batch 1.
  if (bool(manifest.cuSeqlensQ) != bool(manifest.cuSeqlensK))
    return fail("cu_seqlens_q and cu_seqlens_k go together, found only ",
                manifest.cuSeqlensQ ? "cu_seqlens_q" : "cu_seqlens_k");
  if (manifest.cuSeqlensQ) {
    for (auto [name, spec] : {std::pair{"cu_seqlens_q", &*manifest.cuSeqlensQ},
                              {"cu_seqlens_k", &*manifest.cuSeqlensK}}) {
      if (spec->elementType != ElementType::I32)
        return fail(name, ".element_type: '", getTypeName(spec->elementType),
                    "' (expected i32)");
      if (spec->shape.size() != 1)
        return fail(name, ".shape has rank ", spec->shape.size(),
                    " (expected 1: N + 1)");
      if (!shape(spec->shape, name))
        return false;
    }
    int64_t q = manifest.cuSeqlensQ->shape[0],
            k = manifest.cuSeqlensK->shape[0];
    if (q >= 0 && k >= 0 && q != k)
      return fail("N disagrees: cu_seqlens_q.shape[0] is ", q,
                  " but cu_seqlens_k.shape[0] is ", k);
    if (manifest.query.shape[0] != 1)
      return fail("query.shape[0] is ", manifest.query.shape[0],
                  " (expected 1 with cu_seqlens)");
    if (manifest.mask || manifest.kvLengths)
      return fail("cu_seqlens exclude ",
                  manifest.mask ? "a mask" : "kv_lengths");
  }
  if (const std::optional<double> &scale = manifest.attributes.scale;
      scale && (!std::isfinite(*scale) || *scale <= 0.0))
    return fail("attributes.scale must be finite and > 0");
  const KernelConfig &config = manifest.config;
  if (config.blockM < 0 || config.blockN < 0 || config.numWarps < 0 ||
      config.numStages < 0)
    return fail(
        "config: block_m, block_n, num_warps and num_stages must be >= 0");
  if (!launch(manifest, ""))
    return false;
  for (size_t i = 0; i < manifest.workspaces.size(); ++i)
    if (!workspace(i))
      return false;

  // Each kernel passes an operand at most once; the main kernel and the
  // epilogue kernels together pass every operand (a split main kernel
  // leaves the output to its combine kernel). A prologue kernel takes any
  // of them.
  // In the order of getKernels(): the main kernel's errors first.
  std::vector<LaunchStep> steps = manifest.getLaunchOrder();
  std::sort(steps.begin(), steps.end(),
            [](const LaunchStep &lhs, const LaunchStep &rhs) {
              return lhs.kernelIndex < rhs.kernelIndex;
            });
  std::set<std::string> seen;
  for (const LaunchStep &step : steps) {
    std::string path = step.getPath();
    std::set<std::string> kernelSeen;
    if (step.stage != KernelStage::Main && step.kernel->kernel.empty())
      return fail(path, ".kernel: the entry name is empty");
    if (step.stage != KernelStage::Main && !launch(*step.kernel, path + "."))
      return false;
    if (!params(step.kernel->params, path.empty() ? "params" : path + ".params",
                kernelSeen))
      return false;
    if (step.stage != KernelStage::Prologue)
      seen.insert(kernelSeen.begin(), kernelSeen.end());
  }
  for (const char *name : {"query", "key", "value", "output"})
    if (!seen.count(name))
      return fail("params: no memref param passes '", name, "'");
  if (manifest.mask && !seen.count("mask"))
    return fail("params: the manifest has a mask but no memref param passes "
                "it");
  if (manifest.lse && !seen.count("lse"))
    return fail("params: the manifest has an lse but no memref param passes "
                "it");
  if (manifest.kvLengths && !seen.count("kv_lengths"))
    return fail("params: the manifest has kv_lengths but no memref param "
                "passes them");
  if (manifest.cuSeqlensQ &&
      (!seen.count("cu_seqlens_q") || !seen.count("cu_seqlens_k")))
    return fail("params: the manifest has cu_seqlens but no memref param "
                "passes ",
                seen.count("cu_seqlens_q") ? "cu_seqlens_k" : "cu_seqlens_q");
  if (manifest.blockTable && !seen.count("block_table"))
    return fail("params: the manifest has a block_table but no memref param "
                "passes it");
  for (size_t i = 0; i < manifest.captures.size(); ++i) {
    const CaptureSpec &capture = manifest.captures[i];
    if (capture.elementType != ElementType::F32 &&
        capture.elementType != ElementType::I32 &&
        capture.elementType != ElementType::I64)
      return fail("captures[", i, "].element_type: '",
                  getTypeName(capture.elementType), "' (expected f32, i32 or ",
                  "i64)");
    if (!shape(capture.shape, "captures[" + std::to_string(i) + "]"))
      return false;
    if (!seen.count("capture" + std::to_string(i)))
      return fail("params: no memref param passes 'capture", i, "'");
  }
  for (size_t i = 0; i < manifest.workspaces.size(); ++i)
    if (!usedWorkspaces.count(manifest.workspaces[i].name))
      return fail("workspace[", i, "]: '", manifest.workspaces[i].name,
                  "' is passed to no kernel (no param of kind workspace "
                  "names it)");
  return true;
}

bool attn::runtime::verifyManifest(const Manifest &manifest,
                                   std::string &error) {
  return ManifestVerifier(manifest, error).verify();
}

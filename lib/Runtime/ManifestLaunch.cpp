//===- ManifestLaunch.cpp - From a manifest and a problem to a launch -----===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The evaluation helpers of Manifest.h: the problem sizes, the grid
// expressions, the workspaces, the checks of actual shapes against a
// manifest and the packing of kernel parameters.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "attn/Runtime/Facts.h"

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

bool ProblemSizes::get(std::string_view name, int64_t &value) const {
  const int64_t *fields[] = {&B, &Hq, &Hkv, &Tq, &Tk, &D, &Dv, &N};
  const std::vector<std::string> &names = getSizeNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) {
      value = *fields[i];
      return true;
    }
  return false;
}

std::string ProblemSizes::toString() const {
  std::string text;
  for (const std::string &name : getSizeNames()) {
    int64_t value = 0;
    get(name, value);
    if (name == "N" && value == 0)
      continue;
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  return text;
}

/// "?x32x?x128" (-1 as '?'); "scalar" for rank 0.
static std::string formatDims(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t dim : shape)
    text += (text.empty() ? "" : "x") +
            (dim < 0 ? std::string("?") : std::to_string(dim));
  return shape.empty() ? "scalar" : text;
}

bool attn::runtime::evaluateGridExpr(const GridExpr &expr,
                                     const ProblemSizes &sizes, int64_t &value,
                                     std::string &error) {
  if (expr.kind == GridExpr::Kind::Constant) {
    value = expr.value;
    return true;
  }
  if (expr.kind == GridExpr::Kind::Size) {
    if (sizes.get(expr.name, value))
      return true;
    error = "unknown size name '" + expr.name + "'";
    return false;
  }
  int64_t lhs, rhs;
  if (expr.operands.size() != 2)
    return failWith(error, expr.toString(), ": expected 2 operands");
  if (!evaluateGridExpr(expr.operands[0], sizes, lhs, error) ||
      !evaluateGridExpr(expr.operands[1], sizes, rhs, error))
    return false;
  bool overflow = false;
  switch (expr.kind) {
  case GridExpr::Kind::CeilDiv:
    if (rhs <= 0)
      return failWith(error, expr.toString(), ": division by ", rhs);
    value = lhs / rhs + (lhs % rhs != 0 && lhs > 0);
    return true;
  case GridExpr::Kind::Mul:
    overflow = __builtin_mul_overflow(lhs, rhs, &value);
    break;
  case GridExpr::Kind::Add:
    overflow = __builtin_add_overflow(lhs, rhs, &value);
    break;
  case GridExpr::Kind::Min:
    value = std::min(lhs, rhs);
    break;
  default:
    value = std::max(lhs, rhs);
    break;
  }
  if (overflow)
    error = expr.toString() + ": overflow";
  return !overflow;
}

/// Evaluates the grid `exprs` of a kernel; `prefix` starts the messages.
static bool evaluateGridExprs(const GridExpr exprs[3],
                              const ProblemSizes &sizes, unsigned grid[3],
                              const std::string &prefix, std::string &error) {
  static const int64_t kLimits[3] = {INT32_MAX, 65535, 65535};
  for (int i = 0; i < 3; ++i) {
    int64_t value;
    std::string what =
        prefix + "grid." + "xyz"[i] + " = " + exprs[i].toString();
    if (!evaluateGridExpr(exprs[i], sizes, value, error))
      return failWith(error, what, ": ", error, " (", sizes.toString(), ")");
    if (value < 1 || value > kLimits[i])
      return failWith(error, what, " = ", value, " is out of range (1 .. ",
                      kLimits[i], ") for ", sizes.toString());
    grid[i] = static_cast<unsigned>(value);
  }
  return true;
}

bool attn::runtime::evaluateGrid(const Manifest &manifest,
                                 const ProblemSizes &sizes, unsigned grid[3],
                                 std::string &error) {
  return evaluateGridExprs(manifest.grid, sizes, grid, "", error);
}

bool attn::runtime::evaluateGrid(const KernelLaunch &kernel,
                                 const ProblemSizes &sizes, unsigned grid[3],
                                 std::string &error) {
  return evaluateGridExprs(kernel.grid, sizes, grid,
                           "prologue kernel '" + kernel.kernel + "': ", error);
}

bool attn::runtime::evaluateGrid(const LaunchStep &step,
                                 const ProblemSizes &sizes, unsigned grid[3],
                                 std::string &error) {
  return evaluateGridExprs(
      step.kernel->grid, sizes, grid,
      step.stage == KernelStage::Main ? "" : step.describe() + ": ", error);
}

bool attn::runtime::evaluateWorkspace(const WorkspaceSpec &workspace,
                                      const ProblemSizes &sizes,
                                      std::vector<int64_t> &shape,
                                      int64_t &bytes, std::string &error) {
  std::string prefix = "workspace '" + workspace.name + "': ";
  if (workspace.shape.empty())
    return failWith(error, prefix, "the shape has no dimension");
  std::vector<int64_t> dims;
  int64_t total = workspace.elementBytes;
  for (size_t i = 0; i < workspace.shape.size(); ++i) {
    const GridExpr &expr = workspace.shape[i];
    std::string what =
        prefix + "shape[" + std::to_string(i) + "] = " + expr.toString();
    int64_t value;
    if (!evaluateGridExpr(expr, sizes, value, error))
      return failWith(error, what, ": ", error, " (", sizes.toString(), ")");
    if (value < 1)
      return failWith(error, what, " = ", value, " must be >= 1 (",
                      sizes.toString(), ")");
    dims.push_back(value);
    if (__builtin_mul_overflow(total, value, &total))
      return failWith(error, prefix, "shape ", formatDims(dims),
                      (i + 1 < workspace.shape.size() ? "x..." : ""), " times ",
                      workspace.elementBytes,
                      " bytes per element overflows int64 (", sizes.toString(),
                      ")");
  }
  shape = std::move(dims);
  bytes = total;
  return true;
}

/// Checks one actual operand shape against its compiled shape.
static bool checkOperandShape(const char *name,
                              const std::vector<int64_t> &compiled,
                              const std::vector<int64_t> &actual,
                              std::string &error) {
  std::string context = " (compiled shape " + formatDims(compiled) +
                        ", actual " + formatDims(actual) + ")";
  if (actual.size() != compiled.size())
    return failWith(error, name, ": rank is ", actual.size(),
                    " but the kernel takes rank ", compiled.size(), context);
  for (size_t i = 0; i < actual.size(); ++i) {
    std::string dim = std::string(name) + ": dimension " + std::to_string(i) +
                      " is " + std::to_string(actual[i]);
    if (actual[i] < 1)
      error = dim + "; every size must be >= 1" + context;
    else if (compiled[i] >= 0 && actual[i] != compiled[i])
      error = concat(dim, " but the kernel was compiled for ", compiled[i],
                     context);
    else
      continue;
    return false;
  }
  return true;
}

bool attn::runtime::checkShapes(const Manifest &manifest,
                                const OperandShapes &shapes,
                                std::string &error) {
  if (!checkOperandShape("query", manifest.query.shape, shapes.query, error) ||
      !checkOperandShape("key", manifest.key.shape, shapes.key, error) ||
      !checkOperandShape("value", manifest.value.shape, shapes.value, error) ||
      !checkOperandShape("output", manifest.output.shape, shapes.output, error))
    return false;
  if (manifest.mask && !shapes.hasMask)
    return failWith(error, "the kernel was compiled with a mask (",
                    formatDims(manifest.mask->shape), "x",
                    getTypeName(manifest.mask->elementType),
                    ") but none was given");
  if (!manifest.mask && shapes.hasMask)
    return failWith(error,
                    "a mask was given but the kernel was compiled without one");
  if (shapes.hasMask &&
      !checkOperandShape("mask", manifest.mask->shape, shapes.mask, error))
    return false;
  if (shapes.hasLse && !manifest.lse)
    return failWith(error, "an lse was given but the kernel was compiled "
                           "without the log-sum-exp result");
  if (shapes.hasLse &&
      !checkOperandShape("lse", manifest.lse->shape, shapes.lse, error))
    return false;
  if (manifest.kvLengths && !shapes.hasKvLengths)
    return failWith(error, "the kernel was compiled with kv_lengths (",
                    formatDims(manifest.kvLengths->shape),
                    "xi32) but none were given");
  if (!manifest.kvLengths && shapes.hasKvLengths)
    return failWith(error, "kv_lengths were given but the kernel was compiled "
                           "without them");
  if (shapes.hasKvLengths &&
      !checkOperandShape("kv_lengths", manifest.kvLengths->shape,
                         shapes.kvLengths, error))
    return false;
  if (manifest.cuSeqlensQ && !shapes.hasCuSeqlens)
    return failWith(error, "the kernel was compiled with cu_seqlens (",
                    formatDims(manifest.cuSeqlensQ->shape),
                    "xi32) but none were given");
  if (!manifest.cuSeqlensQ && shapes.hasCuSeqlens)
    return failWith(error, "cu_seqlens were given but the kernel was "
                           "compiled without them");
  if (shapes.hasCuSeqlens &&
      (!checkOperandShape("cu_seqlens_q", manifest.cuSeqlensQ->shape,
                          shapes.cuSeqlensQ, error) ||
       !checkOperandShape("cu_seqlens_k", manifest.cuSeqlensK->shape,
                          shapes.cuSeqlensK, error)))
    return false;
  if (shapes.hasCuSeqlens && shapes.cuSeqlensQ[0] != shapes.cuSeqlensK[0])
    return failWith(error, "cu_seqlens_k: dimension 0 (N + 1) is ",
                    shapes.cuSeqlensK[0], " but cu_seqlens_q has ",
                    shapes.cuSeqlensQ[0]);
  // A paged cache: key and value are pools of pages (dim 0), B x P pages
  // in the table.
  bool paged = manifest.blockTable.has_value();
  if (paged && !shapes.hasBlockTable)
    return failWith(error, "the kernel was compiled with a block_table (",
                    formatDims(manifest.blockTable->shape),
                    "xi32) but none was given");
  if (!paged && shapes.hasBlockTable)
    return failWith(error, "a block_table was given but the kernel was "
                           "compiled without one");
  if (paged && !checkOperandShape("block_table", manifest.blockTable->shape,
                                  shapes.blockTable, error))
    return false;

  // The manifest's operands are rank 4 (verifyManifest), so are the actual
  // shapes now.
  struct Shared {
    const char *size, *lhsName;
    const std::vector<int64_t> &lhs;
    const char *rhsName;
    const std::vector<int64_t> &rhs;
    unsigned dim;
  } shared[] = {
      {"B", "query", shapes.query, "key", shapes.key, 0},
      {"B", "query", shapes.query, "value", shapes.value, 0},
      {"NP", "key", shapes.key, "value", shapes.value, 0},
      {"B", "query", shapes.query, "output", shapes.output, 0},
      {"Hq", "query", shapes.query, "output", shapes.output, 1},
      {"Hkv", "key", shapes.key, "value", shapes.value, 1},
      {"Tq", "query", shapes.query, "output", shapes.output, 2},
      {"Tk", "key", shapes.key, "value", shapes.value, 2},
      {"D", "query", shapes.query, "key", shapes.key, 3},
      {"Dv", "value", shapes.value, "output", shapes.output, 3},
  };
  // Paged: dim 0 of key and value counts pages (NP); the table's rows are
  // B. Else it is B, and NP is not a size.
  std::vector<Shared> checked;
  for (const Shared &entry : shared)
    if (entry.dim != 0 || entry.rhsName == std::string_view("output") ||
        paged == (entry.size == std::string_view("NP")))
      checked.push_back(entry);
  if (paged)
    checked.push_back(
        {"B", "query", shapes.query, "block_table", shapes.blockTable, 0});
  if (shapes.hasLse) // rank 3, as the manifest's
    for (auto [size, dim] : {std::pair{"B", 0u}, {"Hq", 1u}, {"Tq", 2u}})
      checked.push_back({size, "query", shapes.query, "lse", shapes.lse, dim});
  if (shapes.hasKvLengths) // rank 1
    checked.push_back(
        {"B", "query", shapes.query, "kv_lengths", shapes.kvLengths, 0});
  for (const Shared &entry : checked) {
    int64_t lhs = entry.lhs[entry.dim], rhs = entry.rhs[entry.dim];
    if (lhs == rhs)
      continue;
    error = concat(entry.rhsName, ": dimension ", entry.dim, " (", entry.size,
                   ") is ", rhs, " but ", entry.lhsName, " has ", entry.size,
                   " = ", lhs, " (", entry.lhsName, " ", formatDims(entry.lhs),
                   ", ", entry.rhsName, " ", formatDims(entry.rhs), ")");
    return false;
  }
  const std::vector<int64_t> &q = shapes.query, &k = shapes.key;
  if (q[1] % k[1] != 0)
    return failWith(error, "query has ", q[1],
                    " heads, which is not a multiple of the ", k[1],
                    " heads of key and value");
  if (!shapes.hasMask)
    return true;
  const std::vector<int64_t> &m = shapes.mask;
  std::vector<int64_t> full = {q[0], q[1], q[2],
                               paged ? shapes.blockTable[1] * k[2] : k[2]};
  static const char *const kFullNames[4] = {"B", "Hq", "Tq", "Tk"};
  size_t first = 4 - m.size();
  for (size_t i = 0; i < m.size(); ++i) {
    int64_t target = full[first + i];
    if (m[i] == 1 || m[i] == target)
      continue;
    error = concat("mask: dimension ", i, " is ", m[i], "; it must be 1 or ",
                   kFullNames[first + i], " = ", target,
                   " to broadcast to B x Hq x Tq x Tk = ", formatDims(full),
                   " (mask ", formatDims(m), ")");
    return false;
  }
  return true;
}

bool attn::runtime::inferProblemSizes(const Manifest &manifest,
                                      const OperandShapes &shapes,
                                      ProblemSizes &sizes, std::string &error) {
  if (!checkShapes(manifest, shapes, error))
    return false;
  const std::vector<int64_t> &q = shapes.query;
  sizes = {q[0],          q[1], shapes.key[1],  q[2],
           shapes.key[2], q[3], shapes.value[3]};
  sizes.N = shapes.hasCuSeqlens ? shapes.cuSeqlensQ[0] - 1 : 0;
  // A paged cache's keys: P pages of key.shape[2].
  if (shapes.hasBlockTable)
    sizes.Tk = shapes.blockTable[1] * shapes.key[2];
  return true;
}

bool attn::runtime::inferProblemSizes(const Manifest &manifest,
                                      const AttentionProblem &problem,
                                      const std::vector<int64_t> &outputShape,
                                      ProblemSizes &sizes, std::string &error) {
  OperandShapes shapes;
  shapes.query = problem.query->shape;
  shapes.key = problem.key->shape;
  shapes.value = problem.value->shape;
  shapes.output = outputShape;
  shapes.hasMask = problem.mask != nullptr;
  if (problem.mask)
    shapes.mask = problem.mask->shape;
  shapes.hasKvLengths = problem.kvLengths != nullptr;
  if (problem.kvLengths)
    shapes.kvLengths = problem.kvLengths->shape;
  shapes.hasCuSeqlens = problem.cuSeqlensQ && problem.cuSeqlensK;
  if (shapes.hasCuSeqlens) {
    shapes.cuSeqlensQ = problem.cuSeqlensQ->shape;
    shapes.cuSeqlensK = problem.cuSeqlensK->shape;
  }
  shapes.hasBlockTable = problem.blockTable != nullptr;
  if (problem.blockTable)
    shapes.blockTable = problem.blockTable->shape;
  // The log-sum-exp result, B x Hq x Tq, where the kernel writes one.
  shapes.hasLse = manifest.lse.has_value();
  if (shapes.hasLse)
    shapes.lse.assign(shapes.query.begin(), shapes.query.begin() + 3);
  return inferProblemSizes(manifest, shapes, sizes, error);
}

//===----------------------------------------------------------------------===//
// Kernel parameters
//===----------------------------------------------------------------------===//

TensorArg attn::runtime::makeContiguousTensorArg(uint64_t devicePtr,
                                                 std::vector<int64_t> sizes) {
  TensorArg arg;
  arg.devicePtr = devicePtr;
  arg.strides.assign(sizes.size(), 1);
  for (size_t i = sizes.size(); i > 1; --i)
    arg.strides[i - 2] = arg.strides[i - 1] * sizes[i - 1];
  arg.sizes = std::move(sizes);
  return arg;
}

void ParamPack::append(std::string name, uint64_t value, bool pointer) {
  values.push_back(value);
  names.push_back(std::move(name));
  isPointer.push_back(pointer);
}

void **ParamPack::getArgs() {
  args.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    args[i] = &values[i];
  return args.data();
}

std::string ParamPack::describe() const {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += std::to_string(i) + " " + names[i] + " = " +
            (isPointer[i] ? formatHex(values[i])
                          : std::to_string(static_cast<int64_t>(values[i]))) +
            "\n";
  return text;
}

/// Query, key, value and output move in vectors of 16 bytes (cp.async,
/// vector stores), or of the largest power of two dividing a row's bytes
/// where a head dim's row is not whole 16-byte vectors (docs/GPU.md, "Padded
/// head dims"): their rows must start aligned to it, and the last dimension
/// must be contiguous.
static bool checkVectorLayout(const Manifest &manifest, const std::string &name,
                              const TensorArg &arg, std::string &error) {
  int64_t bytes = int64_t(getElementBytes(manifest.elementType));
  size_t rank = arg.strides.size();
  std::string what = "operand '" + name + "' ";
  if (rank && arg.strides[rank - 1] != 1)
    return failWith(
        error, what, "has stride ", arg.strides[rank - 1],
        " in its last dimension; the kernel needs it contiguous (1)");
  int64_t rowBytes = (arg.sizes.empty() ? 1 : arg.sizes.back()) * bytes;
  int64_t vector = getRowVectorBytes(rowBytes);
  uint64_t start = arg.devicePtr + static_cast<uint64_t>(arg.offset * bytes);
  std::string vectors =
      concat("; the kernel moves ", vector, "-byte vectors and needs ");
  if (start % vector != 0)
    return failWith(error, what, "starts at ", formatHex(start),
                    " (pointer + offset ", arg.offset, " elements)", vectors,
                    "it ", vector, "-byte aligned");
  for (size_t i = 0; i + 1 < rank; ++i)
    if (arg.strides[i] * bytes % vector != 0)
      return failWith(
          error, what, "has stride ", arg.strides[i], " in dimension ", i, " (",
          arg.strides[i] * bytes, " bytes)", vectors,
          "every stride but the last to be a multiple of ", vector, " bytes");
  return true;
}

/// Checks the operands of a launch: each one a param of a kernel of the
/// launch (or a workspace), well-formed, with sizes that give `sizes`.
static bool checkOperands(const Manifest &manifest,
                          const std::map<std::string, TensorArg> &operands,
                          const ProblemSizes &sizes, std::string &error) {
  // The memref params of every kernel (verifyManifest: together they pass
  // every operand).
  std::vector<const KernelParam *> memrefs;
  for (const KernelLaunch *kernel : manifest.getKernels())
    for (const KernelParam &param : kernel->params)
      if (param.kind == KernelParam::Kind::MemRef)
        memrefs.push_back(&param);
  for (const auto &[name, arg] : operands) {
    bool used = manifest.getWorkspace(name) != nullptr;
    for (const KernelParam *param : memrefs)
      used |= param->operand == name;
    if (used)
      continue;
    error = name == "mask"
                ? "a mask was given but the kernel was compiled without one"
                : "operand '" + name + "' is not a parameter of kernel '" +
                      manifest.kernel + "'";
    return false;
  }
  for (const KernelParam *memref : memrefs) {
    const KernelParam &param = *memref;
    auto it = operands.find(param.operand);
    std::string what = "operand '" + param.operand + "' has ";
    if (it == operands.end())
      error = "missing operand '" + param.operand + "'";
    else if (it->second.devicePtr == 0)
      error = what + "a null device pointer";
    else if (it->second.offset < 0)
      error = concat(what, "a negative offset ", it->second.offset);
    else if (it->second.sizes.size() != param.rank ||
             it->second.strides.size() != param.rank)
      error = concat(what, it->second.sizes.size(), " sizes and ",
                     it->second.strides.size(),
                     " strides but the kernel takes a rank-", param.rank,
                     " memref");
    else if ((manifest.getCapture(param.operand) ||
              param.operand == "kv_lengths" ||
              param.operand == "cu_seqlens_q" ||
              param.operand == "cu_seqlens_k" ||
              param.operand == "block_table") &&
             !it->second.strides.empty() && it->second.strides.back() != 1)
      error = concat(what, "stride ", it->second.strides.back(),
                     " in its last dimension; the kernel reads it with 1");
    else if (param.operand == "mask" || param.operand == "lse" ||
             param.operand == "kv_lengths" || param.operand == "cu_seqlens_q" ||
             param.operand == "cu_seqlens_k" ||
             param.operand == "block_table" ||
             manifest.getCapture(param.operand) ||
             checkVectorLayout(manifest, param.operand, it->second, error))
      continue;
    return false;
  }
  for (const char *name : {"query", "key", "value", "output"})
    if (!operands.count(name))
      return failWith(error, "missing operand '", name, "'");
  OperandShapes shapes;
  shapes.query = operands.at("query").sizes;
  shapes.key = operands.at("key").sizes;
  shapes.value = operands.at("value").sizes;
  shapes.output = operands.at("output").sizes;
  if (auto mask = operands.find("mask"); mask != operands.end()) {
    shapes.hasMask = true;
    shapes.mask = mask->second.sizes;
  }
  if (auto lse = operands.find("lse"); lse != operands.end()) {
    shapes.hasLse = true;
    shapes.lse = lse->second.sizes;
  }
  if (auto lengths = operands.find("kv_lengths"); lengths != operands.end()) {
    shapes.hasKvLengths = true;
    shapes.kvLengths = lengths->second.sizes;
  }
  auto offsetsQ = operands.find("cu_seqlens_q");
  auto offsetsK = operands.find("cu_seqlens_k");
  if (offsetsQ != operands.end() && offsetsK != operands.end()) {
    shapes.hasCuSeqlens = true;
    shapes.cuSeqlensQ = offsetsQ->second.sizes;
    shapes.cuSeqlensK = offsetsK->second.sizes;
  }
  if (auto table = operands.find("block_table"); table != operands.end()) {
    shapes.hasBlockTable = true;
    shapes.blockTable = table->second.sizes;
  }
  ProblemSizes actual;
  if (!inferProblemSizes(manifest, shapes, actual, error))
    return false;
  if (actual != sizes)
    error = "the operand shapes give " + actual.toString() +
            " but the launch is for " + sizes.toString();
  return actual == sizes;
}

bool attn::runtime::packParams(const Manifest &manifest,
                               const std::vector<KernelParam> &params,
                               const std::map<std::string, TensorArg> &operands,
                               const ProblemSizes &sizes, ParamPack &out,
                               std::string &error,
                               const TensorMapResolver &resolveTensorMap) {
  if (!checkOperands(manifest, operands, sizes, error))
    return false;
  ParamPack pack;
  for (const KernelParam &param : params) {
    if (param.kind == KernelParam::Kind::Size) {
      int64_t value = 0;
      sizes.get(param.name, value);
      pack.append(param.name, value);
      continue;
    }
    const std::string &name =
        param.kind == KernelParam::Kind::Workspace ? param.name : param.operand;
    auto it = operands.find(name);
    if (it == operands.end())
      return failWith(error, "missing ",
                      param.kind == KernelParam::Kind::Workspace ? "workspace"
                                                                 : "operand",
                      " '", name, "'");
    if (param.kind == KernelParam::Kind::TensorMap) {
      uint64_t devicePtr = 0;
      if (!resolveTensorMap)
        return failWith(error, "kernel '", manifest.kernel,
                        "' takes a tensor map of '", name,
                        "', which only a launch that encodes tensor maps can "
                        "pass (ManifestKernel::prepare)");
      if (!resolveTensorMap(param, it->second, devicePtr, error))
        return false;
      pack.append(name + ".tensor_map", devicePtr, /*pointer=*/true);
      continue;
    }
    // A workspace is dense: its TensorArg gives the pointer (verifyManifest
    // matched the ranks).
    TensorArg arg = it->second;
    if (param.kind == KernelParam::Kind::Workspace) {
      std::vector<int64_t> shape;
      int64_t bytes;
      if (arg.devicePtr == 0)
        return failWith(error, "workspace '", name,
                        "' has a null device pointer");
      if (!evaluateWorkspace(*manifest.getWorkspace(name), sizes, shape, bytes,
                             error))
        return false;
      arg = makeContiguousTensorArg(arg.devicePtr, shape);
    }
    pack.append(name + ".allocated", arg.devicePtr, /*pointer=*/true);
    pack.append(name + ".aligned", arg.devicePtr, /*pointer=*/true);
    pack.append(name + ".offset", arg.offset);
    for (unsigned i = 0; i < param.rank; ++i)
      pack.append(name + ".sizes[" + std::to_string(i) + "]", arg.sizes[i]);
    for (unsigned i = 0; i < param.rank; ++i)
      pack.append(name + ".strides[" + std::to_string(i) + "]", arg.strides[i]);
  }
  out = std::move(pack);
  return true;
}

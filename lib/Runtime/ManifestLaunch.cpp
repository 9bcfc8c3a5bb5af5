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

#include <algorithm>
#include <cstdint>
#include <cstdio>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

bool ProblemSizes::get(std::string_view name, int64_t &value) const {
  if (name == "B")
    value = B;
  else if (name == "Hq")
    value = Hq;
  else if (name == "Hkv")
    value = Hkv;
  else if (name == "Tq")
    value = Tq;
  else if (name == "Tk")
    value = Tk;
  else if (name == "D")
    value = D;
  else if (name == "Dv")
    value = Dv;
  else
    return false;
  return true;
}

bool ProblemSizes::operator==(const ProblemSizes &other) const {
  return B == other.B && Hq == other.Hq && Hkv == other.Hkv && Tq == other.Tq &&
         Tk == other.Tk && D == other.D && Dv == other.Dv;
}

/// Formats a shape as "?x32x?x128" (-1 as '?'); "scalar" for rank 0.
static std::string formatHex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%llx",
                static_cast<unsigned long long>(value));
  return buffer;
}

static std::string formatDims(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string result;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      result += 'x';
    result += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return result;
}

static std::string formatSizes(const ProblemSizes &sizes) {
  return "B=" + std::to_string(sizes.B) + " Hq=" + std::to_string(sizes.Hq) +
         " Hkv=" + std::to_string(sizes.Hkv) +
         " Tq=" + std::to_string(sizes.Tq) + " Tk=" + std::to_string(sizes.Tk) +
         " D=" + std::to_string(sizes.D) + " Dv=" + std::to_string(sizes.Dv);
}

/// a * b and a + b with overflow detection (true on overflow).
static bool mulOverflows(int64_t a, int64_t b, int64_t &result) {
  if (a == 0 || b == 0) {
    result = 0;
    return false;
  }
  bool overflow;
  if (a > 0)
    overflow = b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a;
  else
    overflow = b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b;
  if (!overflow)
    result = a * b;
  return overflow;
}

static bool addOverflows(int64_t a, int64_t b, int64_t &result) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
    return true;
  result = a + b;
  return false;
}

bool attn::runtime::evaluateGridExpr(const GridExpr &expr,
                                     const ProblemSizes &sizes, int64_t &value,
                                     std::string &error) {
  switch (expr.kind) {
  case GridExpr::Kind::Constant:
    value = expr.value;
    return true;
  case GridExpr::Kind::Size:
    if (!sizes.get(expr.name, value)) {
      error = "unknown size name '" + expr.name + "'";
      return false;
    }
    return true;
  default:
    break;
  }
  if (expr.operands.size() != 2) {
    error = expr.toString() + ": expected 2 operands";
    return false;
  }
  int64_t lhs, rhs;
  if (!evaluateGridExpr(expr.operands[0], sizes, lhs, error) ||
      !evaluateGridExpr(expr.operands[1], sizes, rhs, error))
    return false;
  switch (expr.kind) {
  case GridExpr::Kind::CeilDiv: {
    if (rhs <= 0) {
      error = expr.toString() + ": division by " + std::to_string(rhs);
      return false;
    }
    int64_t quotient = lhs / rhs;
    if (lhs % rhs != 0 && lhs > 0)
      ++quotient;
    value = quotient;
    return true;
  }
  case GridExpr::Kind::Mul:
    if (mulOverflows(lhs, rhs, value)) {
      error = expr.toString() + ": overflow";
      return false;
    }
    return true;
  case GridExpr::Kind::Add:
    if (addOverflows(lhs, rhs, value)) {
      error = expr.toString() + ": overflow";
      return false;
    }
    return true;
  case GridExpr::Kind::Min:
    value = std::min(lhs, rhs);
    return true;
  case GridExpr::Kind::Max:
    value = std::max(lhs, rhs);
    return true;
  default:
    break;
  }
  error = "invalid grid expression";
  return false;
}

/// Evaluates the grid `exprs` of a kernel; `prefix` starts the messages.
static bool evaluateGridExprs(const GridExpr exprs[3],
                              const ProblemSizes &sizes, unsigned grid[3],
                              const std::string &prefix, std::string &error) {
  static const int64_t kLimits[3] = {INT32_MAX, 65535, 65535};
  static const char *const kAxes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    int64_t value;
    std::string exprError;
    if (!evaluateGridExpr(exprs[i], sizes, value, exprError)) {
      error = prefix + "grid." + kAxes[i] + " = " + exprs[i].toString() + ": " +
              exprError + " (" + formatSizes(sizes) + ")";
      return false;
    }
    if (value < 1 || value > kLimits[i]) {
      error = prefix + "grid." + kAxes[i] + " = " + exprs[i].toString() +
              " = " + std::to_string(value) + " is out of range (1 .. " +
              std::to_string(kLimits[i]) + ") for " + formatSizes(sizes);
      return false;
    }
    grid[i] = static_cast<unsigned>(value);
  }
  return true;
}

bool attn::runtime::evaluateGrid(const Manifest &manifest,
                                 const ProblemSizes &sizes, unsigned grid[3],
                                 std::string &error) {
  return evaluateGridExprs(manifest.grid, sizes, grid, "", error);
}

bool attn::runtime::evaluateGrid(const PrologueKernel &kernel,
                                 const ProblemSizes &sizes, unsigned grid[3],
                                 std::string &error) {
  return evaluateGridExprs(kernel.grid, sizes, grid,
                           "prologue kernel '" + kernel.kernel + "': ", error);
}

bool attn::runtime::evaluateWorkspace(const WorkspaceSpec &workspace,
                                      const ProblemSizes &sizes,
                                      std::vector<int64_t> &shape,
                                      int64_t &bytes, std::string &error) {
  std::string prefix = "workspace '" + workspace.name + "': ";
  if (workspace.shape.empty()) {
    error = prefix + "the shape has no dimension";
    return false;
  }
  std::vector<int64_t> dims;
  int64_t total = workspace.elementBytes;
  for (size_t i = 0; i < workspace.shape.size(); ++i) {
    const GridExpr &expr = workspace.shape[i];
    std::string dimName = "shape[" + std::to_string(i) + "] = ";
    int64_t value;
    std::string exprError;
    if (!evaluateGridExpr(expr, sizes, value, exprError)) {
      error = prefix + dimName + expr.toString() + ": " + exprError + " (" +
              formatSizes(sizes) + ")";
      return false;
    }
    if (value < 1) {
      error = prefix + dimName + expr.toString() + " = " +
              std::to_string(value) + " must be >= 1 (" + formatSizes(sizes) +
              ")";
      return false;
    }
    dims.push_back(value);
    if (mulOverflows(total, value, total)) {
      error = prefix + "shape " + formatDims(dims) +
              (i + 1 < workspace.shape.size() ? "x..." : "") + " times " +
              std::to_string(workspace.elementBytes) +
              " bytes per element overflows int64 (" + formatSizes(sizes) + ")";
      return false;
    }
  }
  shape = std::move(dims);
  bytes = total;
  return true;
}

namespace {
/// Checks one actual operand shape against its compiled shape.
bool checkOperandShape(const char *name, const std::vector<int64_t> &compiled,
                       const std::vector<int64_t> &actual, std::string &error) {
  std::string context = " (compiled shape " + formatDims(compiled) +
                        ", actual " + formatDims(actual) + ")";
  if (actual.size() != compiled.size()) {
    error = std::string(name) + ": rank is " + std::to_string(actual.size()) +
            " but the kernel takes rank " + std::to_string(compiled.size()) +
            context;
    return false;
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] < 1) {
      error = std::string(name) + ": dimension " + std::to_string(i) + " is " +
              std::to_string(actual[i]) + "; every size must be >= 1" + context;
      return false;
    }
    if (compiled[i] >= 0 && actual[i] != compiled[i]) {
      error = std::string(name) + ": dimension " + std::to_string(i) + " is " +
              std::to_string(actual[i]) + " but the kernel was compiled for " +
              std::to_string(compiled[i]) + context;
      return false;
    }
  }
  return true;
}
} // namespace

bool attn::runtime::checkShapes(const Manifest &manifest,
                                const OperandShapes &shapes,
                                std::string &error) {
  if (!checkOperandShape("query", manifest.query.shape, shapes.query, error) ||
      !checkOperandShape("key", manifest.key.shape, shapes.key, error) ||
      !checkOperandShape("value", manifest.value.shape, shapes.value, error) ||
      !checkOperandShape("output", manifest.output.shape, shapes.output, error))
    return false;
  if (manifest.mask && !shapes.hasMask) {
    error = "the kernel was compiled with a mask (" +
            formatDims(manifest.mask->shape) + "x" +
            getTypeName(manifest.mask->elementType) + ") but none was given";
    return false;
  }
  if (!manifest.mask && shapes.hasMask) {
    error = "a mask was given but the kernel was compiled without one";
    return false;
  }
  if (shapes.hasMask &&
      !checkOperandShape("mask", manifest.mask->shape, shapes.mask, error))
    return false;

  // The manifest's operands are rank 4 (verifyManifest), so are the actual
  // shapes now.
  const std::vector<int64_t> &q = shapes.query, &k = shapes.key,
                             &v = shapes.value, &o = shapes.output;
  struct Shared {
    const char *size;
    const char *lhsName;
    const std::vector<int64_t> *lhs;
    const char *rhsName;
    const std::vector<int64_t> *rhs;
    unsigned dim;
  } shared[] = {
      {"B", "query", &q, "key", &k, 0},
      {"B", "query", &q, "value", &v, 0},
      {"B", "query", &q, "output", &o, 0},
      {"Hq", "query", &q, "output", &o, 1},
      {"Hkv", "key", &k, "value", &v, 1},
      {"Tq", "query", &q, "output", &o, 2},
      {"Tk", "key", &k, "value", &v, 2},
      {"D", "query", &q, "key", &k, 3},
      {"Dv", "value", &v, "output", &o, 3},
  };
  for (const Shared &entry : shared) {
    int64_t lhs = (*entry.lhs)[entry.dim], rhs = (*entry.rhs)[entry.dim];
    if (lhs == rhs)
      continue;
    error = std::string(entry.rhsName) + ": dimension " +
            std::to_string(entry.dim) + " (" + entry.size + ") is " +
            std::to_string(rhs) + " but " + entry.lhsName + " has " +
            entry.size + " = " + std::to_string(lhs) + " (" + entry.lhsName +
            " " + formatDims(*entry.lhs) + ", " + entry.rhsName + " " +
            formatDims(*entry.rhs) + ")";
    return false;
  }
  if (q[1] % k[1] != 0) {
    error = "query has " + std::to_string(q[1]) +
            " heads, which is not a multiple of the " + std::to_string(k[1]) +
            " heads of key and value";
    return false;
  }
  if (shapes.hasMask) {
    const std::vector<int64_t> &m = shapes.mask;
    std::vector<int64_t> full = {q[0], q[1], q[2], k[2]};
    static const char *const kFullNames[4] = {"B", "Hq", "Tq", "Tk"};
    size_t first = 4 - m.size();
    for (size_t i = 0; i < m.size(); ++i) {
      int64_t target = full[first + i];
      if (m[i] == 1 || m[i] == target)
        continue;
      error = "mask: dimension " + std::to_string(i) + " is " +
              std::to_string(m[i]) + "; it must be 1 or " +
              kFullNames[first + i] + " = " + std::to_string(target) +
              " to broadcast to B x Hq x Tq x Tk = " + formatDims(full) +
              " (mask " + formatDims(m) + ")";
      return false;
    }
  }
  return true;
}

bool attn::runtime::inferProblemSizes(const Manifest &manifest,
                                      const OperandShapes &shapes,
                                      ProblemSizes &sizes, std::string &error) {
  if (!checkShapes(manifest, shapes, error))
    return false;
  sizes.B = shapes.query[0];
  sizes.Hq = shapes.query[1];
  sizes.Tq = shapes.query[2];
  sizes.D = shapes.query[3];
  sizes.Hkv = shapes.key[1];
  sizes.Tk = shapes.key[2];
  sizes.Dv = shapes.value[3];
  return true;
}

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

void ParamPack::clear() {
  values.clear();
  names.clear();
  isPointer.clear();
  args.clear();
}

void ParamPack::appendPointer(std::string name, uint64_t devicePtr) {
  values.push_back(devicePtr);
  names.push_back(std::move(name));
  isPointer.push_back(true);
}

void ParamPack::appendInt64(std::string name, int64_t value) {
  values.push_back(static_cast<uint64_t>(value));
  names.push_back(std::move(name));
  isPointer.push_back(false);
}

void **ParamPack::getArgs() {
  args.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    args[i] = &values[i];
  return args.data();
}

std::string ParamPack::describe() const {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    char value[32];
    if (isPointer[i])
      std::snprintf(value, sizeof(value), "0x%llx",
                    static_cast<unsigned long long>(values[i]));
    else
      std::snprintf(value, sizeof(value), "%lld",
                    static_cast<long long>(values[i]));
    text += std::to_string(i) + " " + names[i] + " = " + value + "\n";
  }
  return text;
}

/// Query, key, value and output move in 16-byte vectors (cp.async, vector
/// stores): their rows must start 16-byte aligned, and the last dimension
/// must be contiguous.
static bool checkVectorLayout(const Manifest &manifest, const std::string &name,
                              const TensorArg &arg, std::string &error) {
  uint64_t bytes = manifest.elementType == ElementType::F32 ? 4 : 2;
  size_t rank = arg.strides.size();
  if (rank && arg.strides[rank - 1] != 1) {
    error = "operand '" + name + "' has stride " +
            std::to_string(arg.strides[rank - 1]) +
            " in its last dimension; the kernel needs it contiguous (1)";
    return false;
  }
  uint64_t start = arg.devicePtr + static_cast<uint64_t>(arg.offset) * bytes;
  if (start % 16 != 0) {
    error = "operand '" + name + "' starts at " + formatHex(start) +
            " (pointer + offset " + std::to_string(arg.offset) +
            " elements); the kernel moves 16-byte vectors and needs it "
            "16-byte aligned";
    return false;
  }
  for (size_t i = 0; i + 1 < rank; ++i)
    if (static_cast<uint64_t>(arg.strides[i]) * bytes % 16 != 0) {
      error = "operand '" + name + "' has stride " +
              std::to_string(arg.strides[i]) + " in dimension " +
              std::to_string(i) + " (" +
              std::to_string(arg.strides[i] * static_cast<int64_t>(bytes)) +
              " bytes); the kernel moves 16-byte vectors and needs every "
              "stride but the last to be a multiple of 16 bytes";
      return false;
    }
  return true;
}

bool attn::runtime::packParams(const Manifest &manifest,
                               const std::map<std::string, TensorArg> &operands,
                               const ProblemSizes &sizes, ParamPack &out,
                               std::string &error,
                               const TensorMapResolver &resolveTensorMap) {
  return packParams(manifest, manifest.params, operands, sizes, out, error,
                    resolveTensorMap);
}

/// Checks the TensorArg given for `workspace` and returns the one to pass:
/// its pointer with offset 0, the evaluated shape and row-major strides.
static bool getWorkspaceArg(const WorkspaceSpec &workspace,
                            const TensorArg &given, const ProblemSizes &sizes,
                            TensorArg &out, std::string &error) {
  const std::string &name = workspace.name;
  if (given.devicePtr == 0) {
    error = "workspace '" + name + "' has a null device pointer";
    return false;
  }
  if (given.offset != 0) {
    error = "workspace '" + name + "' has offset " +
            std::to_string(given.offset) + " (expected 0)";
    return false;
  }
  std::vector<int64_t> shape;
  int64_t bytes;
  if (!evaluateWorkspace(workspace, sizes, shape, bytes, error))
    return false;
  TensorArg arg = makeContiguousTensorArg(given.devicePtr, shape);
  if (given.sizes.empty() && given.strides.empty()) {
    out = std::move(arg);
    return true;
  }
  if (given.sizes != arg.sizes) {
    error = "workspace '" + name + "' has sizes " + formatDims(given.sizes) +
            " but the manifest gives " + formatDims(arg.sizes) + " for " +
            formatSizes(sizes);
    return false;
  }
  if (given.strides != arg.strides) {
    error = "workspace '" + name + "' has strides " +
            formatDims(given.strides) + " but a workspace is row-major (" +
            formatDims(arg.strides) + ")";
    return false;
  }
  out = std::move(arg);
  return true;
}

bool attn::runtime::packParams(const Manifest &manifest,
                               const std::vector<KernelParam> &params,
                               const std::map<std::string, TensorArg> &operands,
                               const ProblemSizes &sizes, ParamPack &out,
                               std::string &error,
                               const TensorMapResolver &resolveTensorMap) {
  // Every given operand must be passed by some param of the main kernel, or
  // be a workspace.
  for (const auto &entry : operands) {
    bool used = manifest.getWorkspace(entry.first) != nullptr;
    for (const KernelParam &param : manifest.params)
      used |= param.kind == KernelParam::Kind::MemRef &&
              param.operand == entry.first;
    if (used)
      continue;
    if (entry.first == "mask")
      error = "a mask was given but the kernel was compiled without one";
    else
      error = "operand '" + entry.first + "' is not a parameter of kernel '" +
              manifest.kernel + "'";
    return false;
  }
  // Every operand the main kernel's params name must be given, well-formed
  // (a prologue kernel takes some of them).
  for (const KernelParam &param : manifest.params) {
    if (param.kind != KernelParam::Kind::MemRef)
      continue;
    auto it = operands.find(param.operand);
    if (it == operands.end()) {
      error = "missing operand '" + param.operand + "'";
      return false;
    }
    const TensorArg &arg = it->second;
    if (arg.devicePtr == 0) {
      error = "operand '" + param.operand + "' has a null device pointer";
      return false;
    }
    if (arg.offset < 0) {
      error = "operand '" + param.operand + "' has a negative offset " +
              std::to_string(arg.offset);
      return false;
    }
    if (arg.sizes.size() != param.rank || arg.strides.size() != param.rank) {
      error = "operand '" + param.operand + "' has " +
              std::to_string(arg.sizes.size()) + " sizes and " +
              std::to_string(arg.strides.size()) +
              " strides but the kernel takes a rank-" +
              std::to_string(param.rank) + " memref";
      return false;
    }
    if (param.operand != "mask" &&
        !checkVectorLayout(manifest, param.operand, arg, error))
      return false;
  }
  // The main kernel passes query, key, value and output (verifyManifest).
  for (const char *name : {"query", "key", "value", "output"}) {
    if (!operands.count(name)) {
      error = std::string("missing operand '") + name + "'";
      return false;
    }
  }
  // The operand sizes must fit the manifest and agree with `sizes`.
  OperandShapes shapes;
  shapes.query = operands.at("query").sizes;
  shapes.key = operands.at("key").sizes;
  shapes.value = operands.at("value").sizes;
  shapes.output = operands.at("output").sizes;
  auto mask = operands.find("mask");
  if (mask != operands.end()) {
    shapes.hasMask = true;
    shapes.mask = mask->second.sizes;
  }
  ProblemSizes actual;
  if (!inferProblemSizes(manifest, shapes, actual, error))
    return false;
  if (actual != sizes) {
    error = "the operand shapes give " + formatSizes(actual) +
            " but the launch is for " + formatSizes(sizes);
    return false;
  }

  ParamPack pack;
  for (const KernelParam &param : params) {
    if (param.kind == KernelParam::Kind::Size) {
      int64_t value = 0;
      sizes.get(param.name, value);
      pack.appendInt64(param.name, value);
      continue;
    }
    if (param.kind == KernelParam::Kind::TensorMap) {
      // The operand's TensorArg was checked above (a memref param of the
      // main kernel passes it).
      auto it = operands.find(param.operand);
      if (it == operands.end()) {
        error = "missing operand '" + param.operand + "'";
        return false;
      }
      if (!resolveTensorMap) {
        error = "kernel '" + manifest.kernel + "' takes a tensor map of '" +
                param.operand +
                "', which only a launch that encodes tensor maps can pass "
                "(ManifestKernel::prepare)";
        return false;
      }
      uint64_t devicePtr = 0;
      if (!resolveTensorMap(param, it->second, devicePtr, error))
        return false;
      pack.appendPointer(param.operand + ".tensor_map", devicePtr);
      continue;
    }
    TensorArg workspaceArg;
    const TensorArg *arg;
    const std::string *name;
    if (param.kind == KernelParam::Kind::Workspace) {
      const WorkspaceSpec *workspace = manifest.getWorkspace(param.name);
      if (!workspace) {
        error = "kernel '" + manifest.kernel + "' has no workspace '" +
                param.name + "'";
        return false;
      }
      auto it = operands.find(param.name);
      if (it == operands.end()) {
        error = "missing workspace '" + param.name + "'";
        return false;
      }
      if (!getWorkspaceArg(*workspace, it->second, sizes, workspaceArg, error))
        return false;
      if (workspaceArg.sizes.size() != param.rank) {
        error = "workspace '" + param.name + "' has rank " +
                std::to_string(workspaceArg.sizes.size()) +
                " but the param takes rank " + std::to_string(param.rank);
        return false;
      }
      arg = &workspaceArg;
      name = &param.name;
    } else {
      auto it = operands.find(param.operand);
      if (it == operands.end()) {
        error = "missing operand '" + param.operand + "'";
        return false;
      }
      arg = &it->second;
      name = &param.operand;
      if (arg->sizes.size() != param.rank ||
          arg->strides.size() != param.rank) {
        error = "operand '" + param.operand + "' has " +
                std::to_string(arg->sizes.size()) + " sizes and " +
                std::to_string(arg->strides.size()) +
                " strides but the kernel takes a rank-" +
                std::to_string(param.rank) + " memref";
        return false;
      }
    }
    pack.appendPointer(*name + ".allocated", arg->devicePtr);
    pack.appendPointer(*name + ".aligned", arg->devicePtr);
    pack.appendInt64(*name + ".offset", arg->offset);
    for (unsigned i = 0; i < param.rank; ++i)
      pack.appendInt64(*name + ".sizes[" + std::to_string(i) + "]",
                       arg->sizes[i]);
    for (unsigned i = 0; i < param.rank; ++i)
      pack.appendInt64(*name + ".strides[" + std::to_string(i) + "]",
                       arg->strides[i]);
  }
  out = std::move(pack);
  return true;
}

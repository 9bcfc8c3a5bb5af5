//===- Manifest.cpp - Launch manifests of compiled kernels ----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The pieces of the manifest, its equality, serializeManifest and the
// manifest files. verifyManifest is in ManifestVerify.cpp, parseManifest in
// ManifestParse.cpp, the evaluation helpers that turn a manifest into a launch
// in ManifestLaunch.cpp, the JSON reader and writer in Json.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "attn/Runtime/FileWrite.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Manifest pieces
//===----------------------------------------------------------------------===//

const char *attn::runtime::getCausalName(CausalMode mode) {
  switch (mode) {
  case CausalMode::None:
    return nullptr;
  case CausalMode::TopLeft:
    return "top_left";
  case CausalMode::BottomRight:
    return "bottom_right";
  }
  return nullptr;
}

const char *attn::runtime::getPrecisionName(PrecisionMode mode) {
  switch (mode) {
  case PrecisionMode::Default:
    return nullptr;
  case PrecisionMode::TF32:
    return "tf32";
  case PrecisionMode::IEEE:
    return "ieee";
  }
  return nullptr;
}

GridExpr GridExpr::constant(int64_t value) {
  GridExpr expr;
  expr.kind = Kind::Constant;
  expr.value = value;
  return expr;
}

GridExpr GridExpr::size(std::string name) {
  GridExpr expr;
  expr.kind = Kind::Size;
  expr.name = std::move(name);
  return expr;
}

GridExpr GridExpr::binary(Kind kind, GridExpr lhs, GridExpr rhs) {
  GridExpr expr;
  expr.kind = kind;
  expr.operands.push_back(std::move(lhs));
  expr.operands.push_back(std::move(rhs));
  return expr;
}

const char *GridExpr::getOperatorName(Kind kind) {
  switch (kind) {
  case Kind::CeilDiv:
    return "ceil_div";
  case Kind::Mul:
    return "mul";
  case Kind::Add:
    return "add";
  case Kind::Min:
    return "min";
  case Kind::Max:
    return "max";
  case Kind::Constant:
  case Kind::Size:
    return nullptr;
  }
  return nullptr;
}

std::string GridExpr::toString() const {
  switch (kind) {
  case Kind::Constant:
    return std::to_string(value);
  case Kind::Size:
    return name;
  default:
    break;
  }
  std::string result = getOperatorName(kind);
  result += '(';
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i)
      result += ", ";
    result += operands[i].toString();
  }
  return result + ')';
}

bool GridExpr::operator==(const GridExpr &other) const {
  if (kind != other.kind)
    return false;
  if (kind == Kind::Constant)
    return value == other.value;
  if (kind == Kind::Size)
    return name == other.name;
  return operands == other.operands;
}

KernelParam KernelParam::memref(std::string operand, unsigned rank) {
  KernelParam param;
  param.kind = Kind::MemRef;
  param.operand = std::move(operand);
  param.rank = rank;
  return param;
}

KernelParam KernelParam::size(std::string name) {
  KernelParam param;
  param.kind = Kind::Size;
  param.name = std::move(name);
  return param;
}

KernelParam KernelParam::workspace(std::string name, unsigned rank) {
  KernelParam param;
  param.kind = Kind::Workspace;
  param.name = std::move(name);
  param.rank = rank;
  return param;
}

KernelParam KernelParam::tensorMap(std::string operand,
                                   std::vector<int64_t> box, unsigned swizzle) {
  KernelParam param;
  param.kind = Kind::TensorMap;
  param.operand = std::move(operand);
  param.box = std::move(box);
  param.swizzle = swizzle;
  return param;
}

bool KernelParam::operator==(const KernelParam &other) const {
  if (kind != other.kind)
    return false;
  switch (kind) {
  case Kind::MemRef:
    return operand == other.operand && rank == other.rank;
  case Kind::Size:
    return name == other.name;
  case Kind::Workspace:
    return name == other.name && rank == other.rank;
  case Kind::TensorMap:
    return operand == other.operand && box == other.box &&
           swizzle == other.swizzle;
  }
  return false;
}

bool WorkspaceSpec::operator==(const WorkspaceSpec &other) const {
  return name == other.name && elementBytes == other.elementBytes &&
         shape == other.shape;
}

static unsigned getNumSlots(const std::vector<KernelParam> &params) {
  unsigned count = 0;
  for (const KernelParam &param : params)
    count += param.getNumSlots();
  return count;
}

unsigned PrologueKernel::getNumParamSlots() const {
  return getNumSlots(params);
}

bool PrologueKernel::operator==(const PrologueKernel &other) const {
  return kernel == other.kernel && block[0] == other.block[0] &&
         block[1] == other.block[1] && block[2] == other.block[2] &&
         grid[0] == other.grid[0] && grid[1] == other.grid[1] &&
         grid[2] == other.grid[2] &&
         sharedMemoryBytes == other.sharedMemoryBytes && params == other.params;
}

std::string Manifest::getPtxPath() const {
  if (directory.empty() || ptx.empty() || ptx[0] == '/')
    return ptx;
  if (directory.back() == '/')
    return directory + ptx;
  return directory + "/" + ptx;
}

const OperandSpec *Manifest::getOperand(std::string_view name) const {
  if (name == "query")
    return &query;
  if (name == "key")
    return &key;
  if (name == "value")
    return &value;
  if (name == "output")
    return &output;
  return nullptr;
}

const WorkspaceSpec *Manifest::getWorkspace(std::string_view name) const {
  for (const WorkspaceSpec &workspace : workspaces)
    if (workspace.name == name)
      return &workspace;
  return nullptr;
}

unsigned Manifest::getNumParamSlots() const { return getNumSlots(params); }

static bool hasTensorMap(const std::vector<KernelParam> &params) {
  for (const KernelParam &param : params)
    if (param.kind == KernelParam::Kind::TensorMap)
      return true;
  return false;
}

bool Manifest::hasTensorMaps() const {
  if (hasTensorMap(params))
    return true;
  for (const PrologueKernel &kernel : prologue)
    if (hasTensorMap(kernel.params))
      return true;
  return false;
}

int64_t Manifest::getVersion() const {
  if (hasTensorMaps())
    return 3;
  return workspaces.empty() && prologue.empty() ? 1 : 2;
}

const std::vector<std::string> &attn::runtime::getSizeNames() {
  static const std::vector<std::string> names = {"B",  "Hq", "Hkv", "Tq",
                                                 "Tk", "D",  "Dv"};
  return names;
}

bool attn::runtime::operator==(const Manifest &lhs, const Manifest &rhs) {
  auto sameMask = [](const std::optional<MaskSpec> &a,
                     const std::optional<MaskSpec> &b) {
    if (a.has_value() != b.has_value())
      return false;
    return !a || (a->elementType == b->elementType && a->shape == b->shape);
  };
  return lhs.kernel == rhs.kernel && lhs.ptx == rhs.ptx &&
         lhs.chip == rhs.chip && lhs.function == rhs.function &&
         lhs.elementType == rhs.elementType &&
         lhs.query.shape == rhs.query.shape && lhs.key.shape == rhs.key.shape &&
         lhs.value.shape == rhs.value.shape &&
         lhs.output.shape == rhs.output.shape && sameMask(lhs.mask, rhs.mask) &&
         lhs.attributes.scale == rhs.attributes.scale &&
         lhs.attributes.causal == rhs.attributes.causal &&
         lhs.attributes.precision == rhs.attributes.precision &&
         lhs.config.blockM == rhs.config.blockM &&
         lhs.config.blockN == rhs.config.blockN &&
         lhs.config.numWarps == rhs.config.numWarps &&
         lhs.config.numStages == rhs.config.numStages &&
         lhs.config.extra == rhs.config.extra && lhs.block[0] == rhs.block[0] &&
         lhs.block[1] == rhs.block[1] && lhs.block[2] == rhs.block[2] &&
         lhs.grid[0] == rhs.grid[0] && lhs.grid[1] == rhs.grid[1] &&
         lhs.grid[2] == rhs.grid[2] &&
         lhs.sharedMemoryBytes == rhs.sharedMemoryBytes &&
         lhs.params == rhs.params && lhs.workspaces == rhs.workspaces &&
         lhs.prologue == rhs.prologue;
}

//===----------------------------------------------------------------------===//
// serializeManifest and files
//===----------------------------------------------------------------------===//

static JsonValue shapeToJson(const std::vector<int64_t> &shape) {
  JsonValue::Array dims;
  for (int64_t dim : shape)
    dims.push_back(JsonValue::makeInteger(dim));
  return JsonValue::makeArray(std::move(dims));
}

static JsonValue gridExprToJson(const GridExpr &expr) {
  switch (expr.kind) {
  case GridExpr::Kind::Constant:
    return JsonValue::makeInteger(expr.value);
  case GridExpr::Kind::Size:
    return JsonValue::makeString(expr.name);
  default:
    break;
  }
  JsonValue::Array operands;
  for (const GridExpr &operand : expr.operands)
    operands.push_back(gridExprToJson(operand));
  JsonValue object;
  object.set(GridExpr::getOperatorName(expr.kind),
             JsonValue::makeArray(std::move(operands)));
  return object;
}

static JsonValue blockToJson(const unsigned block[3]) {
  JsonValue dims = JsonValue::makeArray();
  for (int i = 0; i < 3; ++i)
    dims.push(JsonValue::makeInteger(block[i]));
  return dims;
}

static JsonValue gridToJson(const GridExpr grid[3]) {
  JsonValue dims = JsonValue::makeArray();
  for (int i = 0; i < 3; ++i)
    dims.push(gridExprToJson(grid[i]));
  return dims;
}

static JsonValue paramsToJson(const std::vector<KernelParam> &params) {
  JsonValue entries = JsonValue::makeArray();
  for (const KernelParam &param : params) {
    JsonValue entry;
    switch (param.kind) {
    case KernelParam::Kind::MemRef:
      entry.set("kind", JsonValue::makeString("memref"));
      entry.set("operand", JsonValue::makeString(param.operand));
      entry.set("rank", JsonValue::makeInteger(param.rank));
      break;
    case KernelParam::Kind::Size:
      entry.set("kind", JsonValue::makeString("size"));
      entry.set("name", JsonValue::makeString(param.name));
      break;
    case KernelParam::Kind::Workspace:
      entry.set("kind", JsonValue::makeString("workspace"));
      entry.set("name", JsonValue::makeString(param.name));
      entry.set("rank", JsonValue::makeInteger(param.rank));
      break;
    case KernelParam::Kind::TensorMap:
      entry.set("kind", JsonValue::makeString("tensor_map"));
      entry.set("operand", JsonValue::makeString(param.operand));
      entry.set("box", shapeToJson(param.box));
      entry.set("swizzle", JsonValue::makeInteger(param.swizzle));
      break;
    }
    entries.push(std::move(entry));
  }
  return entries;
}

static JsonValue nameOrNull(const char *name) {
  return name ? JsonValue::makeString(name) : JsonValue();
}

std::string attn::runtime::serializeManifest(const Manifest &manifest) {
  JsonValue root;
  root.set("format", JsonValue::makeString(Manifest::kFormat));
  root.set("version", JsonValue::makeInteger(manifest.getVersion()));
  root.set("kernel", JsonValue::makeString(manifest.kernel));
  root.set("ptx", JsonValue::makeString(manifest.ptx));
  root.set("chip", JsonValue::makeString(manifest.chip));
  root.set("function", JsonValue::makeString(manifest.function));
  root.set("element_type",
           JsonValue::makeString(getTypeName(manifest.elementType)));
  for (const char *name : {"query", "key", "value", "output"}) {
    JsonValue operand;
    operand.set("shape", shapeToJson(manifest.getOperand(name)->shape));
    root.set(name, std::move(operand));
  }
  if (manifest.mask) {
    JsonValue mask;
    mask.set("element_type",
             JsonValue::makeString(getTypeName(manifest.mask->elementType)));
    mask.set("shape", shapeToJson(manifest.mask->shape));
    root.set("mask", std::move(mask));
  } else {
    root.set("mask", JsonValue());
  }

  JsonValue attributes = JsonValue::makeObject();
  attributes.set("scale",
                 manifest.attributes.scale
                     ? JsonValue::makeNumber(*manifest.attributes.scale)
                     : JsonValue());
  attributes.set("causal",
                 nameOrNull(getCausalName(manifest.attributes.causal)));
  attributes.set("precision",
                 nameOrNull(getPrecisionName(manifest.attributes.precision)));
  root.set("attributes", std::move(attributes));

  JsonValue config = JsonValue::makeObject();
  config.set("block_m", JsonValue::makeInteger(manifest.config.blockM));
  config.set("block_n", JsonValue::makeInteger(manifest.config.blockN));
  config.set("num_warps", JsonValue::makeInteger(manifest.config.numWarps));
  config.set("num_stages", JsonValue::makeInteger(manifest.config.numStages));
  for (const JsonValue::Member &member : manifest.config.extra)
    config.set(member.first, member.second);
  root.set("config", std::move(config));

  root.set("block", blockToJson(manifest.block));
  root.set("grid", gridToJson(manifest.grid));
  root.set("shared_memory_bytes",
           JsonValue::makeInteger(manifest.sharedMemoryBytes));

  root.set("params", paramsToJson(manifest.params));

  // Version 2 only, so that a manifest without them is written exactly as a
  // version 1 writer wrote it.
  if (!manifest.workspaces.empty()) {
    JsonValue workspaces = JsonValue::makeArray();
    for (const WorkspaceSpec &spec : manifest.workspaces) {
      JsonValue entry;
      entry.set("name", JsonValue::makeString(spec.name));
      entry.set("element_bytes", JsonValue::makeInteger(spec.elementBytes));
      JsonValue shape = JsonValue::makeArray();
      for (const GridExpr &dim : spec.shape)
        shape.push(gridExprToJson(dim));
      entry.set("shape", std::move(shape));
      workspaces.push(std::move(entry));
    }
    root.set("workspace", std::move(workspaces));
  }
  if (!manifest.prologue.empty()) {
    JsonValue prologue = JsonValue::makeArray();
    for (const PrologueKernel &kernel : manifest.prologue) {
      JsonValue entry;
      entry.set("kernel", JsonValue::makeString(kernel.kernel));
      entry.set("block", blockToJson(kernel.block));
      entry.set("grid", gridToJson(kernel.grid));
      entry.set("shared_memory_bytes",
                JsonValue::makeInteger(kernel.sharedMemoryBytes));
      entry.set("params", paramsToJson(kernel.params));
      prologue.push(std::move(entry));
    }
    root.set("prologue", std::move(prologue));
  }
  return writeJson(root, 2) + "\n";
}

static bool readWholeFile(const std::string &path, std::string &out,
                          std::string &error) {
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::string contents;
  char buffer[65536];
  size_t count;
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    contents.append(buffer, count);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) {
    error = path + ": read error";
    return false;
  }
  out = std::move(contents);
  return true;
}

bool attn::runtime::readManifestFile(const std::string &path, Manifest &out,
                                     std::string &error) {
  std::string text;
  if (!readWholeFile(path, text, error))
    return false;
  Manifest manifest;
  if (!parseManifest(text, manifest, error)) {
    error = path + ": " + error;
    return false;
  }
  size_t slash = path.find_last_of('/');
  manifest.directory = slash == std::string::npos ? std::string(".")
                       : slash == 0               ? std::string("/")
                                                  : path.substr(0, slash);
  out = std::move(manifest);
  return true;
}

bool attn::runtime::writeManifestFile(const std::string &path,
                                      const Manifest &manifest,
                                      std::string &error) {
  std::string text = serializeManifest(manifest);
  return writeWholeFile(path, text.data(), text.size(), error);
}

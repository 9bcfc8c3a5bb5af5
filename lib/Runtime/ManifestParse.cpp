//===- ManifestParse.cpp - Parsing launch manifests -----------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// parseManifest, which reads the JSON of a manifest (version 1, 2 or 3) with an
// error message that names the line and column of the offending value, then
// checks the rules of docs/Manifest.md with verifyManifest
// (ManifestVerify.cpp).
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "ManifestNames.h"

#include <cstdint>
#include <initializer_list>

using namespace attn::runtime;
using namespace attn::runtime::detail;

//===----------------------------------------------------------------------===//
// parseManifest
//===----------------------------------------------------------------------===//

namespace {

/// Reads a Manifest off a parsed JsonValue, with positions in the errors.
class ManifestReader {
public:
  explicit ManifestReader(std::string &errorOut) : error(errorOut) {}

  bool read(const JsonValue &root, Manifest &out);

private:
  std::string &error;
  /// The manifest's "version" (1, 2 or 3).
  int64_t version = 1;

  /// The error of a feature (`what`) of version `needed` in an older
  /// manifest.
  bool failNeedsVersion(const JsonValue &at, const std::string &path,
                        const std::string &what, int64_t needed) {
    return fail(at, path,
                what + " requires version " + std::to_string(needed) +
                    " (this manifest has version " + std::to_string(version) +
                    ")");
  }

  bool fail(const JsonValue &at, const std::string &path,
            const std::string &message) {
    error.clear();
    if (at.getLine() > 0)
      error = "line " + std::to_string(at.getLine()) + ", column " +
              std::to_string(at.getColumn()) + ": ";
    if (!path.empty())
      error += path + ": ";
    error += message;
    return false;
  }

  bool expectKind(const JsonValue &value, JsonValue::Kind kind,
                  const std::string &path) {
    if (value.getKind() == kind)
      return true;
    return fail(value, path,
                std::string("expected ") + JsonValue::describeKind(kind) +
                    ", found " + JsonValue::describeKind(value.getKind()));
  }

  bool checkKeys(const JsonValue &object, const std::string &path,
                 std::initializer_list<const char *> known) {
    for (const JsonValue::Member &member : object.getObject()) {
      bool found = false;
      for (const char *name : known)
        found |= member.first == name;
      if (found)
        continue;
      std::string list;
      for (const char *name : known)
        list += (list.empty() ? "" : ", ") + std::string(name);
      return fail(member.second, path,
                  "unknown key '" + member.first + "' (expected " + list + ")");
    }
    return true;
  }

  const JsonValue *require(const JsonValue &object, const char *key,
                           const std::string &path) {
    if (const JsonValue *value = object.find(key))
      return value;
    fail(object, path, std::string("missing key '") + key + "'");
    return nullptr;
  }

  static std::string join(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }

  bool readString(const JsonValue &object, const char *key,
                  const std::string &path, bool required, std::string &out) {
    const JsonValue *value = object.find(key);
    if (!value) {
      if (required)
        return fail(object, path, std::string("missing key '") + key + "'");
      return true;
    }
    if (!expectKind(*value, JsonValue::Kind::String, join(path, key)))
      return false;
    out = value->getString();
    return true;
  }

  bool readInteger(const JsonValue &value, const std::string &path,
                   int64_t &out) {
    if (!value.isInteger())
      return fail(value, path,
                  value.isNumber()
                      ? "expected an integer, found a number with a fraction"
                      : std::string("expected an integer, found ") +
                            JsonValue::describeKind(value.getKind()));
    out = value.getInteger();
    return true;
  }

  bool readElementType(const JsonValue &value, const std::string &path,
                       bool allowI1, ElementType &out) {
    if (!expectKind(value, JsonValue::Kind::String, path))
      return false;
    ElementType type;
    if (!parseElementType(value.getString(), type) ||
        !(isFloatType(type) || (allowI1 && type == ElementType::I1)))
      return fail(value, path,
                  "unknown element type '" + value.getString() +
                      (allowI1 ? "' (expected f32, f16, bf16 or i1)"
                               : "' (expected f32, f16 or bf16)"));
    out = type;
    return true;
  }

  bool readShape(const JsonValue &value, const std::string &path,
                 std::vector<int64_t> &out) {
    if (!expectKind(value, JsonValue::Kind::Array, path))
      return false;
    out.clear();
    for (size_t i = 0; i < value.getArray().size(); ++i) {
      const JsonValue &element = value.getArray()[i];
      std::string elementPath = path + "[" + std::to_string(i) + "]";
      int64_t dim;
      if (!readInteger(element, elementPath, dim))
        return false;
      if (dim != -1 && dim < 1)
        return fail(element, elementPath,
                    "size " + std::to_string(dim) +
                        " (expected -1 for a dynamic size or a size >= 1)");
      out.push_back(dim);
    }
    return true;
  }

  bool readOperand(const JsonValue &root, const char *name, OperandSpec &out) {
    const JsonValue *value = require(root, name, "");
    if (!value || !expectKind(*value, JsonValue::Kind::Object, name) ||
        !checkKeys(*value, name, {"shape"}))
      return false;
    const JsonValue *shape = require(*value, "shape", name);
    return shape && readShape(*shape, join(name, "shape"), out.shape);
  }

  bool readGridExpr(const JsonValue &value, const std::string &path,
                    GridExpr &out) {
    if (value.isNumber()) {
      int64_t constant;
      if (!readInteger(value, path, constant))
        return false;
      if (constant < 0)
        return fail(value, path,
                    "negative constant " + std::to_string(constant));
      out = GridExpr::constant(constant);
      return true;
    }
    if (value.isString()) {
      if (!isSizeName(value.getString()))
        return fail(value, path,
                    "unknown size name '" + value.getString() +
                        "' (expected one of " + getSizeNameList() + ")");
      out = GridExpr::size(value.getString());
      return true;
    }
    static const char *const kOperatorList = "ceil_div, mul, add, min or max";
    if (!value.isObject())
      return fail(value, path,
                  std::string("expected an integer, a size name or an "
                              "object with one key among ") +
                      kOperatorList + ", found " +
                      JsonValue::describeKind(value.getKind()));
    if (value.getObject().size() != 1)
      return fail(value, path,
                  "an operator object has exactly one key among " +
                      std::string(kOperatorList) + ", found " +
                      std::to_string(value.getObject().size()));
    const JsonValue::Member &member = value.getObject().front();
    GridExpr::Kind kind;
    if (member.first == "ceil_div")
      kind = GridExpr::Kind::CeilDiv;
    else if (member.first == "mul")
      kind = GridExpr::Kind::Mul;
    else if (member.first == "add")
      kind = GridExpr::Kind::Add;
    else if (member.first == "min")
      kind = GridExpr::Kind::Min;
    else if (member.first == "max")
      kind = GridExpr::Kind::Max;
    else
      return fail(value, path,
                  "unknown operator '" + member.first + "' (expected " +
                      kOperatorList + ")");
    std::string operandsPath = path + "." + member.first;
    const JsonValue &operands = member.second;
    if (!expectKind(operands, JsonValue::Kind::Array, operandsPath))
      return false;
    if (operands.getArray().size() != 2)
      return fail(operands, operandsPath,
                  "expected an array of 2 expressions, found " +
                      std::to_string(operands.getArray().size()));
    GridExpr lhs, rhs;
    if (!readGridExpr(operands.getArray()[0], operandsPath + "[0]", lhs) ||
        !readGridExpr(operands.getArray()[1], operandsPath + "[1]", rhs))
      return false;
    out = GridExpr::binary(kind, std::move(lhs), std::move(rhs));
    return true;
  }

  bool readParam(const JsonValue &value, const std::string &path,
                 KernelParam &out) {
    if (!expectKind(value, JsonValue::Kind::Object, path))
      return false;
    std::string kind;
    if (!readString(value, "kind", path, /*required=*/true, kind))
      return false;
    if (kind == "memref") {
      if (!checkKeys(value, path, {"kind", "operand", "rank"}))
        return false;
      std::string operand;
      if (!readString(value, "operand", path, /*required=*/true, operand))
        return false;
      if (!isMemRefOperandName(operand))
        return fail(*value.find("operand"), join(path, "operand"),
                    "unknown operand '" + operand +
                        "' (expected query, key, value, mask or output)");
      const JsonValue *rankValue = require(value, "rank", path);
      int64_t rank;
      if (!rankValue || !readInteger(*rankValue, join(path, "rank"), rank))
        return false;
      if (rank < 0 || rank > 8)
        return fail(*rankValue, join(path, "rank"),
                    "rank " + std::to_string(rank) + " (expected 0 .. 8)");
      out = KernelParam::memref(operand, static_cast<unsigned>(rank));
      return true;
    }
    if (kind == "size") {
      if (!checkKeys(value, path, {"kind", "name"}))
        return false;
      std::string name;
      if (!readString(value, "name", path, /*required=*/true, name))
        return false;
      if (!isSizeName(name))
        return fail(*value.find("name"), join(path, "name"),
                    "unknown size name '" + name + "' (expected one of " +
                        getSizeNameList() + ")");
      out = KernelParam::size(name);
      return true;
    }
    if (kind == "workspace") {
      if (version < 2)
        return failNeedsVersion(*value.find("kind"), join(path, "kind"),
                                "the param kind 'workspace'", 2);
      if (!checkKeys(value, path, {"kind", "name", "rank"}))
        return false;
      std::string name;
      if (!readString(value, "name", path, /*required=*/true, name))
        return false;
      const JsonValue *rankValue = require(value, "rank", path);
      int64_t rank;
      if (!rankValue || !readInteger(*rankValue, join(path, "rank"), rank))
        return false;
      if (rank < 1 || rank > kMaxRank)
        return fail(*rankValue, join(path, "rank"),
                    "rank " + std::to_string(rank) + " (expected 1 .. " +
                        std::to_string(kMaxRank) + ")");
      out = KernelParam::workspace(name, static_cast<unsigned>(rank));
      return true;
    }
    if (kind == "tensor_map") {
      if (version < 3)
        return failNeedsVersion(*value.find("kind"), join(path, "kind"),
                                "the param kind 'tensor_map'", 3);
      return readTensorMapParam(value, path, out);
    }
    return fail(*value.find("kind"), join(path, "kind"),
                "unknown param kind '" + kind +
                    "' (expected memref, size, workspace or tensor_map)");
  }

  /// A param of kind "tensor_map" (version 3): its operand, box and
  /// swizzle. verifyManifest checks the box against the operand.
  bool readTensorMapParam(const JsonValue &value, const std::string &path,
                          KernelParam &out) {
    if (!checkKeys(value, path, {"kind", "operand", "box", "swizzle"}))
      return false;
    std::string operand;
    if (!readString(value, "operand", path, /*required=*/true, operand))
      return false;
    if (!isTensorMapOperandName(operand))
      return fail(*value.find("operand"), join(path, "operand"),
                  "unknown operand '" + operand +
                      "' (expected query, key, value or output)");
    const JsonValue *boxValue = require(value, "box", path);
    std::string boxPath = join(path, "box");
    if (!boxValue || !expectKind(*boxValue, JsonValue::Kind::Array, boxPath))
      return false;
    std::vector<int64_t> box;
    for (size_t i = 0; i < boxValue->getArray().size(); ++i) {
      const JsonValue &element = boxValue->getArray()[i];
      std::string elementPath = boxPath + "[" + std::to_string(i) + "]";
      int64_t dim;
      if (!readInteger(element, elementPath, dim))
        return false;
      if (dim < 1 || dim > kMaxTensorMapBox)
        return fail(element, elementPath,
                    std::to_string(dim) + " (expected 1 .. " +
                        std::to_string(kMaxTensorMapBox) + ")");
      box.push_back(dim);
    }
    const JsonValue *swizzleValue = require(value, "swizzle", path);
    std::string swizzlePath = join(path, "swizzle");
    int64_t swizzle;
    if (!swizzleValue || !readInteger(*swizzleValue, swizzlePath, swizzle))
      return false;
    if (!isTensorMapSwizzle(swizzle))
      return fail(*swizzleValue, swizzlePath,
                  std::to_string(swizzle) + " (expected 0, 32, 64 or 128)");
    out = KernelParam::tensorMap(operand, std::move(box),
                                 static_cast<unsigned>(swizzle));
    return true;
  }

  /// "block" of `object` (the root or a prologue entry at `path`).
  bool readBlock(const JsonValue &object, const std::string &path,
                 unsigned block[3]) {
    const JsonValue *value = require(object, "block", path);
    std::string blockPath = join(path, "block");
    if (!value || !expectKind(*value, JsonValue::Kind::Array, blockPath))
      return false;
    if (value->getArray().size() != 3)
      return fail(*value, blockPath,
                  "expected 3 dimensions, found " +
                      std::to_string(value->getArray().size()));
    for (int i = 0; i < 3; ++i) {
      const JsonValue &dim = value->getArray()[i];
      std::string dimPath = blockPath + "[" + std::to_string(i) + "]";
      int64_t threads;
      if (!readInteger(dim, dimPath, threads))
        return false;
      if (threads < 1 || threads > 1024)
        return fail(dim, dimPath,
                    std::to_string(threads) + " threads (expected 1 .. 1024)");
      block[i] = static_cast<unsigned>(threads);
    }
    return true;
  }

  /// "grid" of `object`.
  bool readGrid(const JsonValue &object, const std::string &path,
                GridExpr grid[3]) {
    const JsonValue *value = require(object, "grid", path);
    std::string gridPath = join(path, "grid");
    if (!value || !expectKind(*value, JsonValue::Kind::Array, gridPath))
      return false;
    if (value->getArray().size() != 3)
      return fail(*value, gridPath,
                  "expected 3 dimensions, found " +
                      std::to_string(value->getArray().size()));
    for (int i = 0; i < 3; ++i)
      if (!readGridExpr(value->getArray()[i],
                        gridPath + "[" + std::to_string(i) + "]", grid[i]))
        return false;
    return true;
  }

  /// "shared_memory_bytes" of `object` (optional: 0).
  bool readSharedMemory(const JsonValue &object, const std::string &path,
                        int64_t &bytes) {
    const JsonValue *value = object.find("shared_memory_bytes");
    if (!value)
      return true;
    std::string sharedPath = join(path, "shared_memory_bytes");
    if (!readInteger(*value, sharedPath, bytes))
      return false;
    if (bytes < 0 || bytes > INT32_MAX)
      return fail(*value, sharedPath,
                  std::to_string(bytes) + " (expected 0 .. 2^31-1)");
    return true;
  }

  /// "params" of `object`.
  bool readParams(const JsonValue &object, const std::string &path,
                  std::vector<KernelParam> &params) {
    const JsonValue *value = require(object, "params", path);
    std::string paramsPath = join(path, "params");
    if (!value || !expectKind(*value, JsonValue::Kind::Array, paramsPath))
      return false;
    for (size_t i = 0; i < value->getArray().size(); ++i) {
      KernelParam param;
      if (!readParam(value->getArray()[i],
                     paramsPath + "[" + std::to_string(i) + "]", param))
        return false;
      params.push_back(std::move(param));
    }
    return true;
  }

  /// One entry of "workspace" (version 2).
  bool readWorkspace(const JsonValue &value, const std::string &path,
                     WorkspaceSpec &out) {
    if (!expectKind(value, JsonValue::Kind::Object, path) ||
        !checkKeys(value, path, {"name", "element_bytes", "shape"}))
      return false;
    WorkspaceSpec spec;
    if (!readString(value, "name", path, /*required=*/true, spec.name))
      return false;
    const JsonValue &name = *value.find("name");
    if (spec.name.empty())
      return fail(name, join(path, "name"), "the name is empty");
    if (isMemRefOperandName(spec.name))
      return fail(name, join(path, "name"),
                  "'" + spec.name +
                      "' is the name of an operand (query, key, value, mask, "
                      "output)");
    const JsonValue *bytes = require(value, "element_bytes", path);
    if (!bytes ||
        !readInteger(*bytes, join(path, "element_bytes"), spec.elementBytes))
      return false;
    if (!isWorkspaceElementBytes(spec.elementBytes))
      return fail(*bytes, join(path, "element_bytes"),
                  std::to_string(spec.elementBytes) +
                      " (expected 1, 2, 4 or 8)");
    const JsonValue *shape = require(value, "shape", path);
    std::string shapePath = join(path, "shape");
    if (!shape || !expectKind(*shape, JsonValue::Kind::Array, shapePath))
      return false;
    size_t rank = shape->getArray().size();
    if (rank < 1 || rank > static_cast<size_t>(kMaxRank))
      return fail(*shape, shapePath,
                  "expected 1 .. " + std::to_string(kMaxRank) +
                      " dimensions, found " + std::to_string(rank));
    for (size_t i = 0; i < rank; ++i) {
      GridExpr dim;
      if (!readGridExpr(shape->getArray()[i],
                        shapePath + "[" + std::to_string(i) + "]", dim))
        return false;
      spec.shape.push_back(std::move(dim));
    }
    out = std::move(spec);
    return true;
  }

  /// One entry of "prologue" (version 2).
  bool readPrologueKernel(const JsonValue &value, const std::string &path,
                          PrologueKernel &out) {
    if (!expectKind(value, JsonValue::Kind::Object, path) ||
        !checkKeys(
            value, path,
            {"kernel", "block", "grid", "shared_memory_bytes", "params"}))
      return false;
    PrologueKernel kernel;
    if (!readString(value, "kernel", path, /*required=*/true, kernel.kernel))
      return false;
    if (kernel.kernel.empty())
      return fail(*value.find("kernel"), join(path, "kernel"),
                  "the entry name is empty");
    if (!readBlock(value, path, kernel.block) ||
        !readGrid(value, path, kernel.grid) ||
        !readSharedMemory(value, path, kernel.sharedMemoryBytes) ||
        !readParams(value, path, kernel.params))
      return false;
    out = std::move(kernel);
    return true;
  }
};

} // namespace

bool ManifestReader::read(const JsonValue &root, Manifest &out) {
  if (!expectKind(root, JsonValue::Kind::Object, "manifest"))
    return false;
  // Format and version first: a newer manifest should be reported as such,
  // not as a list of unknown keys.
  std::string format;
  if (!readString(root, "format", "", /*required=*/true, format))
    return false;
  if (format != Manifest::kFormat)
    return fail(*root.find("format"), "format",
                "'" + format + "' is not an attn-mlir launch manifest " +
                    "(expected '" + Manifest::kFormat + "')");
  const JsonValue *versionValue = require(root, "version", "");
  if (!versionValue || !readInteger(*versionValue, "version", version))
    return false;
  static_assert(Manifest::kVersion == 3, "update the message below");
  if (version < 1 || version > Manifest::kVersion)
    return fail(*versionValue, "version",
                "unsupported manifest version " + std::to_string(version) +
                    " (this reader supports versions 1, 2 and 3)");

  if (!checkKeys(root, "",
                 {"format", "version", "kernel", "ptx", "chip", "function",
                  "element_type", "query", "key", "value", "output", "mask",
                  "attributes", "config", "block", "grid",
                  "shared_memory_bytes", "params",
                  // Version 2.
                  "workspace", "prologue"}))
    return false;
  if (version < 2)
    for (const char *key : {"workspace", "prologue"})
      if (const JsonValue *value = root.find(key))
        return failNeedsVersion(*value, key,
                                std::string("the key '") + key + "'", 2);

  Manifest manifest;
  if (!readString(root, "kernel", "", true, manifest.kernel) ||
      !readString(root, "ptx", "", true, manifest.ptx) ||
      !readString(root, "chip", "", true, manifest.chip) ||
      !readString(root, "function", "", false, manifest.function))
    return false;
  const JsonValue *elementType = require(root, "element_type", "");
  if (!elementType || !readElementType(*elementType, "element_type",
                                       /*allowI1=*/false, manifest.elementType))
    return false;
  if (!readOperand(root, "query", manifest.query) ||
      !readOperand(root, "key", manifest.key) ||
      !readOperand(root, "value", manifest.value) ||
      !readOperand(root, "output", manifest.output))
    return false;

  if (const JsonValue *mask = root.find("mask"); mask && !mask->isNull()) {
    if (!expectKind(*mask, JsonValue::Kind::Object, "mask") ||
        !checkKeys(*mask, "mask", {"element_type", "shape"}))
      return false;
    MaskSpec spec;
    const JsonValue *type = require(*mask, "element_type", "mask");
    if (!type || !readElementType(*type, "mask.element_type",
                                  /*allowI1=*/true, spec.elementType))
      return false;
    const JsonValue *shape = require(*mask, "shape", "mask");
    if (!shape || !readShape(*shape, "mask.shape", spec.shape))
      return false;
    manifest.mask = std::move(spec);
  }

  if (const JsonValue *attributes = root.find("attributes")) {
    if (!expectKind(*attributes, JsonValue::Kind::Object, "attributes") ||
        !checkKeys(*attributes, "attributes", {"scale", "causal", "precision"}))
      return false;
    if (const JsonValue *scale = attributes->find("scale");
        scale && !scale->isNull()) {
      if (!expectKind(*scale, JsonValue::Kind::Number, "attributes.scale"))
        return false;
      if (scale->getNumber() <= 0.0)
        return fail(*scale, "attributes.scale", "the scale must be > 0");
      manifest.attributes.scale = scale->getNumber();
    }
    if (const JsonValue *causal = attributes->find("causal");
        causal && !causal->isNull()) {
      if (!expectKind(*causal, JsonValue::Kind::String, "attributes.causal"))
        return false;
      if (causal->getString() == "top_left")
        manifest.attributes.causal = CausalMode::TopLeft;
      else if (causal->getString() == "bottom_right")
        manifest.attributes.causal = CausalMode::BottomRight;
      else
        return fail(*causal, "attributes.causal",
                    "unknown causal mode '" + causal->getString() +
                        "' (expected null, top_left or bottom_right)");
    }
    if (const JsonValue *precision = attributes->find("precision");
        precision && !precision->isNull()) {
      if (!expectKind(*precision, JsonValue::Kind::String,
                      "attributes.precision"))
        return false;
      if (precision->getString() == "tf32")
        manifest.attributes.precision = PrecisionMode::TF32;
      else if (precision->getString() == "ieee")
        manifest.attributes.precision = PrecisionMode::IEEE;
      else
        return fail(*precision, "attributes.precision",
                    "unknown precision '" + precision->getString() +
                        "' (expected null, tf32 or ieee)");
    }
  }

  if (const JsonValue *config = root.find("config")) {
    if (!expectKind(*config, JsonValue::Kind::Object, "config"))
      return false;
    for (const JsonValue::Member &member : config->getObject()) {
      int64_t *field = nullptr;
      if (member.first == "block_m")
        field = &manifest.config.blockM;
      else if (member.first == "block_n")
        field = &manifest.config.blockN;
      else if (member.first == "num_warps")
        field = &manifest.config.numWarps;
      else if (member.first == "num_stages")
        field = &manifest.config.numStages;
      if (!field) {
        manifest.config.extra.push_back(member);
        continue;
      }
      std::string path = "config." + member.first;
      if (!readInteger(member.second, path, *field))
        return false;
      if (*field < 0)
        return fail(member.second, path, "must be >= 0");
    }
  }

  if (!readBlock(root, "", manifest.block) ||
      !readGrid(root, "", manifest.grid) ||
      !readSharedMemory(root, "", manifest.sharedMemoryBytes) ||
      !readParams(root, "", manifest.params))
    return false;

  if (const JsonValue *workspaces = root.find("workspace")) {
    if (!expectKind(*workspaces, JsonValue::Kind::Array, "workspace"))
      return false;
    for (size_t i = 0; i < workspaces->getArray().size(); ++i) {
      const JsonValue &entry = workspaces->getArray()[i];
      std::string path = "workspace[" + std::to_string(i) + "]";
      WorkspaceSpec spec;
      if (!readWorkspace(entry, path, spec))
        return false;
      for (size_t j = 0; j < i; ++j)
        if (manifest.workspaces[j].name == spec.name)
          return fail(*entry.find("name"), path + ".name",
                      "'" + spec.name + "' is also the name of workspace[" +
                          std::to_string(j) + "]");
      manifest.workspaces.push_back(std::move(spec));
    }
  }
  if (const JsonValue *prologue = root.find("prologue")) {
    if (!expectKind(*prologue, JsonValue::Kind::Array, "prologue"))
      return false;
    for (size_t i = 0; i < prologue->getArray().size(); ++i) {
      PrologueKernel kernel;
      if (!readPrologueKernel(prologue->getArray()[i],
                              "prologue[" + std::to_string(i) + "]", kernel))
        return false;
      manifest.prologue.push_back(std::move(kernel));
    }
  }

  if (!verifyManifest(manifest, error)) {
    error = "invalid manifest: " + error;
    return false;
  }
  out = std::move(manifest);
  return true;
}

bool attn::runtime::parseManifest(const std::string &text, Manifest &out,
                                  std::string &error) {
  JsonValue root;
  if (!parseJson(text, root, error))
    return false;
  ManifestReader reader(error);
  return reader.read(root, out);
}

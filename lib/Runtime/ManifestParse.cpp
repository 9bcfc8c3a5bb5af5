//===- ManifestParse.cpp - Verifying and parsing launch manifests ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The rules of docs/Manifest.md: verifyManifest, and parseManifest, which
// reads the JSON of a manifest with an error message that names the line and
// column of the offending value.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static bool isSizeName(std::string_view name) {
  for (const std::string &known : getSizeNames())
    if (known == name)
      return true;
  return false;
}

static std::string getSizeNameList() {
  std::string list;
  for (const std::string &name : getSizeNames())
    list += (list.empty() ? "" : ", ") + name;
  return list;
}

static bool isMemRefOperandName(std::string_view name) {
  return name == "query" || name == "key" || name == "value" ||
         name == "mask" || name == "output";
}

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

  int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (manifest.block[i] < 1) {
      error = "block[" + std::to_string(i) + "] must be >= 1";
      return false;
    }
    threads *= manifest.block[i];
  }
  if (threads > 1024) {
    error = "block has " + std::to_string(threads) +
            " threads (at most 1024 per block)";
    return false;
  }
  for (int i = 0; i < 3; ++i)
    if (!verifyGridExpr(manifest.grid[i], "grid[" + std::to_string(i) + "]",
                        error))
      return false;
  if (manifest.sharedMemoryBytes < 0 ||
      manifest.sharedMemoryBytes > INT32_MAX) {
    error = "shared_memory_bytes is " +
            std::to_string(manifest.sharedMemoryBytes) +
            " (expected 0 .. 2^31-1)";
    return false;
  }

  std::set<std::string> seen;
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const KernelParam &param = manifest.params[i];
    std::string path = "params[" + std::to_string(i) + "]";
    if (param.kind == KernelParam::Kind::Size) {
      if (!isSizeName(param.name)) {
        error = path + ": unknown size name '" + param.name +
                "' (expected one of " + getSizeNameList() + ")";
        return false;
      }
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
  return true;
}

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
        (!allowI1 && type == ElementType::I1))
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
    return fail(*value.find("kind"), join(path, "kind"),
                "unknown param kind '" + kind + "' (expected memref or size)");
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
  int64_t version;
  if (!versionValue || !readInteger(*versionValue, "version", version))
    return false;
  if (version != Manifest::kVersion)
    return fail(*versionValue, "version",
                "unsupported manifest version " + std::to_string(version) +
                    " (this reader supports version " +
                    std::to_string(Manifest::kVersion) + ")");

  if (!checkKeys(root, "",
                 {"format", "version", "kernel", "ptx", "chip", "function",
                  "element_type", "query", "key", "value", "output", "mask",
                  "attributes", "config", "block", "grid",
                  "shared_memory_bytes", "params"}))
    return false;

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

  const JsonValue *block = require(root, "block", "");
  if (!block || !expectKind(*block, JsonValue::Kind::Array, "block"))
    return false;
  if (block->getArray().size() != 3)
    return fail(*block, "block",
                "expected 3 dimensions, found " +
                    std::to_string(block->getArray().size()));
  for (int i = 0; i < 3; ++i) {
    const JsonValue &dim = block->getArray()[i];
    std::string path = "block[" + std::to_string(i) + "]";
    int64_t value;
    if (!readInteger(dim, path, value))
      return false;
    if (value < 1 || value > 1024)
      return fail(dim, path,
                  std::to_string(value) + " threads (expected 1 .. 1024)");
    manifest.block[i] = static_cast<unsigned>(value);
  }

  const JsonValue *grid = require(root, "grid", "");
  if (!grid || !expectKind(*grid, JsonValue::Kind::Array, "grid"))
    return false;
  if (grid->getArray().size() != 3)
    return fail(*grid, "grid",
                "expected 3 dimensions, found " +
                    std::to_string(grid->getArray().size()));
  for (int i = 0; i < 3; ++i)
    if (!readGridExpr(grid->getArray()[i], "grid[" + std::to_string(i) + "]",
                      manifest.grid[i]))
      return false;

  if (const JsonValue *shared = root.find("shared_memory_bytes")) {
    if (!readInteger(*shared, "shared_memory_bytes",
                     manifest.sharedMemoryBytes))
      return false;
    if (manifest.sharedMemoryBytes < 0 ||
        manifest.sharedMemoryBytes > INT32_MAX)
      return fail(*shared, "shared_memory_bytes",
                  std::to_string(manifest.sharedMemoryBytes) +
                      " (expected 0 .. 2^31-1)");
  }

  const JsonValue *params = require(root, "params", "");
  if (!params || !expectKind(*params, JsonValue::Kind::Array, "params"))
    return false;
  for (size_t i = 0; i < params->getArray().size(); ++i) {
    KernelParam param;
    if (!readParam(params->getArray()[i], "params[" + std::to_string(i) + "]",
                   param))
      return false;
    manifest.params.push_back(std::move(param));
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

//===- Manifest.cpp - Launch manifests of compiled kernels ----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The pieces of the manifest, its JSON form (through nlohmann/json, whose
// ordered_json keeps the key order of docs/Manifest.md), the reader, the
// rules (verifyManifest) and the manifest files. The reader only reads: every
// rule about values is verifyManifest's, which manifests built in code pass
// through too. The evaluation is in ManifestLaunch.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "attn/Runtime/FileWrite.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <set>

using namespace attn::runtime;
using Json = nlohmann::ordered_json;

//===----------------------------------------------------------------------===//
// Manifest pieces
//===----------------------------------------------------------------------===//

static const char *const kCausalNames[] = {nullptr, "top_left", "bottom_right"};
static const char *const kPrecisionNames[] = {nullptr, "tf32", "ieee"};
static const char *const kOperatorNames[] = {
    nullptr, nullptr, "ceil_div", "mul", "add", "min", "max"};
static const char *const kParamKinds[] = {"memref", "size", "workspace",
                                          "tensor_map"};

const char *attn::runtime::getCausalName(CausalMode mode) {
  return kCausalNames[static_cast<int>(mode)];
}

const char *attn::runtime::getPrecisionName(PrecisionMode mode) {
  return kPrecisionNames[static_cast<int>(mode)];
}

const char *GridExpr::getOperatorName(Kind kind) {
  return kOperatorNames[static_cast<int>(kind)];
}

GridExpr GridExpr::constant(int64_t value) {
  GridExpr expr;
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
  expr.operands = {std::move(lhs), std::move(rhs)};
  return expr;
}

std::string GridExpr::toString() const {
  if (kind == Kind::Constant)
    return std::to_string(value);
  if (kind == Kind::Size)
    return name;
  std::string text = std::string(getOperatorName(kind)) + "(";
  for (size_t i = 0; i < operands.size(); ++i)
    text += (i ? ", " : "") + operands[i].toString();
  return text + ")";
}

KernelParam KernelParam::memref(std::string operand, unsigned rank) {
  KernelParam param;
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

static unsigned getNumSlots(const std::vector<KernelParam> &params) {
  unsigned count = 0;
  for (const KernelParam &param : params)
    count += param.getNumSlots();
  return count;
}

unsigned PrologueKernel::getNumParamSlots() const {
  return getNumSlots(params);
}

unsigned Manifest::getNumParamSlots() const { return getNumSlots(params); }

std::string Manifest::getPtxPath() const {
  if (directory.empty() || ptx.empty() || ptx[0] == '/')
    return ptx;
  return directory + (directory.back() == '/' ? "" : "/") + ptx;
}

const OperandSpec *Manifest::getOperand(std::string_view name) const {
  return name == "query"    ? &query
         : name == "key"    ? &key
         : name == "value"  ? &value
         : name == "output" ? &output
                            : nullptr;
}

const WorkspaceSpec *Manifest::getWorkspace(std::string_view name) const {
  for (const WorkspaceSpec &workspace : workspaces)
    if (workspace.name == name)
      return &workspace;
  return nullptr;
}

bool Manifest::hasTensorMaps() const {
  auto has = [](const std::vector<KernelParam> &list) {
    for (const KernelParam &param : list)
      if (param.kind == KernelParam::Kind::TensorMap)
        return true;
    return false;
  };
  bool found = has(params);
  for (const PrologueKernel &kernel : prologue)
    found |= has(kernel.params);
  return found;
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
  return serializeManifest(lhs) == serializeManifest(rhs);
}

//===----------------------------------------------------------------------===//
// JSON text
//===----------------------------------------------------------------------===//

/// A scalar as nlohmann writes it; bytes that are not UTF-8 become U+FFFD
/// (the default handler would throw, which aborts without exceptions).
static std::string dumpScalar(const Json &value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

/// `value` on one line, with ", " and ": " between members.
static std::string writeLine(const Json &value) {
  if (!value.is_structured())
    return dumpScalar(value);
  std::string text;
  for (auto it = value.begin(); it != value.end(); ++it)
    text += (text.empty() ? "" : ", ") +
            (value.is_object() ? dumpScalar(it.key()) + ": " : "") +
            writeLine(*it);
  return value.is_object() ? "{" + text + "}" : "[" + text + "]";
}

/// `value`, whose first character lands at `column`, at nesting `level`:
/// on one line where that fits in 80 columns (with the ',' after it), else
/// one member per line, indented by 2.
static std::string writeIndented(const Json &value, size_t level,
                                 size_t column) {
  std::string line = writeLine(value);
  if (!value.is_structured() || value.empty() || column + line.size() < 80)
    return line;
  std::string inner(2 * (level + 1), ' '), text;
  for (auto it = value.begin(); it != value.end(); ++it) {
    std::string key = value.is_object() ? dumpScalar(it.key()) + ": " : "";
    text += (text.empty() ? "\n" : ",\n") + inner + key +
            writeIndented(*it, level + 1, inner.size() + key.size());
  }
  text += "\n" + std::string(2 * level, ' ');
  return value.is_object() ? "{" + text + "}" : "[" + text + "]";
}

namespace {
/// nlohmann's DOM builder, keeping the error message (the runtime is built
/// without exceptions) and refusing duplicate keys, which JSON leaves open.
class JsonBuilder : public nlohmann::detail::json_sax_dom_parser<Json> {
public:
  JsonBuilder(Json &root, std::string &error)
      : json_sax_dom_parser(root, /*allow_exceptions=*/false), error(error) {}

  bool start_object(std::size_t size) {
    keys.emplace_back();
    return json_sax_dom_parser::start_object(size);
  }
  bool end_object() {
    keys.pop_back();
    return json_sax_dom_parser::end_object();
  }
  bool key(std::string &name) {
    if (keys.back().insert(name).second)
      return json_sax_dom_parser::key(name);
    error = "duplicate key '" + name + "'";
    return false;
  }
  template <typename Exception>
  bool parse_error(std::size_t, const std::string &, const Exception &e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    error = e.what();
    error.erase(0, error.find("] ") + 2);
    return false;
  }

private:
  std::string &error;
  std::vector<std::set<std::string>> keys;
};
} // namespace

//===----------------------------------------------------------------------===//
// serializeManifest
//===----------------------------------------------------------------------===//

static Json gridExprToJson(const GridExpr &expr) {
  if (expr.kind == GridExpr::Kind::Constant)
    return expr.value;
  if (expr.kind == GridExpr::Kind::Size)
    return expr.name;
  Json operands = Json::array();
  for (const GridExpr &operand : expr.operands)
    operands.push_back(gridExprToJson(operand));
  return Json::object({{GridExpr::getOperatorName(expr.kind), operands}});
}

/// "block", "grid", "shared_memory_bytes" and "params" of a kernel.
static void launchToJson(const unsigned block[3], const GridExpr grid[3],
                         int64_t sharedMemoryBytes,
                         const std::vector<KernelParam> &params, Json &out) {
  out["block"] = {block[0], block[1], block[2]};
  out["grid"] = {gridExprToJson(grid[0]), gridExprToJson(grid[1]),
                 gridExprToJson(grid[2])};
  out["shared_memory_bytes"] = sharedMemoryBytes;
  Json &list = out["params"] = Json::array();
  for (const KernelParam &param : params) {
    Json entry = {{"kind", kParamKinds[static_cast<int>(param.kind)]}};
    if (param.kind == KernelParam::Kind::MemRef ||
        param.kind == KernelParam::Kind::TensorMap)
      entry["operand"] = param.operand;
    else
      entry["name"] = param.name;
    if (param.kind == KernelParam::Kind::TensorMap) {
      entry["box"] = param.box;
      entry["swizzle"] = param.swizzle;
    } else if (param.kind != KernelParam::Kind::Size) {
      entry["rank"] = param.rank;
    }
    list.push_back(std::move(entry));
  }
}

static Json nameOrNull(const char *name) { return name ? Json(name) : Json(); }

std::string attn::runtime::serializeManifest(const Manifest &manifest) {
  Json root = {{"format", Manifest::kFormat},
               {"version", manifest.getVersion()},
               {"kernel", manifest.kernel},
               {"ptx", manifest.ptx},
               {"chip", manifest.chip},
               {"function", manifest.function},
               {"element_type", getTypeName(manifest.elementType)}};
  for (const char *name : {"query", "key", "value", "output"})
    root[name] = {{"shape", manifest.getOperand(name)->shape}};
  root["mask"] = nullptr;
  if (manifest.mask)
    root["mask"] = {{"element_type", getTypeName(manifest.mask->elementType)},
                    {"shape", manifest.mask->shape}};
  const ManifestAttributes &attributes = manifest.attributes;
  root["attributes"] = {
      {"scale", attributes.scale ? Json(*attributes.scale) : Json()},
      {"causal", nameOrNull(getCausalName(attributes.causal))},
      {"precision", nameOrNull(getPrecisionName(attributes.precision))}};
  const KernelConfig &config = manifest.config;
  Json &configJson = root["config"] = {{"block_m", config.blockM},
                                       {"block_n", config.blockN},
                                       {"num_warps", config.numWarps},
                                       {"num_stages", config.numStages}};
  for (const auto &[key, text] : config.extra)
    configJson[key] = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  launchToJson(manifest.block, manifest.grid, manifest.sharedMemoryBytes,
               manifest.params, root);
  // Version 2 only, so that a manifest without them is written as a version
  // 1 writer wrote it.
  for (const WorkspaceSpec &spec : manifest.workspaces) {
    Json shape = Json::array();
    for (const GridExpr &dim : spec.shape)
      shape.push_back(gridExprToJson(dim));
    root["workspace"].push_back({{"name", spec.name},
                                 {"element_bytes", spec.elementBytes},
                                 {"shape", shape}});
  }
  for (const PrologueKernel &kernel : manifest.prologue) {
    Json entry = {{"kernel", kernel.kernel}};
    launchToJson(kernel.block, kernel.grid, kernel.sharedMemoryBytes,
                 kernel.params, entry);
    root["prologue"].push_back(std::move(entry));
  }
  return writeIndented(root, 0, 0) + "\n";
}

//===----------------------------------------------------------------------===//
// parseManifest
//===----------------------------------------------------------------------===//

static bool contains(std::initializer_list<std::string_view> list,
                     std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

static std::string join(std::initializer_list<std::string_view> list,
                        const char *separator = ", ") {
  std::string text;
  for (std::string_view item : list)
    text += (text.empty() ? "" : separator) + std::string(item);
  return text;
}

namespace {
/// Reads a Manifest off parsed JSON: kinds, keys and enumerations. Each
/// message starts with the path of the member, e.g. "params[2].rank: ".
class ManifestReader {
public:
  ManifestReader(std::string &error) : error(error) {}
  bool read(const Json &root, Manifest &out);

private:
  bool fail(const std::string &path, const std::string &message) {
    error = (path.empty() ? "" : path + ": ") + message;
    return false;
  }
  static std::string describe(const Json &value) {
    switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a number";
    }
  }
  bool expect(const Json &value, Json::value_t type, const char *what,
              const std::string &path) {
    return value.type() == type || fail(path, std::string("expected ") + what +
                                                  ", found " + describe(value));
  }
  static std::string at(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  /// An object with only the `known` keys (and those of `required`).
  bool object(const Json &value, const std::string &path,
              std::initializer_list<std::string_view> known) {
    if (!expect(value, Json::value_t::object, "an object", path))
      return false;
    for (auto it = value.begin(); it != value.end(); ++it)
      if (!contains(known, it.key()))
        return fail(path, "unknown key '" + it.key() + "' (expected " +
                              join(known) + ")");
    return true;
  }
  /// Member `key` of `object`; nullptr (with the error set) when it is
  /// missing and `required`.
  const Json *member(const Json &parent, const char *key,
                     const std::string &path, bool required = true) {
    auto it = parent.find(key);
    if (it != parent.end())
      return &*it;
    if (required)
      fail(path, std::string("missing key '") + key + "'");
    return nullptr;
  }
  bool integer(const Json &value, const std::string &path, int64_t &out) {
    double number = value.is_number() ? value.get<double>() : 0.0;
    if (value.is_number_integer() &&
        !(value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX)) {
      out = value.get<int64_t>();
      return true;
    }
    // "2.0" and "1e3" are integers too.
    if (value.is_number_float() && number == std::trunc(number) &&
        std::abs(number) < 9.2e18) {
      out = static_cast<int64_t>(number);
      return true;
    }
    return fail(path, value.is_number()
                          ? "expected an integer, found a number with a "
                            "fraction"
                          : "expected an integer, found " + describe(value));
  }
  /// An integer that fits an unsigned field; its rules are verifyManifest's.
  bool count(const Json &value, const std::string &path, unsigned &out) {
    int64_t number;
    if (!integer(value, path, number))
      return false;
    if (number < 0 || number > INT32_MAX)
      return fail(path, std::to_string(number) + " (expected 0 .. 2^31-1)");
    out = static_cast<unsigned>(number);
    return true;
  }
  bool string(const Json &parent, const char *key, const std::string &path,
              std::string &out, bool required = true) {
    const Json *value = member(parent, key, path, required);
    if (!value)
      return !required;
    if (!expect(*value, Json::value_t::string, "a string", at(path, key)))
      return false;
    out = value->get<std::string>();
    return true;
  }
  /// A string among `names` (nullptr entries skipped); its index.
  template <size_t N>
  bool oneOf(const Json &value, const std::string &path, const char *what,
             const char *const (&names)[N], const char *expected, int &out) {
    if (!expect(value, Json::value_t::string, "a string", path))
      return false;
    for (size_t i = 0; i < N; ++i)
      if (names[i] && value.get<std::string>() == names[i]) {
        out = static_cast<int>(i);
        return true;
      }
    return fail(path, std::string("unknown ") + what + " '" +
                          value.get<std::string>() + "' (expected " + expected +
                          ")");
  }
  bool elementType(const Json &value, const std::string &path, bool allowI1,
                   ElementType &out) {
    static const char *const names[] = {"f32", "f16", "bf16", "i1"};
    int index;
    if (!oneOf(value, path, "element type", names,
               allowI1 ? "f32, f16, bf16 or i1" : "f32, f16 or bf16", index))
      return false;
    out = static_cast<ElementType>(index);
    return allowI1 || out != ElementType::I1 ||
           fail(path, "unknown element type 'i1' (expected f32, f16 or bf16)");
  }
  bool integers(const Json &value, const std::string &path,
                std::vector<int64_t> &out) {
    if (!expect(value, Json::value_t::array, "an array", path))
      return false;
    out.assign(value.size(), 0);
    for (size_t i = 0; i < value.size(); ++i)
      if (!integer(value[i], path + "[" + std::to_string(i) + "]", out[i]))
        return false;
    return true;
  }
  bool shape(const Json &value, const std::string &path,
             std::initializer_list<std::string_view> known,
             std::vector<int64_t> &out) {
    const Json *dims;
    return object(value, path, known) &&
           (dims = member(value, "shape", path)) &&
           integers(*dims, at(path, "shape"), out);
  }
  bool gridExpr(const Json &value, const std::string &path, GridExpr &out);
  bool params(const Json &parent, const std::string &path,
              std::vector<KernelParam> &out);
  bool launch(const Json &parent, const std::string &path, unsigned block[3],
              GridExpr grid[3], int64_t &sharedMemoryBytes,
              std::vector<KernelParam> &list);
  bool workspace(const Json &value, const std::string &path,
                 WorkspaceSpec &out);
  /// The error of a feature of version `needed` in an older manifest.
  bool needsVersion(int64_t needed, const std::string &path,
                    const std::string &what) {
    return version >= needed ||
           fail(path, what + " requires version " + std::to_string(needed) +
                          " (this manifest has version " +
                          std::to_string(version) + ")");
  }

  std::string &error;
  int64_t version = 1;
};
} // namespace

bool ManifestReader::gridExpr(const Json &value, const std::string &path,
                              GridExpr &out) {
  if (value.is_number())
    return integer(value, path, out.value);
  if (value.is_string()) {
    out = GridExpr::size(value.get<std::string>());
    return true;
  }
  const char *operators = "ceil_div, mul, add, min or max";
  if (!value.is_object() || value.size() != 1)
    return fail(path,
                std::string("expected an integer, a size name or an "
                            "object with one key among ") +
                    operators + ", found " +
                    (value.is_object() ? std::to_string(value.size()) + " keys"
                                       : describe(value)));
  std::string name = value.begin().key(), operandsPath = path + "." + name;
  auto op = std::find_if(
      std::begin(kOperatorNames), std::end(kOperatorNames),
      [&](const char *candidate) { return candidate && name == candidate; });
  if (op == std::end(kOperatorNames))
    return fail(path,
                "unknown operator '" + name + "' (expected " + operators + ")");
  const Json &operands = value.front();
  if (!expect(operands, Json::value_t::array, "an array", operandsPath))
    return false;
  if (operands.size() != 2)
    return fail(operandsPath, "expected an array of 2 expressions, found " +
                                  std::to_string(operands.size()));
  GridExpr lhs, rhs;
  if (!gridExpr(operands[0], operandsPath + "[0]", lhs) ||
      !gridExpr(operands[1], operandsPath + "[1]", rhs))
    return false;
  out = GridExpr::binary(
      static_cast<GridExpr::Kind>(op - std::begin(kOperatorNames)),
      std::move(lhs), std::move(rhs));
  return true;
}

bool ManifestReader::params(const Json &parent, const std::string &path,
                            std::vector<KernelParam> &out) {
  const Json *list = member(parent, "params", path);
  std::string listPath = at(path, "params");
  if (!list || !expect(*list, Json::value_t::array, "an array", listPath))
    return false;
  for (size_t i = 0; i < list->size(); ++i) {
    const Json &value = (*list)[i];
    std::string itemPath = listPath + "[" + std::to_string(i) + "]";
    const Json *kindValue;
    int kind;
    if (!expect(value, Json::value_t::object, "an object", itemPath) ||
        !(kindValue = member(value, "kind", itemPath)) ||
        !oneOf(*kindValue, at(itemPath, "kind"), "param kind", kParamKinds,
               "memref, size, workspace or tensor_map", kind))
      return false;
    KernelParam param;
    param.kind = static_cast<KernelParam::Kind>(kind);
    const Json *rank, *box, *swizzle;
    bool ok;
    switch (param.kind) {
    case KernelParam::Kind::MemRef:
      ok = object(value, itemPath, {"kind", "operand", "rank"}) &&
           string(value, "operand", itemPath, param.operand) &&
           (rank = member(value, "rank", itemPath)) &&
           count(*rank, at(itemPath, "rank"), param.rank);
      break;
    case KernelParam::Kind::Size:
      ok = object(value, itemPath, {"kind", "name"}) &&
           string(value, "name", itemPath, param.name);
      break;
    case KernelParam::Kind::Workspace:
      ok =
          needsVersion(2, at(itemPath, "kind"), "the param kind 'workspace'") &&
          object(value, itemPath, {"kind", "name", "rank"}) &&
          string(value, "name", itemPath, param.name) &&
          (rank = member(value, "rank", itemPath)) &&
          count(*rank, at(itemPath, "rank"), param.rank);
      break;
    case KernelParam::Kind::TensorMap:
      ok = needsVersion(3, at(itemPath, "kind"),
                        "the param kind 'tensor_map'") &&
           object(value, itemPath, {"kind", "operand", "box", "swizzle"}) &&
           string(value, "operand", itemPath, param.operand) &&
           (box = member(value, "box", itemPath)) &&
           integers(*box, at(itemPath, "box"), param.box) &&
           (swizzle = member(value, "swizzle", itemPath)) &&
           count(*swizzle, at(itemPath, "swizzle"), param.swizzle);
      break;
    }
    if (!ok)
      return false;
    out.push_back(std::move(param));
  }
  return true;
}

bool ManifestReader::launch(const Json &parent, const std::string &path,
                            unsigned block[3], GridExpr grid[3],
                            int64_t &sharedMemoryBytes,
                            std::vector<KernelParam> &list) {
  for (const char *key : {"block", "grid"}) {
    const Json *value = member(parent, key, path);
    std::string keyPath = at(path, key);
    if (!value || !expect(*value, Json::value_t::array, "an array", keyPath))
      return false;
    if (value->size() != 3)
      return fail(keyPath, "expected 3 dimensions, found " +
                               std::to_string(value->size()));
    for (size_t i = 0; i < 3; ++i) {
      std::string dimPath = keyPath + "[" + std::to_string(i) + "]";
      if (key[0] == 'b' ? !count((*value)[i], dimPath, block[i])
                        : !gridExpr((*value)[i], dimPath, grid[i]))
        return false;
    }
  }
  const Json *shared = member(parent, "shared_memory_bytes", path, false);
  return (!shared || integer(*shared, at(path, "shared_memory_bytes"),
                             sharedMemoryBytes)) &&
         params(parent, path, list);
}

bool ManifestReader::workspace(const Json &value, const std::string &path,
                               WorkspaceSpec &out) {
  const Json *bytes, *shape;
  if (!object(value, path, {"name", "element_bytes", "shape"}) ||
      !string(value, "name", path, out.name) ||
      !(bytes = member(value, "element_bytes", path)) ||
      !integer(*bytes, at(path, "element_bytes"), out.elementBytes) ||
      !(shape = member(value, "shape", path)) ||
      !expect(*shape, Json::value_t::array, "an array", at(path, "shape")))
    return false;
  out.shape.resize(shape->size());
  for (size_t i = 0; i < shape->size(); ++i)
    if (!gridExpr((*shape)[i],
                  at(path, "shape") + "[" + std::to_string(i) + "]",
                  out.shape[i]))
      return false;
  return true;
}

bool ManifestReader::read(const Json &root, Manifest &out) {
  if (!expect(root, Json::value_t::object, "an object", "manifest"))
    return false;
  // Format and version first: a newer manifest is reported as such, not as
  // a list of unknown keys.
  std::string format;
  const Json *versionValue;
  if (!string(root, "format", "", format))
    return false;
  if (format != Manifest::kFormat)
    return fail("format", "'" + format +
                              "' is not an attn-mlir launch manifest "
                              "(expected '" +
                              Manifest::kFormat + "')");
  if (!(versionValue = member(root, "version", "")) ||
      !integer(*versionValue, "version", version))
    return false;
  if (version < 1 || version > Manifest::kVersion)
    return fail("version", "unsupported manifest version " +
                               std::to_string(version) +
                               " (this reader supports versions 1, 2 and 3)");
  if (!object(root, "",
              {"format",
               "version",
               "kernel",
               "ptx",
               "chip",
               "function",
               "element_type",
               "query",
               "key",
               "value",
               "output",
               "mask",
               "attributes",
               "config",
               "block",
               "grid",
               "shared_memory_bytes",
               "params",
               "workspace",
               "prologue"}))
    return false;
  for (const char *key : {"workspace", "prologue"})
    if (root.contains(key) &&
        !needsVersion(2, key, std::string("the key '") + key + "'"))
      return false;

  Manifest manifest;
  const Json *type;
  if (!string(root, "kernel", "", manifest.kernel) ||
      !string(root, "ptx", "", manifest.ptx) ||
      !string(root, "chip", "", manifest.chip) ||
      !string(root, "function", "", manifest.function, false) ||
      !(type = member(root, "element_type", "")) ||
      !elementType(*type, "element_type", false, manifest.elementType))
    return false;
  std::pair<const char *, OperandSpec *> operands[] = {
      {"query", &manifest.query},
      {"key", &manifest.key},
      {"value", &manifest.value},
      {"output", &manifest.output}};
  for (auto [name, spec] : operands) {
    const Json *operand = member(root, name, "");
    if (!operand || !shape(*operand, name, {"shape"}, spec->shape))
      return false;
  }
  if (const Json *mask = member(root, "mask", "", false);
      mask && !mask->is_null()) {
    MaskSpec spec;
    if (!shape(*mask, "mask", {"element_type", "shape"}, spec.shape) ||
        !(type = member(*mask, "element_type", "mask")) ||
        !elementType(*type, "mask.element_type", true, spec.elementType))
      return false;
    manifest.mask = std::move(spec);
  }
  if (const Json *attributes = member(root, "attributes", "", false)) {
    if (!object(*attributes, "attributes", {"scale", "causal", "precision"}))
      return false;
    ManifestAttributes &out = manifest.attributes;
    const Json *scale = member(*attributes, "scale", "", false);
    const Json *causal = member(*attributes, "causal", "", false);
    const Json *precision = member(*attributes, "precision", "", false);
    int index;
    if (scale && !scale->is_null()) {
      if (!scale->is_number())
        return fail("attributes.scale",
                    "expected a number, found " + describe(*scale));
      out.scale = scale->get<double>();
    }
    if (causal && !causal->is_null()) {
      if (!oneOf(*causal, "attributes.causal", "causal mode", kCausalNames,
                 "null, top_left or bottom_right", index))
        return false;
      out.causal = static_cast<CausalMode>(index);
    }
    if (precision && !precision->is_null()) {
      if (!oneOf(*precision, "attributes.precision", "precision",
                 kPrecisionNames, "null, tf32 or ieee", index))
        return false;
      out.precision = static_cast<PrecisionMode>(index);
    }
  }
  if (const Json *config = member(root, "config", "", false)) {
    if (!expect(*config, Json::value_t::object, "an object", "config"))
      return false;
    KernelConfig &out = manifest.config;
    for (auto it = config->begin(); it != config->end(); ++it) {
      int64_t *field = it.key() == "block_m"      ? &out.blockM
                       : it.key() == "block_n"    ? &out.blockN
                       : it.key() == "num_warps"  ? &out.numWarps
                       : it.key() == "num_stages" ? &out.numStages
                                                  : nullptr;
      if (!field)
        out.extra.emplace_back(it.key(), writeLine(*it));
      else if (!integer(*it, "config." + it.key(), *field))
        return false;
    }
  }
  if (!launch(root, "", manifest.block, manifest.grid,
              manifest.sharedMemoryBytes, manifest.params))
    return false;
  if (const Json *list = member(root, "workspace", "", false)) {
    if (!expect(*list, Json::value_t::array, "an array", "workspace"))
      return false;
    manifest.workspaces.resize(list->size());
    for (size_t i = 0; i < list->size(); ++i)
      if (!workspace((*list)[i], "workspace[" + std::to_string(i) + "]",
                     manifest.workspaces[i]))
        return false;
  }
  if (const Json *list = member(root, "prologue", "", false)) {
    if (!expect(*list, Json::value_t::array, "an array", "prologue"))
      return false;
    manifest.prologue.resize(list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      std::string path = "prologue[" + std::to_string(i) + "]";
      PrologueKernel &kernel = manifest.prologue[i];
      if (!object(
              (*list)[i], path,
              {"kernel", "block", "grid", "shared_memory_bytes", "params"}) ||
          !string((*list)[i], "kernel", path, kernel.kernel) ||
          !launch((*list)[i], path, kernel.block, kernel.grid,
                  kernel.sharedMemoryBytes, kernel.params))
        return false;
    }
  }
  if (!verifyManifest(manifest, error))
    return false;
  out = std::move(manifest);
  return true;
}

bool attn::runtime::parseManifest(const std::string &text, Manifest &out,
                                  std::string &error) {
  Json root;
  JsonBuilder builder(root, error);
  if (!Json::sax_parse(text, &builder))
    return false;
  return ManifestReader(error).read(root, out);
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

bool attn::runtime::readManifestFile(const std::string &path, Manifest &out,
                                     std::string &error) {
  std::string text;
  if (!readWholeFile(path, text, error)) {
    error = path + ": cannot open: " + error;
    return false;
  }
  Manifest manifest;
  if (!parseManifest(text, manifest, error)) {
    error = path + ": " + error;
    return false;
  }
  size_t slash = path.find_last_of('/');
  manifest.directory = slash == std::string::npos ? "."
                       : slash == 0               ? "/"
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

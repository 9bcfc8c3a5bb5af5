//===- Manifest.cpp - Launch manifests of compiled kernels ----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The manifest's JSON form (through nlohmann/json, whose
// ordered_json keeps the key order of docs/Manifest.md), the reader, the
// rules (verifyManifest) and the manifest files. The reader only reads: every
// rule about values is verifyManifest's, which manifests built in code pass
// through too. The pieces' methods are in ManifestPieces.cpp, the
// evaluation in ManifestLaunch.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include "attn/Runtime/FileWrite.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>
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

const char *GridExpr::getOperatorName(Kind kind) {
  return kOperatorNames[static_cast<int>(kind)];
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

namespace attn {
namespace runtime {
// The pieces as JSON values, found by nlohmann's adl_serializer.
static void to_json(Json &out, const GridExpr &expr) {
  if (expr.kind == GridExpr::Kind::Constant)
    out = expr.value;
  else if (expr.kind == GridExpr::Kind::Size)
    out = expr.name;
  else
    out = Json::object({{GridExpr::getOperatorName(expr.kind), expr.operands}});
}

static void to_json(Json &out, const KernelParam &param) {
  out = {{"kind", kParamKinds[static_cast<int>(param.kind)]}};
  if (param.kind == KernelParam::Kind::MemRef ||
      param.kind == KernelParam::Kind::TensorMap)
    out["operand"] = param.operand;
  else
    out["name"] = param.name;
  if (param.kind == KernelParam::Kind::TensorMap) {
    out["box"] = param.box;
    out["swizzle"] = param.swizzle;
  } else if (param.kind != KernelParam::Kind::Size) {
    out["rank"] = param.rank;
  }
}

static void to_json(Json &out, const MaskSpec &spec) {
  out = {{"element_type", getTypeName(spec.elementType)},
         {"shape", spec.shape}};
}

static void to_json(Json &out, const WorkspaceSpec &spec) {
  out = {{"name", spec.name},
         {"element_bytes", spec.elementBytes},
         {"shape", spec.shape}};
}

/// "block", "grid", "shared_memory_bytes" and "params" after what `out`
/// has ("kernel" for a prologue kernel).
static void to_json(Json &out, const KernelLaunch &launch) {
  out["block"] = launch.block;
  out["grid"] = launch.grid;
  out["shared_memory_bytes"] = launch.sharedMemoryBytes;
  out["params"] = launch.params;
}
} // namespace runtime
} // namespace attn

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
  if (manifest.lse)
    root["lse"] = {{"shape", manifest.lse->shape}};
  root["mask"] = manifest.mask ? Json(*manifest.mask) : Json();
  if (manifest.kvLengths)
    root["kv_lengths"] = *manifest.kvLengths;
  if (manifest.cuSeqlensQ)
    root["cu_seqlens_q"] = *manifest.cuSeqlensQ;
  if (manifest.cuSeqlensK)
    root["cu_seqlens_k"] = *manifest.cuSeqlensK;
  if (const std::optional<BlockTableSpec> &table = manifest.blockTable) {
    root["block_table"] = static_cast<const MaskSpec &>(*table);
    root["block_table"]["page_size"] = table->pageSize;
  }
  // Written only when there are any, so that a manifest without them is
  // written as an older writer wrote it.
  if (!manifest.captures.empty())
    root["captures"] = manifest.captures;
  const ManifestAttributes &attributes = manifest.attributes;
  root["attributes"] = {
      {"scale", attributes.scale ? Json(*attributes.scale) : Json()},
      {"causal", nameOrNull(getCausalName(attributes.causal))},
      {"precision", nameOrNull(kPrecisionNames[int(attributes.precision)])}};
  if (attributes.window)
    root["attributes"]["window"] = {{"left", attributes.window->first},
                                    {"right", attributes.window->second}};
  if (attributes.softcap)
    root["attributes"]["softcap"] = *attributes.softcap;
  if (attributes.scoreMod)
    root["attributes"]["score_mod"] = true;
  if (attributes.maskMod)
    root["attributes"]["mask_mod"] = true;
  const KernelConfig &config = manifest.config;
  Json &configJson = root["config"] = {{"block_m", config.blockM},
                                       {"block_n", config.blockN},
                                       {"num_warps", config.numWarps},
                                       {"num_stages", config.numStages}};
  for (const auto &[key, text] : config.extra)
    configJson[key] = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  to_json(root, static_cast<const KernelLaunch &>(manifest));
  if (!manifest.workspaces.empty())
    root["workspace"] = manifest.workspaces;
  for (auto [key, list] : {std::pair{"prologue", &manifest.prologue},
                           {"epilogue", &manifest.epilogue}})
    for (const KernelLaunch &kernel : *list) {
      Json entry = {{"kernel", kernel.kernel}};
      to_json(entry, kernel);
      root[key].push_back(std::move(entry));
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

static std::string join(std::initializer_list<std::string_view> list) {
  std::string text;
  for (std::string_view item : list)
    text += (text.empty() ? "" : ", ") + std::string(item);
  return text;
}

namespace {
/// Reads a Manifest off parsed JSON: kinds, keys and enumerations. The first
/// error wins and names the member's path, e.g. "params[2].rank: "; after
/// it, the accessors return empty values, so reading goes on without checks
/// at every step.
class ManifestReader {
public:
  std::string error;
  int64_t version = 1;

  template <typename... Parts>
  bool fail(const std::string &path, const Parts &...parts) {
    if (error.empty())
      error = (path.empty() ? "" : path + ": ") + concat(parts...);
    return false;
  }
  static std::string at(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string &path, size_t index) {
    return path + "[" + std::to_string(index) + "]";
  }
  /// "a string", "an object", "null", ...
  static std::string describe(const Json &value) {
    std::string name = value.is_number() ? "number" : value.type_name();
    return value.is_null()
               ? name
               : (name[0] == 'a' || name[0] == 'o' ? "an " : "a ") + name;
  }
  /// `value` if it has `type` (an error otherwise: an empty value of the
  /// type).
  const Json &expect(const Json &value, Json::value_t type,
                     const std::string &path) {
    static const Json kEmpty[] = {
        nullptr, Json::object(), Json::array(), "", false, 0, 0u, 0.0};
    if (value.type() == type)
      return value;
    fail(path, "expected ", describe(Json(type)), ", found ", describe(value));
    return kEmpty[int(type)];
  }
  /// `value` if it is an object of only the `known` keys.
  const Json &object(const Json &value, const std::string &path,
                     std::initializer_list<std::string_view> known) {
    const Json &checked = expect(value, Json::value_t::object, path);
    for (auto it = checked.begin(); it != checked.end(); ++it)
      if (!contains(known, it.key()))
        fail(path, "unknown key '", it.key(), "' (expected ", join(known), ")");
    return checked;
  }
  /// Member `key` of `parent` (null when it is missing: an error if it is
  /// `required`).
  const Json &member(const Json &parent, const char *key,
                     const std::string &path, bool required = true) {
    static const Json kNull;
    auto it = parent.is_object() ? parent.find(key) : parent.end();
    if (it != parent.end())
      return *it;
    if (required && parent.is_object())
      fail(path, "missing key '", key, "'");
    return kNull;
  }
  int64_t integer(const Json &value, const std::string &path) {
    double number = value.is_number() ? value.get<double>() : 0.5;
    if (value.is_number_integer() &&
        !(value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX))
      return value.get<int64_t>();
    // "2.0" and "1e3" are integers too.
    if (number == std::trunc(number) && std::abs(number) < 9.2e18)
      return int64_t(number);
    fail(path, value.is_number()
                   ? "expected an integer, found a number with a fraction"
                   : "expected an integer, found " + describe(value));
    return 0;
  }
  /// An integer that fits an unsigned field; its rules are verifyManifest's.
  unsigned count(const Json &value, const std::string &path) {
    int64_t number = integer(value, path);
    if (number >= 0 && number <= INT32_MAX)
      return unsigned(number);
    fail(path, number, " (expected 0 .. 2^31-1)");
    return 0;
  }
  std::string string(const Json &parent, const char *key,
                     const std::string &path, bool required = true) {
    const Json &value = member(parent, key, path, required);
    if (!required && value.is_null())
      return "";
    return expect(value, Json::value_t::string, at(path, key))
        .get<std::string>();
  }
  /// The index of string `value` in `names` (nullptr entries skipped).
  template <size_t N>
  int oneOf(const Json &value, const std::string &path, const char *what,
            const char *const (&names)[N], const char *expected) {
    std::string name =
        expect(value, Json::value_t::string, path).get<std::string>();
    for (size_t i = 0; i < N; ++i)
      if (names[i] && name == names[i])
        return int(i);
    fail(path, "unknown ", what, " '", name, "' (expected ", expected, ")");
    return 0;
  }
  ElementType elementType(const Json &value, const std::string &path,
                          std::initializer_list<ElementType> allowed) {
    std::string name =
        expect(value, Json::value_t::string, path).get<std::string>();
    std::string expected;
    for (ElementType candidate : allowed)
      expected += (expected.empty()                         ? ""
                   : candidate == *std::prev(allowed.end()) ? " or "
                                                            : ", ") +
                  std::string(getTypeName(candidate));
    ElementType type = ElementType::F32;
    if (!parseElementType(name, type) ||
        std::find(allowed.begin(), allowed.end(), type) == allowed.end())
      fail(path, "unknown element type '", name, "' (expected ", expected, ")");
    return type;
  }
  std::vector<int64_t> integers(const Json &value, const std::string &path) {
    std::vector<int64_t> out;
    for (const Json &item : expect(value, Json::value_t::array, path))
      out.push_back(integer(item, at(path, out.size())));
    return out;
  }
  std::vector<int64_t> shape(const Json &value, const std::string &path,
                             std::initializer_list<std::string_view> known) {
    return integers(member(object(value, path, known), "shape", path),
                    at(path, "shape"));
  }
  /// A mask or a capture: its shape, then its element type.
  MaskSpec tensor(const Json &value, const std::string &path,
                  std::initializer_list<ElementType> types) {
    MaskSpec spec;
    spec.shape = shape(value, path, {"element_type", "shape"});
    spec.elementType = elementType(member(value, "element_type", path),
                                   at(path, "element_type"), types);
    return spec;
  }
  /// The items of the optional array `key` of the manifest.
  const Json &list(const Json &root, const char *key) {
    static const Json kEmpty = Json::array();
    const Json &value = member(root, key, "", false);
    return value.is_null() ? kEmpty : expect(value, Json::value_t::array, key);
  }
  void needsVersion(int64_t needed, const std::string &path,
                    const std::string &what) {
    if (version < needed)
      fail(path, what, " requires version ", needed,
           " (this manifest has version ", version, ")");
  }
  GridExpr gridExpr(const Json &value, const std::string &path);
  std::vector<KernelParam> params(const Json &parent, const std::string &path);
  void launch(const Json &parent, const std::string &path, KernelLaunch &out);
  void read(const Json &root, Manifest &out);
};
} // namespace

GridExpr ManifestReader::gridExpr(const Json &value, const std::string &path) {
  if (value.is_number())
    return GridExpr::constant(integer(value, path));
  if (value.is_string())
    return GridExpr::size(value.get<std::string>());
  const char *operators = "ceil_div, mul, add, min or max";
  if (!value.is_object() || value.size() != 1) {
    fail(path,
         "expected an integer, a size name or an object with one key among ",
         operators, ", found ",
         value.is_object() ? std::to_string(value.size()) + " keys"
                           : describe(value));
    return GridExpr();
  }
  std::string name = value.begin().key(), operandsPath = path + "." + name;
  auto op = std::find_if(
      std::begin(kOperatorNames), std::end(kOperatorNames),
      [&](const char *candidate) { return candidate && name == candidate; });
  if (op == std::end(kOperatorNames))
    fail(path, "unknown operator '", name, "' (expected ", operators, ")");
  const Json &operands =
      expect(value.front(), Json::value_t::array, operandsPath);
  if (operands.size() != 2) {
    fail(operandsPath, "expected an array of 2 expressions, found ",
         operands.size());
    return GridExpr();
  }
  return GridExpr::binary(GridExpr::Kind(op - std::begin(kOperatorNames)),
                          gridExpr(operands[0], at(operandsPath, 0)),
                          gridExpr(operands[1], at(operandsPath, 1)));
}

std::vector<KernelParam> ManifestReader::params(const Json &parent,
                                                const std::string &path) {
  std::string listPath = at(path, "params");
  std::vector<KernelParam> out;
  for (const Json &value :
       expect(member(parent, "params", path), Json::value_t::array, listPath)) {
    std::string itemPath = at(listPath, out.size());
    KernelParam &param = out.emplace_back();
    const Json &item = expect(value, Json::value_t::object, itemPath);
    param.kind = KernelParam::Kind(oneOf(
        member(item, "kind", itemPath), at(itemPath, "kind"), "param kind",
        kParamKinds, "memref, size, workspace or tensor_map"));
    if (!error.empty())
      break;
    switch (param.kind) {
    case KernelParam::Kind::MemRef:
      object(item, itemPath, {"kind", "operand", "rank"});
      param.operand = string(item, "operand", itemPath);
      param.rank = count(member(item, "rank", itemPath), at(itemPath, "rank"));
      break;
    case KernelParam::Kind::Size:
      object(item, itemPath, {"kind", "name"});
      param.name = string(item, "name", itemPath);
      break;
    case KernelParam::Kind::Workspace:
      needsVersion(2, at(itemPath, "kind"), "the param kind 'workspace'");
      object(item, itemPath, {"kind", "name", "rank"});
      param.name = string(item, "name", itemPath);
      param.rank = count(member(item, "rank", itemPath), at(itemPath, "rank"));
      break;
    case KernelParam::Kind::TensorMap:
      needsVersion(3, at(itemPath, "kind"), "the param kind 'tensor_map'");
      object(item, itemPath, {"kind", "operand", "box", "swizzle"});
      param.operand = string(item, "operand", itemPath);
      param.box = integers(member(item, "box", itemPath), at(itemPath, "box"));
      param.swizzle =
          count(member(item, "swizzle", itemPath), at(itemPath, "swizzle"));
      break;
    }
  }
  return out;
}

void ManifestReader::launch(const Json &parent, const std::string &path,
                            KernelLaunch &out) {
  for (const char *key : {"block", "grid"}) {
    const Json &dims =
        expect(member(parent, key, path), Json::value_t::array, at(path, key));
    if (dims.size() != 3)
      fail(at(path, key), "expected 3 dimensions, found ", dims.size());
    for (size_t i = 0; i < 3 && error.empty(); ++i) {
      if (key[0] == 'b')
        out.block[i] = count(dims[i], at(at(path, key), i));
      else
        out.grid[i] = gridExpr(dims[i], at(at(path, key), i));
    }
  }
  const Json &shared = member(parent, "shared_memory_bytes", path, false);
  if (!shared.is_null())
    out.sharedMemoryBytes = integer(shared, at(path, "shared_memory_bytes"));
  out.params = params(parent, path);
}

void ManifestReader::read(const Json &root, Manifest &out) {
  expect(root, Json::value_t::object, "manifest");
  // Format and version first: a newer manifest is reported as such, not as
  // a list of unknown keys.
  std::string format = string(root, "format", "");
  if (error.empty() && format != Manifest::kFormat)
    fail("format", "'", format, "' is not an attn-mlir launch manifest ",
         "(expected '", Manifest::kFormat, "')");
  version = integer(member(root, "version", ""), "version");
  if (error.empty() && (version < 1 || version > Manifest::kVersion))
    fail("version", "unsupported manifest version ", version,
         " (this reader supports versions 1, 2, 3, 4, 5, 6 and 7)");
  object(root, "",
         {"format",       "version",      "kernel",       "ptx",
          "chip",         "function",     "element_type", "query",
          "key",          "value",        "output",       "lse",
          "mask",         "kv_lengths",   "captures",     "attributes",
          "config",       "block",        "grid",         "shared_memory_bytes",
          "params",       "workspace",    "prologue",     "epilogue",
          "cu_seqlens_q", "cu_seqlens_k", "block_table"});
  for (auto [key, needed] : {std::pair{"workspace", 2},
                             {"prologue", 2},
                             {"lse", 4},
                             {"kv_lengths", 5},
                             {"epilogue", 5},
                             {"cu_seqlens_q", 6},
                             {"cu_seqlens_k", 6},
                             {"block_table", 7}})
    if (root.contains(key))
      needsVersion(needed, key, std::string("the key '") + key + "'");

  out.kernel = string(root, "kernel", "");
  out.ptx = string(root, "ptx", "");
  out.chip = string(root, "chip", "");
  out.function = string(root, "function", "", false);
  out.elementType =
      elementType(member(root, "element_type", ""), "element_type",
                  {ElementType::F32, ElementType::F16, ElementType::BF16});
  for (const char *name : {"query", "key", "value", "output"})
    const_cast<OperandSpec *>(out.getOperand(name))->shape =
        shape(member(root, name, ""), name, {"shape"});
  if (const Json &lse = member(root, "lse", "", false); !lse.is_null())
    out.lse = OperandSpec{shape(lse, "lse", {"shape"})};
  if (const Json &mask = member(root, "mask", "", false); !mask.is_null())
    out.mask = tensor(mask, "mask",
                      {ElementType::F32, ElementType::F16, ElementType::BF16,
                       ElementType::I1});
  if (const Json &lengths = member(root, "kv_lengths", "", false);
      !lengths.is_null())
    out.kvLengths = tensor(lengths, "kv_lengths", {ElementType::I32});
  if (const Json &offsets = member(root, "cu_seqlens_q", "", false);
      !offsets.is_null())
    out.cuSeqlensQ = tensor(offsets, "cu_seqlens_q", {ElementType::I32});
  if (const Json &offsets = member(root, "cu_seqlens_k", "", false);
      !offsets.is_null())
    out.cuSeqlensK = tensor(offsets, "cu_seqlens_k", {ElementType::I32});
  if (const Json &table = member(root, "block_table", "", false);
      !table.is_null()) {
    BlockTableSpec spec;
    spec.shape =
        shape(table, "block_table", {"element_type", "shape", "page_size"});
    spec.elementType =
        elementType(member(table, "element_type", "block_table"),
                    "block_table.element_type", {ElementType::I32});
    spec.pageSize = integer(member(table, "page_size", "block_table"),
                            "block_table.page_size");
    out.blockTable = spec;
  }
  for (const Json &capture : list(root, "captures"))
    out.captures.push_back(
        tensor(capture, at("captures", out.captures.size()),
               {ElementType::F32, ElementType::I32, ElementType::I64}));
  const Json &attributes = member(root, "attributes", "", false);
  if (!attributes.is_null())
    object(attributes, "attributes",
           {"scale", "causal", "precision", "window", "softcap", "score_mod",
            "mask_mod"});
  const Json &scale = member(attributes, "scale", "", false);
  if (!scale.is_null() && !scale.is_number())
    fail("attributes.scale", "expected a number, found ", describe(scale));
  else if (!scale.is_null())
    out.attributes.scale = scale.get<double>();
  const Json &causal = member(attributes, "causal", "", false);
  if (!causal.is_null())
    out.attributes.causal =
        CausalMode(oneOf(causal, "attributes.causal", "causal mode",
                         kCausalNames, "null, top_left or bottom_right"));
  const Json &precision = member(attributes, "precision", "", false);
  if (!precision.is_null())
    out.attributes.precision =
        PrecisionMode(oneOf(precision, "attributes.precision", "precision",
                            kPrecisionNames, "null, tf32 or ieee"));
  if (const Json &window = member(attributes, "window", "", false);
      !window.is_null()) {
    object(window, "attributes.window", {"left", "right"});
    int64_t left = integer(member(window, "left", "attributes.window"),
                           "attributes.window.left");
    int64_t right = integer(member(window, "right", "attributes.window"),
                            "attributes.window.right");
    for (auto [side, value] : {std::pair{"left", left}, {"right", right}})
      if (value < -1)
        fail(std::string("attributes.window.") + side,
             "expected -1 (unbounded) or a key count >= 0, found ", value);
    out.attributes.window = {left, right};
  }
  if (const Json &softcap = member(attributes, "softcap", "", false);
      !softcap.is_null()) {
    if (!softcap.is_number() || !(softcap.get<double>() > 0))
      fail("attributes.softcap", "expected a number > 0, found ",
           describe(softcap));
    else
      out.attributes.softcap = softcap.get<double>();
  }
  for (auto [key, field] : {std::pair{"score_mod", &out.attributes.scoreMod},
                            {"mask_mod", &out.attributes.maskMod}}) {
    const Json &flag = member(attributes, key, "", false);
    if (!flag.is_null())
      *field =
          expect(flag, Json::value_t::boolean, std::string("attributes.") + key)
              .get<bool>();
  }
  const Json &config = member(root, "config", "", false);
  if (!config.is_null())
    expect(config, Json::value_t::object, "config");
  for (auto it = config.begin(); config.is_object() && it != config.end();
       ++it) {
    int64_t *field = it.key() == "block_m"      ? &out.config.blockM
                     : it.key() == "block_n"    ? &out.config.blockN
                     : it.key() == "num_warps"  ? &out.config.numWarps
                     : it.key() == "num_stages" ? &out.config.numStages
                                                : nullptr;
    if (field)
      *field = integer(*it, "config." + it.key());
    else
      out.config.extra.emplace_back(it.key(), writeLine(*it));
  }
  launch(root, "", out);
  for (const Json &value : list(root, "workspace")) {
    std::string path = at("workspace", out.workspaces.size());
    WorkspaceSpec &spec = out.workspaces.emplace_back();
    const Json &item = object(value, path, {"name", "element_bytes", "shape"});
    spec.name = string(item, "name", path);
    spec.elementBytes =
        integer(member(item, "element_bytes", path), at(path, "element_bytes"));
    const Json &dims = expect(member(item, "shape", path), Json::value_t::array,
                              at(path, "shape"));
    for (size_t i = 0; i < dims.size() && error.empty(); ++i)
      spec.shape.push_back(gridExpr(dims[i], at(at(path, "shape"), i)));
  }
  for (auto [key, kernels] :
       {std::pair{"prologue", &out.prologue}, {"epilogue", &out.epilogue}})
    for (const Json &value : list(root, key)) {
      std::string path = at(key, kernels->size());
      KernelLaunch &kernel = kernels->emplace_back();
      const Json &item =
          object(value, path,
                 {"kernel", "block", "grid", "shared_memory_bytes", "params"});
      kernel.kernel = string(item, "kernel", path);
      launch(item, path, kernel);
    }
}

bool attn::runtime::parseManifest(const std::string &text, Manifest &out,
                                  std::string &error) {
  Json root;
  JsonBuilder builder(root, error);
  if (!Json::sax_parse(text, &builder))
    return false;
  ManifestReader reader;
  Manifest manifest;
  reader.read(root, manifest);
  error = reader.error;
  if (!error.empty() || !verifyManifest(manifest, error))
    return false;
  out = std::move(manifest);
  return true;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

bool attn::runtime::readManifestFile(const std::string &path, Manifest &out,
                                     std::string &error) {
  std::string text;
  if (!readWholeFile(path, text, error))
    return failWith(error, path, ": cannot open: ", error);
  Manifest manifest;
  if (!parseManifest(text, manifest, error))
    return failWith(error, path, ": ", error);
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

//===- Manifest.cpp - Launch manifests of compiled kernels ----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <locale>
#include <set>
#include <sstream>

#ifdef _WIN32
#include <process.h>
#define ATTN_GETPID _getpid
#else
#include <unistd.h>
#define ATTN_GETPID getpid
#endif

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// JsonValue
//===----------------------------------------------------------------------===//

JsonValue JsonValue::makeBool(bool value) {
  JsonValue result;
  result.kind = Kind::Bool;
  result.boolValue = value;
  return result;
}

JsonValue JsonValue::makeInteger(int64_t value) {
  JsonValue result;
  result.kind = Kind::Number;
  result.integral = true;
  result.integer = value;
  result.number = static_cast<double>(value);
  return result;
}

JsonValue JsonValue::makeNumber(double value) {
  JsonValue result;
  result.kind = Kind::Number;
  result.number = value;
  // -2^63 <= value < 2^63, integral: exactly representable as int64_t.
  if (std::isfinite(value) && value == std::trunc(value) &&
      value >= -9223372036854775808.0 && value < 9223372036854775808.0) {
    result.integral = true;
    result.integer = static_cast<int64_t>(value);
  }
  return result;
}

JsonValue JsonValue::makeString(std::string value) {
  JsonValue result;
  result.kind = Kind::String;
  result.string = std::move(value);
  return result;
}

JsonValue JsonValue::makeArray(Array elements) {
  JsonValue result;
  result.kind = Kind::Array;
  result.array = std::move(elements);
  return result;
}

JsonValue JsonValue::makeObject(Object members) {
  JsonValue result;
  result.kind = Kind::Object;
  result.object = std::move(members);
  return result;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const Member &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

void JsonValue::set(std::string key, JsonValue value) {
  if (kind == Kind::Null)
    kind = Kind::Object;
  if (kind != Kind::Object)
    return;
  for (Member &member : object) {
    if (member.first == key) {
      member.second = std::move(value);
      return;
    }
  }
  object.emplace_back(std::move(key), std::move(value));
}

void JsonValue::push(JsonValue value) {
  if (kind == Kind::Null)
    kind = Kind::Array;
  if (kind == Kind::Array)
    array.push_back(std::move(value));
}

const char *JsonValue::describeKind(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "?";
}

bool JsonValue::operator==(const JsonValue &other) const {
  if (kind != other.kind)
    return false;
  switch (kind) {
  case Kind::Null:
    return true;
  case Kind::Bool:
    return boolValue == other.boolValue;
  case Kind::Number:
    if (integral && other.integral)
      return integer == other.integer;
    return number == other.number;
  case Kind::String:
    return string == other.string;
  case Kind::Array:
    return array == other.array;
  case Kind::Object:
    return object == other.object;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// JSON reader
//===----------------------------------------------------------------------===//

namespace {

/// A recursive-descent reader over one JSON document that tracks the line
/// and column of the next byte.
class JsonParser {
public:
  JsonParser(std::string_view input, std::string &errorOut)
      : text(input), error(errorOut) {}

  bool parseDocument(JsonValue &out) {
    // A UTF-8 byte order mark is tolerated at the start.
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
      pos = lineStart = 3;
    skipWhitespace();
    if (!parseValue(out, 0))
      return false;
    skipWhitespace();
    if (pos != text.size())
      return fail("unexpected " + describeNext() + " after the JSON value");
    return true;
  }

private:
  static constexpr int kMaxDepth = 256;

  std::string_view text;
  std::string &error;
  size_t pos = 0;
  int line = 1;
  size_t lineStart = 0;

  int getColumn() const { return static_cast<int>(pos - lineStart) + 1; }

  bool fail(const std::string &message) {
    error = "line " + std::to_string(line) + ", column " +
            std::to_string(getColumn()) + ": " + message;
    return false;
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  std::string describeNext() const {
    if (atEnd())
      return "end of input";
    unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x20 && c < 0x7f)
      return std::string("character '") + static_cast<char>(c) + "'";
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "byte 0x%02x", c);
    return buffer;
  }

  void skipWhitespace() {
    while (!atEnd()) {
      char c = text[pos];
      if (c == '\n') {
        ++pos;
        ++line;
        lineStart = pos;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos;
      } else {
        break;
      }
    }
  }

  bool parseValue(JsonValue &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    int valueLine = line, valueColumn = getColumn();
    bool ok = false;
    char c = peek();
    if (atEnd()) {
      return fail("expected a JSON value, found end of input");
    } else if (c == '{') {
      ok = parseObject(out, depth);
    } else if (c == '[') {
      ok = parseArray(out, depth);
    } else if (c == '"') {
      std::string string;
      ok = parseString(string);
      if (ok)
        out = JsonValue::makeString(std::move(string));
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      ok = parseNumber(out);
    } else if (c == 't' || c == 'f' || c == 'n') {
      ok = parseLiteral(out);
    } else {
      return fail("expected a JSON value, found " + describeNext());
    }
    if (ok)
      out.setPosition(valueLine, valueColumn);
    return ok;
  }

  bool parseLiteral(JsonValue &out) {
    auto startsWith = [&](std::string_view word) {
      return text.substr(pos, word.size()) == word;
    };
    if (startsWith("true")) {
      out = JsonValue::makeBool(true);
      pos += 4;
    } else if (startsWith("false")) {
      out = JsonValue::makeBool(false);
      pos += 5;
    } else if (startsWith("null")) {
      out = JsonValue();
      pos += 4;
    } else {
      return fail("invalid literal (expected true, false or null)");
    }
    // "nullx" is not a literal followed by garbage at the top level only:
    // reject identifier characters right after a literal everywhere.
    char c = peek();
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '_')
      return fail("invalid literal (expected true, false or null)");
    return true;
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool parseNumber(JsonValue &out) {
    size_t start = pos;
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      ++pos;
    }
    if (!isDigit(peek()))
      return fail("invalid number: expected a digit after '-'");
    if (peek() == '0') {
      ++pos;
      if (isDigit(peek()))
        return fail("invalid number: leading zeros are not allowed");
    } else {
      while (isDigit(peek()))
        ++pos;
    }
    bool integral = true;
    if (peek() == '.') {
      integral = false;
      ++pos;
      if (!isDigit(peek()))
        return fail("invalid number: expected a digit after '.'");
      while (isDigit(peek()))
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!isDigit(peek()))
        return fail("invalid number: expected a digit in the exponent");
      while (isDigit(peek()))
        ++pos;
    }
    std::string_view literal = text.substr(start, pos - start);
    if (integral) {
      // Accumulate as a negative number so that INT64_MIN fits.
      int64_t value = 0;
      bool overflow = false;
      for (char c : literal.substr(negative ? 1 : 0)) {
        int digit = c - '0';
        if (value < (INT64_MIN + digit) / 10) {
          overflow = true;
          break;
        }
        value = value * 10 - digit;
      }
      if (!overflow && !negative && value == INT64_MIN)
        overflow = true;
      if (!overflow) {
        out = JsonValue::makeInteger(negative ? value : -value);
        return true;
      }
    }
    std::istringstream stream{std::string(literal)};
    stream.imbue(std::locale::classic());
    double value = 0.0;
    stream >> value;
    if (stream.fail() || !std::isfinite(value)) {
      size_t saved = pos;
      pos = start;
      fail("number out of range: " + std::string(literal));
      pos = saved;
      return false;
    }
    // makeNumber marks integral values ("2.0", "1e3") as integers too.
    out = JsonValue::makeNumber(value);
    return true;
  }

  static int hexValue(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool parseHex4(unsigned &value) {
    value = 0;
    for (int i = 0; i < 4; ++i) {
      int digit = hexValue(peek());
      if (atEnd() || digit < 0)
        return fail("invalid \\u escape: expected 4 hex digits");
      value = value * 16 + static_cast<unsigned>(digit);
      ++pos;
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned codePoint) {
    if (codePoint < 0x80) {
      out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
      out += static_cast<char>(0xC0 | (codePoint >> 6));
      out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
      out += static_cast<char>(0xE0 | (codePoint >> 12));
      out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (codePoint >> 18));
      out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // The opening quote.
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail(c == '\n' ? "unterminated string (newline in string)"
                              : "control character in string (escape it)");
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      ++pos;
      char escape = peek();
      if (atEnd())
        return fail("unterminated string");
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
        ++pos;
        break;
      case 'b':
        out += '\b';
        ++pos;
        break;
      case 'f':
        out += '\f';
        ++pos;
        break;
      case 'n':
        out += '\n';
        ++pos;
        break;
      case 'r':
        out += '\r';
        ++pos;
        break;
      case 't':
        out += '\t';
        ++pos;
        break;
      case 'u': {
        ++pos;
        unsigned codePoint = 0;
        if (!parseHex4(codePoint))
          return false;
        if (codePoint >= 0xDC00 && codePoint <= 0xDFFF)
          return fail("invalid \\u escape: unpaired low surrogate");
        if (codePoint >= 0xD800 && codePoint <= 0xDBFF) {
          if (text.substr(pos, 2) != "\\u")
            return fail("invalid \\u escape: unpaired high surrogate");
          pos += 2;
          unsigned low = 0;
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return fail("invalid \\u escape: unpaired high surrogate");
          codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, codePoint);
        break;
      }
      default:
        return fail("invalid escape '\\" + std::string(1, escape) + "'");
      }
    }
  }

  bool parseArray(JsonValue &out, int depth) {
    ++pos; // '['
    JsonValue::Array elements;
    skipWhitespace();
    if (peek() == ']') {
      ++pos;
      out = JsonValue::makeArray(std::move(elements));
      return true;
    }
    while (true) {
      skipWhitespace();
      if (peek() == ']')
        return fail("trailing comma in array");
      JsonValue element;
      if (!parseValue(element, depth + 1))
        return false;
      elements.push_back(std::move(element));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == ']') {
        ++pos;
        out = JsonValue::makeArray(std::move(elements));
        return true;
      }
      return fail("expected ',' or ']' in array, found " + describeNext());
    }
  }

  bool parseObject(JsonValue &out, int depth) {
    ++pos; // '{'
    JsonValue::Object members;
    std::set<std::string> keys;
    skipWhitespace();
    if (peek() == '}') {
      ++pos;
      out = JsonValue::makeObject(std::move(members));
      return true;
    }
    while (true) {
      skipWhitespace();
      if (peek() == '}')
        return fail("trailing comma in object");
      if (peek() != '"')
        return fail("expected a string key in object, found " + describeNext());
      size_t keyPos = pos, keyLineStart = lineStart;
      std::string key;
      if (!parseString(key))
        return false;
      if (!keys.insert(key).second) {
        pos = keyPos;
        lineStart = keyLineStart;
        return fail("duplicate key '" + key + "'");
      }
      skipWhitespace();
      if (peek() != ':')
        return fail("expected ':' after object key, found " + describeNext());
      ++pos;
      skipWhitespace();
      JsonValue value;
      if (!parseValue(value, depth + 1))
        return false;
      members.emplace_back(std::move(key), std::move(value));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == '}') {
        ++pos;
        out = JsonValue::makeObject(std::move(members));
        return true;
      }
      return fail("expected ',' or '}' in object, found " + describeNext());
    }
  }
};

} // namespace

bool attn::runtime::parseJson(std::string_view text, JsonValue &out,
                              std::string &error) {
  JsonValue result;
  JsonParser parser(text, error);
  if (!parser.parseDocument(result))
    return false;
  out = std::move(result);
  return true;
}

//===----------------------------------------------------------------------===//
// JSON writer
//===----------------------------------------------------------------------===//

/// The shortest decimal form of `value` that reads back to the same double.
static std::string formatDouble(double value) {
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    std::ostringstream stream;
    stream.imbue(std::locale::classic());
    stream.precision(precision);
    stream << value;
    text = stream.str();
    std::istringstream back(text);
    back.imbue(std::locale::classic());
    double parsed = 0.0;
    back >> parsed;
    if (!back.fail() && parsed == value)
      break;
  }
  // A double that happens to be integral still prints with a fraction, so
  // that it reads back as a number with a fraction.
  if (text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return text;
}

static void writeString(const std::string &string, std::string &out) {
  out += '"';
  for (char c : string) {
    unsigned char byte = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (byte < 0x20 || byte == 0x7f) {
        char buffer[8];
        std::snprintf(buffer, sizeof(buffer), "\\u%04x", byte);
        out += buffer;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

static void writeCompact(const JsonValue &value, std::string &out) {
  switch (value.getKind()) {
  case JsonValue::Kind::Null:
    out += "null";
    return;
  case JsonValue::Kind::Bool:
    out += value.getBool() ? "true" : "false";
    return;
  case JsonValue::Kind::Number:
    if (!std::isfinite(value.getNumber()))
      out += "null";
    else if (value.isInteger())
      out += std::to_string(value.getInteger());
    else
      out += formatDouble(value.getNumber());
    return;
  case JsonValue::Kind::String:
    writeString(value.getString(), out);
    return;
  case JsonValue::Kind::Array: {
    out += '[';
    bool first = true;
    for (const JsonValue &element : value.getArray()) {
      if (!first)
        out += ", ";
      first = false;
      writeCompact(element, out);
    }
    out += ']';
    return;
  }
  case JsonValue::Kind::Object: {
    out += '{';
    bool first = true;
    for (const JsonValue::Member &member : value.getObject()) {
      if (!first)
        out += ", ";
      first = false;
      writeString(member.first, out);
      out += ": ";
      writeCompact(member.second, out);
    }
    out += '}';
    return;
  }
  }
}

static constexpr size_t kLineWidth = 80;

/// Writes `value`, whose first character lands at column `column`, at
/// nesting `level`.
static void writeIndented(const JsonValue &value, int indent, int level,
                          size_t column, std::string &out) {
  bool isContainer = value.isArray() || value.isObject();
  bool isEmpty = (value.isArray() && value.getArray().empty()) ||
                 (value.isObject() && value.getObject().empty());
  if (!isContainer || isEmpty) {
    writeCompact(value, out);
    return;
  }
  std::string compact;
  writeCompact(value, compact);
  // The trailing ',' after the value counts as one more column.
  if (column + compact.size() + 1 <= kLineWidth) {
    out += compact;
    return;
  }
  std::string inner(static_cast<size_t>(indent) * (level + 1), ' ');
  std::string outer(static_cast<size_t>(indent) * level, ' ');
  if (value.isArray()) {
    out += "[\n";
    const JsonValue::Array &elements = value.getArray();
    for (size_t i = 0; i < elements.size(); ++i) {
      out += inner;
      writeIndented(elements[i], indent, level + 1, inner.size(), out);
      out += i + 1 < elements.size() ? ",\n" : "\n";
    }
    out += outer + "]";
    return;
  }
  out += "{\n";
  const JsonValue::Object &members = value.getObject();
  for (size_t i = 0; i < members.size(); ++i) {
    out += inner;
    size_t keyStart = out.size();
    writeString(members[i].first, out);
    out += ": ";
    writeIndented(members[i].second, indent, level + 1,
                  inner.size() + (out.size() - keyStart), out);
    out += i + 1 < members.size() ? ",\n" : "\n";
  }
  out += outer + "}";
}

std::string attn::runtime::writeJson(const JsonValue &value, int indent) {
  std::string out;
  if (indent <= 0)
    writeCompact(value, out);
  else
    writeIndented(value, indent, 0, 0, out);
  return out;
}

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

bool KernelParam::operator==(const KernelParam &other) const {
  if (kind != other.kind)
    return false;
  if (kind == Kind::MemRef)
    return operand == other.operand && rank == other.rank;
  return name == other.name;
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

unsigned Manifest::getNumParamSlots() const {
  unsigned count = 0;
  for (const KernelParam &param : params)
    count += param.getNumSlots();
  return count;
}

const std::vector<std::string> &attn::runtime::getSizeNames() {
  static const std::vector<std::string> names = {"B",  "Hq", "Hkv", "Tq",
                                                 "Tk", "D",  "Dv"};
  return names;
}

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

/// Formats a shape as "?x32x?x128" (-1 as '?'); "scalar" for rank 0.
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
         lhs.params == rhs.params;
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

static JsonValue nameOrNull(const char *name) {
  return name ? JsonValue::makeString(name) : JsonValue();
}

std::string attn::runtime::serializeManifest(const Manifest &manifest) {
  JsonValue root;
  root.set("format", JsonValue::makeString(Manifest::kFormat));
  root.set("version", JsonValue::makeInteger(Manifest::kVersion));
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

  JsonValue block = JsonValue::makeArray();
  for (unsigned dim : manifest.block)
    block.push(JsonValue::makeInteger(dim));
  root.set("block", std::move(block));
  JsonValue grid = JsonValue::makeArray();
  for (const GridExpr &expr : manifest.grid)
    grid.push(gridExprToJson(expr));
  root.set("grid", std::move(grid));
  root.set("shared_memory_bytes",
           JsonValue::makeInteger(manifest.sharedMemoryBytes));

  JsonValue params = JsonValue::makeArray();
  for (const KernelParam &param : manifest.params) {
    JsonValue entry;
    if (param.kind == KernelParam::Kind::MemRef) {
      entry.set("kind", JsonValue::makeString("memref"));
      entry.set("operand", JsonValue::makeString(param.operand));
      entry.set("rank", JsonValue::makeInteger(param.rank));
    } else {
      entry.set("kind", JsonValue::makeString("size"));
      entry.set("name", JsonValue::makeString(param.name));
    }
    params.push(std::move(entry));
  }
  root.set("params", std::move(params));
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
  std::string temporary =
      path + ".tmp" + std::to_string(static_cast<long>(ATTN_GETPID()));
  FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file) {
    error = temporary + ": cannot create: " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok &= std::fclose(file) == 0;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = path + ": cannot write: " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

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

bool attn::runtime::evaluateGrid(const Manifest &manifest,
                                 const ProblemSizes &sizes, unsigned grid[3],
                                 std::string &error) {
  static const int64_t kLimits[3] = {INT32_MAX, 65535, 65535};
  static const char *const kAxes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    int64_t value;
    std::string exprError;
    if (!evaluateGridExpr(manifest.grid[i], sizes, value, exprError)) {
      error = std::string("grid.") + kAxes[i] + " = " +
              manifest.grid[i].toString() + ": " + exprError + " (" +
              formatSizes(sizes) + ")";
      return false;
    }
    if (value < 1 || value > kLimits[i]) {
      error = std::string("grid.") + kAxes[i] + " = " +
              manifest.grid[i].toString() + " = " + std::to_string(value) +
              " is out of range (1 .. " + std::to_string(kLimits[i]) +
              ") for " + formatSizes(sizes);
      return false;
    }
    grid[i] = static_cast<unsigned>(value);
  }
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

bool attn::runtime::packParams(const Manifest &manifest,
                               const std::map<std::string, TensorArg> &operands,
                               const ProblemSizes &sizes, ParamPack &out,
                               std::string &error) {
  // Every given operand must be passed by some param.
  for (const auto &entry : operands) {
    bool used = false;
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
  // Every operand a param names must be given, well-formed.
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
  for (const KernelParam &param : manifest.params) {
    if (param.kind == KernelParam::Kind::Size) {
      int64_t value = 0;
      sizes.get(param.name, value);
      pack.appendInt64(param.name, value);
      continue;
    }
    const TensorArg &arg = operands.at(param.operand);
    const std::string &name = param.operand;
    pack.appendPointer(name + ".allocated", arg.devicePtr);
    pack.appendPointer(name + ".aligned", arg.devicePtr);
    pack.appendInt64(name + ".offset", arg.offset);
    for (unsigned i = 0; i < param.rank; ++i)
      pack.appendInt64(name + ".sizes[" + std::to_string(i) + "]",
                       arg.sizes[i]);
    for (unsigned i = 0; i < param.rank; ++i)
      pack.appendInt64(name + ".strides[" + std::to_string(i) + "]",
                       arg.strides[i]);
  }
  out = std::move(pack);
  return true;
}

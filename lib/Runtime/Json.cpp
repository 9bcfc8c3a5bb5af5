//===- Json.cpp - A small JSON reader and writer --------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Json.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <locale>
#include <set>
#include <sstream>

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

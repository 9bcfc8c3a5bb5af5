//===- Json.h - A small JSON reader and writer ------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// JsonValue, parseJson and writeJson: a small, self-contained JSON reader and
// writer (RFC 8259; no comments, no trailing commas), with line and column
// numbers in every error. The launch manifest (Manifest.h) is read and
// written with them.
//
// Standard C++17 only (no CUDA, LLVM or MLIR), compatible with
// -fno-exceptions: errors are returned as `false` plus a one-line message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_JSON_H
#define ATTN_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn {
namespace runtime {

/// A JSON value. Objects keep their members in insertion (file) order and
/// never hold two members with the same key. Numbers written without a
/// fraction or exponent that fit in int64_t are kept exactly as integers.
/// Values produced by parseJson remember their line and column (1-based, in
/// bytes) for error messages; values built in code have line 0.
class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Array = std::vector<JsonValue>;
  using Member = std::pair<std::string, JsonValue>;
  using Object = std::vector<Member>;

  /// A null value.
  JsonValue() = default;

  static JsonValue makeNull() { return JsonValue(); }
  static JsonValue makeBool(bool value);
  /// An integer (written without a decimal point).
  static JsonValue makeInteger(int64_t value);
  /// A number. Non-finite numbers cannot be written in JSON: writeJson
  /// writes them as null.
  static JsonValue makeNumber(double value);
  static JsonValue makeString(std::string value);
  static JsonValue makeArray(Array elements = {});
  static JsonValue makeObject(Object members = {});

  Kind getKind() const { return kind; }
  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  /// True for a number that is an exact int64_t (parsed from an integer
  /// literal, or a double with an integral value in range).
  bool isInteger() const { return kind == Kind::Number && integral; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  /// Accessors; each asserts nothing and returns a neutral value (false, 0,
  /// empty) when the kind does not match.
  bool getBool() const { return kind == Kind::Bool && boolValue; }
  double getNumber() const { return kind == Kind::Number ? number : 0.0; }
  int64_t getInteger() const { return isInteger() ? integer : 0; }
  const std::string &getString() const { return string; }
  const Array &getArray() const { return array; }
  Array &getArray() { return array; }
  const Object &getObject() const { return object; }
  Object &getObject() { return object; }

  /// Object member lookup; nullptr when absent or not an object.
  const JsonValue *find(std::string_view key) const;
  /// Sets an object member, replacing one with the same key. Turns a null
  /// value into an empty object first.
  void set(std::string key, JsonValue value);
  /// Appends an array element. Turns a null value into an empty array first.
  void push(JsonValue value);

  /// The position the value was parsed from (0 when built in code).
  int getLine() const { return line; }
  int getColumn() const { return column; }
  void setPosition(int newLine, int newColumn) {
    line = newLine;
    column = newColumn;
  }

  /// Returns "null", "a boolean", "a number", "a string", "an array" or
  /// "an object", for error messages.
  static const char *describeKind(Kind kind);

  /// Structural equality (positions are ignored; numbers compare by value,
  /// objects by members in order).
  bool operator==(const JsonValue &other) const;
  bool operator!=(const JsonValue &other) const { return !(*this == other); }

private:
  Kind kind = Kind::Null;
  bool boolValue = false;
  bool integral = false;
  int64_t integer = 0;
  double number = 0.0;
  std::string string;
  Array array;
  Object object;
  int line = 0;
  int column = 0;
};

/// Parses one JSON document (RFC 8259, UTF-8). Rejects comments, trailing
/// commas, duplicate object keys, unescaped control characters, nesting
/// deeper than 256 and anything but whitespace after the value. On failure
/// returns false and sets `error` to "line L, column C: <what>".
bool parseJson(std::string_view text, JsonValue &out, std::string &error);

/// Writes `value` as JSON. With `indent` > 0, containers are spread over
/// several lines unless their one-line form fits in 80 columns; with
/// `indent` == 0 the whole value is on one line. Numbers are written in the
/// shortest form that reads back to the same double (integers exactly);
/// strings are escaped (control characters as \uXXXX; other UTF-8 bytes are
/// written as they are). No trailing newline.
std::string writeJson(const JsonValue &value, int indent = 2);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_JSON_H

//===- JsonTest.cpp - Tests of the JSON reader and writer -----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// JsonValue, parseJson and writeJson: every kind of value, round trips, the
// writer's one-line and indented forms, and errors with line and column.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Json.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <string>

using namespace attn::runtime;

namespace {

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

JsonValue parseOrDie(const std::string &text) {
  JsonValue value;
  std::string error;
  EXPECT_TRUE(parseJson(text, value, error)) << error << "\n" << text;
  return value;
}

std::string parseError(const std::string &text) {
  JsonValue value;
  std::string error;
  EXPECT_FALSE(parseJson(text, value, error)) << text;
  return error;
}

TEST(JsonTest, ParsesEveryKind) {
  JsonValue value = parseOrDie(
      R"({"n": null, "t": true, "f": false, "i": -42, "d": 0.5,
          "s": "x", "a": [1, [2, {}], []], "o": {"k": "v"}})");
  ASSERT_TRUE(value.isObject());
  EXPECT_TRUE(value.find("n")->isNull());
  EXPECT_TRUE(value.find("t")->getBool());
  EXPECT_TRUE(value.find("f")->isBool());
  EXPECT_FALSE(value.find("f")->getBool());
  EXPECT_TRUE(value.find("i")->isInteger());
  EXPECT_EQ(value.find("i")->getInteger(), -42);
  EXPECT_FALSE(value.find("d")->isInteger());
  EXPECT_EQ(value.find("d")->getNumber(), 0.5);
  EXPECT_EQ(value.find("s")->getString(), "x");
  ASSERT_EQ(value.find("a")->getArray().size(), 3u);
  EXPECT_TRUE(value.find("a")->getArray()[1].getArray()[1].isObject());
  EXPECT_EQ(value.find("o")->find("k")->getString(), "v");
  EXPECT_EQ(value.find("missing"), nullptr);
  // Members keep their file order.
  EXPECT_EQ(value.getObject()[0].first, "n");
  EXPECT_EQ(value.getObject()[7].first, "o");
  // Positions are recorded.
  EXPECT_EQ(value.getLine(), 1);
  EXPECT_EQ(value.getColumn(), 1);
  EXPECT_EQ(value.find("s")->getLine(), 2);
}

TEST(JsonTest, RoundTrip) {
  std::string text = R"({"format": "x", "list": [1, 2.5, -3e-7, "a\"b\\c\n"],
    "nested": {"deep": [[[]]], "empty": {}, "unicode": "\u00e9\ud83d\ude00"},
    "big": 123456789012345678, "min": -9223372036854775808,
    "max": 9223372036854775807, "huge": 1e300, "scale": 0.08838834764831845,
    "third": 0.3333333333333333, "t": true, "n": null})";
  JsonValue value = parseOrDie(text);
  for (int indent : {0, 2, 4}) {
    std::string written = writeJson(value, indent);
    JsonValue back = parseOrDie(written);
    EXPECT_EQ(back, value) << written;
    EXPECT_EQ(writeJson(back, indent), written);
  }
  EXPECT_EQ(value.find("min")->getInteger(), INT64_MIN);
  EXPECT_EQ(value.find("max")->getInteger(), INT64_MAX);
  EXPECT_EQ(value.find("scale")->getNumber(), 0.08838834764831845);
  EXPECT_EQ(value.find("nested")->find("unicode")->getString(),
            "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonTest, WriterForms) {
  JsonValue value;
  value.set("a", JsonValue::makeInteger(1));
  value.set("b", JsonValue::makeNumber(0.1));
  value.set("c", JsonValue::makeString("tab\there \x01"));
  value.set("a", JsonValue::makeInteger(2)); // Replaces.
  JsonValue list;
  list.push(JsonValue::makeNumber(1.0));
  list.push(JsonValue::makeNumber(1e-300));
  list.push(JsonValue::makeNumber(NAN));
  value.set("d", std::move(list));
  EXPECT_EQ(writeJson(value, 0),
            R"({"a": 2, "b": 0.1, "c": "tab\there \u0001", )"
            R"("d": [1, 1e-300, null]})");
  // Containers that do not fit in 80 columns are spread over lines.
  JsonValue wide;
  for (int i = 0; i < 12; ++i)
    wide.set("key" + std::to_string(i), JsonValue::makeInteger(i));
  std::string written = writeJson(wide, 2);
  EXPECT_EQ(written.substr(0, 14), "{\n  \"key0\": 0,");
  EXPECT_EQ(written.back(), '}');
  EXPECT_EQ(parseOrDie(written), wide);
  EXPECT_EQ(writeJson(JsonValue(), 2), "null");
  EXPECT_EQ(writeJson(JsonValue::makeArray(), 2), "[]");
}

TEST(JsonTest, ErrorsHaveLineAndColumn) {
  EXPECT_EQ(parseError(""),
            "line 1, column 1: expected a JSON value, found end of input");
  EXPECT_EQ(parseError("{\n  \"a\": 1,\n}"),
            "line 3, column 1: trailing comma in object");
  EXPECT_EQ(parseError("[1, 2,]"), "line 1, column 7: trailing comma in array");
  EXPECT_EQ(parseError("{\"a\": 1 \"b\": 2}"),
            "line 1, column 9: expected ',' or '}' in object, found "
            "character '\"'");
  EXPECT_EQ(parseError("{\"a\": 1, \"a\": 2}"),
            "line 1, column 10: duplicate key 'a'");
  EXPECT_EQ(parseError("{\"a\" 1}"),
            "line 1, column 6: expected ':' after object key, found "
            "character '1'");
  EXPECT_EQ(parseError("[01]"),
            "line 1, column 3: invalid number: leading zeros are not allowed");
  EXPECT_EQ(parseError("[1.]"),
            "line 1, column 4: invalid number: expected a digit after '.'");
  EXPECT_EQ(parseError("[-]"),
            "line 1, column 3: invalid number: expected a digit after '-'");
  EXPECT_EQ(parseError("1e999"),
            "line 1, column 1: number out of range: 1e999");
  EXPECT_EQ(parseError("\n\n  \"abc"), "line 3, column 7: unterminated string");
  EXPECT_EQ(parseError("\"a\nb\""),
            "line 1, column 3: unterminated string (newline in string)");
  EXPECT_EQ(parseError("\"\\x\""), "line 1, column 3: invalid escape '\\x'");
  EXPECT_EQ(parseError("\"\\ud800\""),
            "line 1, column 8: invalid \\u escape: unpaired high surrogate");
  EXPECT_EQ(parseError("\"\\u12g4\""),
            "line 1, column 6: invalid \\u escape: expected 4 hex digits");
  EXPECT_EQ(parseError("nul"),
            "line 1, column 1: invalid literal (expected true, false or null)");
  EXPECT_EQ(parseError("truex"),
            "line 1, column 5: invalid literal (expected true, false or null)");
  EXPECT_EQ(parseError("{} {}"),
            "line 1, column 4: unexpected character '{' after the JSON value");
  EXPECT_EQ(parseError("// comment\n{}"),
            "line 1, column 1: expected a JSON value, found character '/'");
  EXPECT_EQ(parseError("[\x01]"),
            "line 1, column 2: expected a JSON value, found byte 0x01");
  std::string deep(300, '[');
  EXPECT_EQ(parseError(deep).substr(0, 37),
            "line 1, column 258: nesting deeper th");
}

} // namespace

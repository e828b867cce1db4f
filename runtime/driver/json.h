//===- json.h - A small, strict JSON reader ---------------------*- C++ -*-===//
//
// Just enough JSON for a safetensors header, and strict about it (RFC 8259:
// no comments, trailing commas, leading zeros or duplicate keys): a header
// that a lenient reader would guess at is a corrupt checkpoint.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_JSON_H
#define ZRT_DRIVER_JSON_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zrt {

struct JsonValue {
  enum Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Null;
  bool boolean = false;
  /// A string's decoded UTF-8, or a number's text as written.
  std::string text;
  std::vector<JsonValue> items;
  /// Object members in file order (keys are unique).
  std::vector<std::pair<std::string, JsonValue>> members;

  /// The member named `key` of an object, or null.
  const JsonValue *find(const std::string &key) const;
  /// A number written as a non-negative integer that fits in int64.
  bool asCount(int64_t &out) const;
};

/// Parses `text` as exactly one JSON value with optional whitespace around
/// it. Returns "" or a message with the byte offset of the problem.
std::string parseJson(const std::string &text, JsonValue &out);

/// `text` as a JSON string literal, quotes included.
std::string jsonQuote(const std::string &text);

} // namespace zrt

#endif // ZRT_DRIVER_JSON_H

//===- json.cpp - A small, strict JSON reader -----------------------------===//

#include "driver/json.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace zrt {

const JsonValue *JsonValue::find(const std::string &key) const {
  for (const auto &member : members)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

bool JsonValue::asCount(int64_t &out) const {
  if (kind != Number || text.empty() ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = value;
  return true;
}

namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  std::string parse(JsonValue &out) {
    skipSpace();
    if (!value(out, 0))
      return error;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the JSON value"), error;
    return "";
  }

private:
  // Deep nesting is never valid in a header and would exhaust the stack.
  static constexpr int kMaxDepth = 64;

  bool fail(const std::string &what) {
    if (error.empty())
      error = what + " at byte " + std::to_string(pos);
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool literal(const char *word) {
    std::string w(word);
    if (text.compare(pos, w.size(), w) != 0)
      return fail("invalid JSON value");
    pos += w.size();
    return true;
  }

  bool value(JsonValue &out, int depth) {
    if (depth > kMaxDepth)
      return fail("JSON nested deeper than 64 levels");
    if (pos >= text.size())
      return fail("unexpected end of JSON");
    char c = text[pos];
    if (c == '{')
      return object(out, depth);
    if (c == '[')
      return array(out, depth);
    if (c == '"') {
      out.kind = JsonValue::String;
      return string(out.text);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return number(out);
    if (c == 't' || c == 'f') {
      out.kind = JsonValue::Bool;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out.kind = JsonValue::Null;
      return literal("null");
    }
    return fail("invalid JSON value");
  }

  bool digits() {
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
      ++pos;
    return pos > start || fail("expected a digit");
  }

  bool number(JsonValue &out) {
    size_t start = pos;
    if (text[pos] == '-')
      ++pos;
    if (pos < text.size() && text[pos] == '0' && pos + 1 < text.size() &&
        text[pos + 1] >= '0' && text[pos + 1] <= '9')
      return fail("number with a leading zero");
    if (!digits())
      return false;
    if (pos < text.size() && text[pos] == '.' && (++pos, !digits()))
      return false;
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!digits())
        return false;
    }
    out.kind = JsonValue::Number;
    out.text = text.substr(start, pos - start);
    return true;
  }

  bool hex4(unsigned &code) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      int digit = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
      if (digit < 0)
        return fail("bad \\u escape");
      code = code * 16 + digit;
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += (char)code;
    } else if (code < 0x800) {
      out += (char)(0xc0 | code >> 6);
      out += (char)(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += (char)(0xe0 | code >> 12);
      out += (char)(0x80 | ((code >> 6) & 0x3f));
      out += (char)(0x80 | (code & 0x3f));
    } else {
      out += (char)(0xf0 | code >> 18);
      out += (char)(0x80 | ((code >> 12) & 0x3f));
      out += (char)(0x80 | ((code >> 6) & 0x3f));
      out += (char)(0x80 | (code & 0x3f));
    }
  }

  bool escape(std::string &out) {
    if (pos >= text.size())
      return fail("unterminated string");
    char c = text[pos++];
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    for (int i = 0; from[i]; ++i)
      if (c == from[i])
        return out += to[i], true;
    if (c != 'u')
      return --pos, fail("bad escape in a string");
    unsigned code;
    if (!hex4(code))
      return false;
    if (code >= 0xd800 && code < 0xdc00) {
      unsigned low;
      if (text.compare(pos, 2, "\\u") != 0 || (pos += 2, !hex4(low)) ||
          low < 0xdc00 || low >= 0xe000)
        return fail("unpaired surrogate in a string");
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    } else if (code >= 0xdc00 && code < 0xe000) {
      return fail("unpaired surrogate in a string");
    }
    appendUtf8(out, code);
    return true;
  }

  bool string(std::string &out) {
    ++pos; // the opening quote
    out.clear();
    while (pos < text.size()) {
      unsigned char c = text[pos];
      if (c == '"')
        return ++pos, true;
      if (c < 0x20)
        return fail("control character in a string");
      ++pos;
      if (c != '\\')
        out += (char)c;
      else if (!escape(out))
        return false;
    }
    return fail("unterminated string");
  }

  bool array(JsonValue &out, int depth) {
    out.kind = JsonValue::Array;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == ']')
      return ++pos, true;
    while (true) {
      out.items.emplace_back();
      skipSpace();
      if (!value(out.items.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']')
        return ++pos, true;
      return fail("expected ',' or ']'");
    }
  }

  bool object(JsonValue &out, int depth) {
    out.kind = JsonValue::Object;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == '}')
      return ++pos, true;
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key");
      size_t keyPos = pos;
      std::string key;
      if (!string(key))
        return false;
      if (out.find(key))
        return pos = keyPos, fail("duplicate key \"" + key + "\"");
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':'");
      ++pos;
      skipSpace();
      out.members.emplace_back(key, JsonValue());
      if (!value(out.members.back().second, depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}')
        return ++pos, true;
      return fail("expected ',' or '}'");
    }
  }

  const std::string &text;
  size_t pos = 0;
  std::string error;
};

} // namespace

std::string parseJson(const std::string &text, JsonValue &out) {
  out = JsonValue();
  return Parser(text).parse(out);
}

std::string jsonQuote(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += (char)c;
    }
  }
  return out + "\"";
}

} // namespace zrt

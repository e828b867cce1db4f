//===- NestingDepth.h - refuse input nested too deep to parse ---*- C++ -*-===//
//
// MLIR's parser recurses once per nested region, attribute or type and
// overflows the stack on pathological input (about 20,000 levels); zero-opt's
// models nest a few levels. zero-opt and the mlir fuzzer refuse deeper input
// with a message before parsing it.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_TOOLS_ZERO_OPT_NESTINGDEPTH_H
#define ZERO_TOOLS_ZERO_OPT_NESTINGDEPTH_H

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <optional>

namespace zero {

/// The deepest nesting of brackets zero-opt parses.
inline constexpr int kMaxNestingDepth = 1000;

/// The line (1-based) on which `text` first nests its brackets (the `<>` of
/// types and attributes too) deeper than kMaxNestingDepth levels, outside
/// strings and comments; nullopt when it never does.
inline std::optional<int> findTooDeepNesting(llvm::StringRef text) {
  int depth = 0, line = 1;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n')
      ++line;
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/')
      i = std::min(text.find('\n', i), text.size()) - 1;
    else if (c == '-' && i + 1 < text.size() && text[i + 1] == '>')
      ++i; // The arrow of a function type closes nothing.
    else if (c == '{' || c == '(' || c == '[' || c == '<')
      ++depth;
    // Unbalanced closers cannot buy depth for what follows.
    else if ((c == '}' || c == ')' || c == ']' || c == '>') && depth > 0)
      --depth;
    if (depth > kMaxNestingDepth)
      return line;
  }
  return std::nullopt;
}

} // namespace zero

#endif // ZERO_TOOLS_ZERO_OPT_NESTINGDEPTH_H

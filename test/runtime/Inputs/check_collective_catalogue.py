#!/usr/bin/env python3
"""Checks the collectives catalogue (include/zero/zrt_collectives.def).

Each line is

    ZRT_COLLECTIVE(KIND, name, RuntimeName, shape, elements, traffic,
                   (parameters), (start arguments))

and runtime/abi/collectives.cpp passes the start arguments to the one start
of every collective, (ctx, group, dtype, input, output, numel, shard_numel,
label). The compiler checks their types only loosely (a void * output may
stand for the input, numel for shard_numel), so this checks that the line
agrees with itself: the three names spell one collective, every parameter
reaches the start, the buffers and sizes sit where the shape says, and the
traffic formula reads only zrt_traffic_elements' parameters.

    check_collective_catalogue.py DEF [--exports NM_OUTPUT]

With --exports (the output of `nm -D --defined-only libzrt.so`), also that
libzrt exports both entry points of every line, and no collective's
zrt_*_start that the catalogue lacks. Prints one line per problem and exits
1; prints "ok: N collectives" otherwise.

    check_collective_catalogue.py DEF --c-program

prints a C program that prints, per line, its zrt_collective value and its
traffic for numel 10 in shards of 3 over 4 ranks, and takes the address of
both entry points (so it links only against a libzrt that has them).
"""

import re
import sys

SHAPES = {"Gather", "Scatter", "Whole"}
ELEMENTS = {"Sums", "Moves"}
TRAFFIC_NAMES = {"numel", "shard_numel", "group_size"}
# The start's slots: (what they are, the C type the parameter must have).
START_SLOTS = [
    ("ctx", "zrt_context *"),
    ("group", "int32_t"),
    ("dtype", "int32_t"),
    ("input", "const void *"),
    ("output", "void *"),
    ("numel", "int64_t"),
    ("shard_numel", "int64_t"),
    ("label", "const char *"),
]


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def entries(text):
    """Yields the argument text of every ZRT_COLLECTIVE(...) use."""
    for match in re.finditer(r"^\s*ZRT_COLLECTIVE\(", text, flags=re.M):
        depth, i = 1, match.end()
        while depth:
            if i == len(text):
                raise ValueError("unbalanced parentheses in a ZRT_COLLECTIVE line")
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text[match.end() : i - 1]


def split_top_level(text):
    """Splits at the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for c in text:
        if c == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        current += c
    parts.append(current.strip())
    return parts


def unparenthesize(text):
    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(f"expected a parenthesized list, got {text!r}")
    return text[1:-1]


def parameter(text):
    """('const void *', 'x') from 'const void *x'."""
    match = re.fullmatch(r"(.*?)\s*([A-Za-z_]\w*)", " ".join(text.split()))
    if not match:
        raise ValueError(f"a parameter without a name: {text!r}")
    kind = match.group(1).replace(" *", "*").replace("*", " *")
    return kind.strip(), match.group(2)


def camel(name):
    return "".join(word.capitalize() for word in name.split("_"))


def check_line(fields):
    """The problems of one line (a list of strings)."""
    kind, name, runtime_name, shape, elements, traffic, params, args = fields
    problems = []
    if kind != name.upper():
        problems.append(f"KIND {kind} is not {name.upper()}, its name's")
    if runtime_name != camel(name):
        problems.append(f"RuntimeName {runtime_name} is not {camel(name)}, its name's")
    if shape not in SHAPES:
        problems.append(f"shape {shape} is none of {', '.join(sorted(SHAPES))}")
    if elements not in ELEMENTS:
        problems.append(f"elements {elements} is none of {', '.join(sorted(ELEMENTS))}")
    unknown = set(re.findall(r"[A-Za-z_]\w*", traffic)) - TRAFFIC_NAMES
    if unknown or re.search(r"[^\w\s+*/()-]", traffic):
        problems.append(
            f"the traffic {traffic!r} is not an expression in"
            f" {', '.join(sorted(TRAFFIC_NAMES))}"
        )
    declared = dict(
        (n, t) for t, n in map(parameter, split_top_level(unparenthesize(params)))
    )
    passed = split_top_level(unparenthesize(args))
    if len(passed) != len(START_SLOTS):
        problems.append(
            f"the start arguments ({', '.join(passed)}) are not"
            f" {len(START_SLOTS)}: ({', '.join(s for s, _ in START_SLOTS)})"
        )
        return problems
    for (slot, wanted), arg in zip(START_SLOTS, passed):
        if arg not in declared:
            problems.append(f"the start argument {slot} is {arg}, not a parameter")
        elif declared[arg] != wanted:
            problems.append(
                f"the start argument {slot} is {arg}, a {declared[arg]}, not a {wanted}"
            )
    unused = [n for n in declared if n not in passed]
    if unused:
        problems.append(f"parameters not passed to the start: {', '.join(unused)}")
    numel, shard = passed[5], passed[6]
    if shape == "Whole" and numel != shard:
        problems.append(
            f"a Whole collective's numel and shard_numel are one size, got {numel} and {shard}"
        )
    if shape in ("Gather", "Scatter") and numel == shard:
        problems.append(
            f"a {shape} collective's numel and shard_numel are two sizes, got {numel} twice"
        )
    return problems


def read(path):
    lines, problems = [], []
    for entry in entries(strip_comments(open(path).read())):
        fields = split_top_level(entry)
        if len(fields) != 8:
            problems.append(
                f"ZRT_COLLECTIVE({fields[0]}): expected 8 fields (KIND, name,"
                f" RuntimeName, shape, elements, traffic, (parameters),"
                f" (start arguments)), got {len(fields)}"
            )
            continue
        lines.append(fields)
        problems += [f"ZRT_COLLECTIVE({fields[0]}): {p}" for p in check_line(fields)]
    names = [fields[1] for fields in lines]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{name} has {names.count(name)} lines")
    return lines, problems


def check_exports(lines, nm_output):
    exported = {
        line.split()[-1]
        for line in open(nm_output)
        if line.split() and line.split()[-1].startswith("zrt_")
    }
    problems = []
    for fields in lines:
        name = fields[1]
        missing = [s for s in (f"zrt_{name}", f"zrt_{name}_start") if s not in exported]
        if missing:
            problems.append(f"ZRT_COLLECTIVE({fields[0]}): libzrt does not export {', '.join(missing)}")
    starts = {f"zrt_{fields[1]}_start" for fields in lines}
    for symbol in sorted(exported):
        if symbol.endswith("_start") and symbol not in starts:
            problems.append(f"libzrt exports {symbol}, which the catalogue lacks")
    return problems


def c_program(lines):
    # Through a volatile table, so that the compiler neither folds the
    # addresses away nor warns that they are never null.
    out = ['#include "zero/zrt.h"', "#include <stdio.h>", "", "typedef void (*entry_point)(void);"]
    out.append("static const volatile entry_point entry_points[] = {")
    for fields in lines:
        name = fields[1]
        out.append(f"    (entry_point)zrt_{name}, (entry_point)zrt_{name}_start,")
    out += ["};", "", "int main(void) {"]
    for i, fields in enumerate(lines):
        kind = fields[0]
        out.append(
            f'  printf("ZRT_{kind} %d traffic %lld entry points %d\\n", (int)ZRT_{kind},'
            f" (long long)zrt_traffic_elements(ZRT_{kind}, 10, 3, 4),"
            f" entry_points[{2 * i}] != 0 && entry_points[{2 * i + 1}] != 0);"
        )
    out += ['  printf("ZRT_NUM_COLLECTIVES %d\\n", (int)ZRT_NUM_COLLECTIVES);', "  return 0;", "}"]
    return "\n".join(out)


def main(argv):
    path = argv[1]
    lines, problems = read(path)
    if "--c-program" in argv:
        print(c_program(lines))
        return 0
    if "--exports" in argv:
        problems += check_exports(lines, argv[argv.index("--exports") + 1])
    for problem in problems:
        print(f"error: {path}: {problem}")
    if problems:
        return 1
    print(f"ok: {len(lines)} collectives")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Checks the argument-name lists of the kernel catalogue.

Each line of include/zero/zrt_kernels.def is

    ZRT_KERNEL(name, backendName, (parameters), (argument names))

and runtime/abi/kernels.cpp forwards the parameters by the names of the last
list. A list that swaps two parameters of one type still compiles, so this
checks that every names list is the names of its parameter list, in order.
Prints one line per kernel that differs and exits 1; prints "ok: N kernels"
otherwise.
"""

import re
import sys


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def entries(text):
    """Yields the argument text of every ZRT_KERNEL(...) use."""
    for match in re.finditer(r"^\s*ZRT_KERNEL\(", text, flags=re.M):
        depth, start = 1, match.end()
        i = start
        while depth:
            if i == len(text):
                raise ValueError("unbalanced parentheses in a ZRT_KERNEL line")
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text[start : i - 1]


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


def parameter_name(parameter):
    """The declared name: the last identifier of `int64_t n`, `const void *x`."""
    names = re.findall(r"[A-Za-z_]\w*", parameter)
    if not names:
        raise ValueError(f"a parameter without a name: {parameter!r}")
    return names[-1]


def main(path):
    problems, count = [], 0
    for entry in entries(strip_comments(open(path).read())):
        fields = split_top_level(entry)
        if len(fields) != 4:
            problems.append(
                f"ZRT_KERNEL({fields[0]}): expected 4 fields (name, backendName,"
                f" (parameters), (argument names)), got {len(fields)}"
            )
            continue
        name, _, params, args = fields
        count += 1
        declared = [parameter_name(p) for p in split_top_level(unparenthesize(params))]
        forwarded = split_top_level(unparenthesize(args))
        if declared != forwarded:
            problems.append(
                f"ZRT_KERNEL({name}): the argument names ({', '.join(forwarded)})"
                f" are not the parameters' ({', '.join(declared)})"
            )
    for problem in problems:
        print(f"error: {path}: {problem}")
    if problems:
        return 1
    print(f"ok: {count} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/env bash
# Checks that every line of C, C++ and CUDA changed since a base commit is
# clang-formatted (.clang-format: LLVM style). Only changed lines: the tree
# was not formatted as a whole, and a reformat of untouched code would bury
# the history. scripts/test.sh (so CI) runs it; run it before committing.
#
#   scripts/check-format.sh [BASE]    # default: the commit in .ci/format-base
#   git clang-format BASE             # formats those lines in place
#
# Move .ci/format-base forward when you like (to a commit whose changed
# lines passed); a clone without that commit (a shallow one) checks the last
# commit's lines instead.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(tr -d '[:space:]' < .ci/format-base)}
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check-format: base $base is not in this clone; checking the last commit"
  base=HEAD~1
  git cat-file -e "$base^{commit}" 2>/dev/null ||
    { echo "check-format: no history to compare with; skipped"; exit 0; }
fi
command -v git-clang-format >/dev/null ||
  { echo "check-format: git-clang-format is missing (scripts/install-deps.sh installs clang-format)"; exit 1; }
# The tracked files that changed, with the extensions clang-format reads.
diff=$(git clang-format --diff --extensions c,h,cpp,cc,cu,cuh "$base" -- \
         include lib passes dialects tools runtime fuzz bench 2>&1 || true)
if [[ -z $diff || $diff == *"no modified files to format"* ||
      $diff == *"clang-format did not modify any files"* ]]; then
  echo "check-format: the lines changed since ${base:0:12} are formatted"
  exit 0
fi
echo "$diff"
echo "check-format: the lines above, changed since ${base:0:12}, are not clang-formatted;" \
     "run: git clang-format ${base:0:12}"
exit 1

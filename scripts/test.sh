#!/usr/bin/env bash
# Installs, builds and runs every test: lit + FileCheck tests of the dialects
# and passes, the runtime's kernel and collective checks, and end-to-end
# mpirun jobs across ZeRO stages and world sizes; then the kernels under
# sanitizers and the formatting of the changed lines.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
set +e
ninja -C "$BUILD_DIR" check-zero 2>&1 | tee "$BUILD_DIR/check-zero.log"
status=${PIPESTATUS[0]}
# The kernel checks again, under AddressSanitizer + UBSan (a runtime-only
# build in build-sanitize/).
scripts/sanitize.sh 2>&1 | tee "$BUILD_DIR/sanitize.log"
sanitize_status=${PIPESTATUS[0]}
# The C/C++/CUDA lines changed since .ci/format-base, clang-formatted.
scripts/check-format.sh
format_status=$?
set -e
# One closing line that any CI reads: lit's own summary, restated.
count() {
  local n
  n=$(grep -oP "^\s*$1\s*:\s*\K[0-9]+" "$BUILD_DIR/check-zero.log" | tail -1)
  echo "${n:-0}"
}
failed=$(( $(count Failed) + $(count "Unexpectedly Passed") + $(count Timed\ Out) ))
if [[ $status -ne 0 && $failed -eq 0 ]]; then failed=1; fi # the build itself failed
if [[ $sanitize_status -ne 0 ]]; then
  echo "sanitize: FAILED (see above)"
  failed=$((failed + 1))
  [[ $status -ne 0 ]] || status=$sanitize_status
fi
if [[ $format_status -ne 0 ]]; then
  echo "check-format: FAILED (see above)"
  failed=$((failed + 1))
  [[ $status -ne 0 ]] || status=$format_status
fi
echo "check-zero: $(count Passed) passed, $failed failed, $(count Unsupported) skipped"
exit "$status"

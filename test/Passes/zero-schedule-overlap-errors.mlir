// RUN: not zero-opt %s --zero-schedule-overlap=max-inflight-reductions=0 2>&1 | FileCheck %s
// CHECK: zero-schedule-overlap: prefetch and max-live-gather-bytes must not be negative and max-inflight-reductions must be at least 1
module {
}

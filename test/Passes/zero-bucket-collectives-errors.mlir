// RUN: not zero-opt %s --zero-bucket-collectives=bucket-bytes=-1 2>&1 | FileCheck %s
// CHECK: zero-bucket-collectives: bucket-bytes must not be negative, got -1
module {
}

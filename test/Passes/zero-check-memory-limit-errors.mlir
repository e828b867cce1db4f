// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-check-memory-limit=limit=80GiB
// RUN: not zero-opt %s --split-input-file --zero-check-memory-limit=limit=80GiBs 2>&1 | FileCheck %s --check-prefix=UNIT
// RUN: not zero-opt %s --split-input-file --zero-check-memory-limit 2>&1 | FileCheck %s --check-prefix=EMPTY
// UNIT: zero-check-memory-limit: limit='80GiBs' is not a byte count (like 80GiB, 40GB, 1.5e9)
// EMPTY: zero-check-memory-limit: limit='' is not a byte count

// expected-error @+1 {{zero-check-memory-limit: expected the zrt program (run zero-lower-to-zrt first)}}
module {
  func.func @train_step() {
    return
  }
}

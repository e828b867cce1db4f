// RUN: not zero-opt %s --zero-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not zero-opt %s --zero-plan-memory 2>&1 | FileCheck %s --check-prefix=INPUT

// ALIGN: error: zero-plan-memory: alignment must be a power of two, got 48
// INPUT: error: zero-plan-memory: expected the zrt program (run zero-lower-to-zrt first)
module {
}

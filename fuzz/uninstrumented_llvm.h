//===- uninstrumented_llvm.h - LLVM's headers, Debian's libMLIR -*- C++ -*-===//
//
// Included first into every file of the mlir fuzz target (-include). Built
// with AddressSanitizer, LLVM's headers poison the memory of their bump
// allocators and recyclers (llvm/Support/Compiler.h's
// LLVM_ADDRESS_SANITIZER_BUILD) and unpoison each allocation from it,
// assuming LLVM itself is instrumented alike. Debian's libMLIR.so is not: a
// slab that code inlined into our files poisoned, libMLIR hands out without
// unpoisoning, and our next read of a type or attribute stored there is
// reported as a use-after-poison that is none. The poisoning is off here;
// our own heap is still checked.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_FUZZ_UNINSTRUMENTED_LLVM_H
#define ZERO_FUZZ_UNINSTRUMENTED_LLVM_H

// Declared first, so that Compiler.h's include of it is empty and the
// declarations are not hit by the macros below.
#include <sanitizer/asan_interface.h>

#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))

#endif // ZERO_FUZZ_UNINSTRUMENTED_LLVM_H

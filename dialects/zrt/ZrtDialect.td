//===- ZrtDialect.td - the zrt runtime dialect -------------*- tablegen -*-===//
#ifndef ZERO_ZRT_DIALECT
#define ZERO_ZRT_DIALECT

include "mlir/IR/OpBase.td"

def Zrt_Dialect : Dialect {
  let name = "zrt";
  let cppNamespace = "::zero::zrt";
  let summary = "The program as libzrt will run it: buffers and runtime calls";
  let description = [{
    The `zrt` dialect is the typed boundary between the compiler and the
    runtime. Each op is one entry point of the C ABI in
    `include/zero/zrt.h` (`zrt.matmul` is `zrt_matmul`), on buffers: a
    tensor of the `nn`/`zero` program becomes a `memref` with the same shape
    and element type, held in memory the program allocated (`zrt.alloc`, with
    its ledger category) or in an argument the runtime owns. Element types,
    element counts and matrix sizes are read from the buffers' types, so an
    op holds only what its types cannot say (a transpose flag, an epsilon, a
    byte offset).

    `zero-lower-to-zrt` produces it; `zero-plan-memory` places every
    `zrt.alloc` in its category's arena and `zero-report` replays the
    allocations and collectives, both through the ops' accessors;
    `zero-lower-zrt-to-calls` turns each op into the `func.call` of its
    `zrt_*` function, mechanically.

    ```mlir
    func.func @zero_program_step(%x: memref<4x3xf32>, %w: memref<8xf32>,
                                 %loss: memref<f32> {zrt.loss}) {
      %full = zrt.alloc comm : memref<3x5xf32>
      zrt.all_gather %w -> %full : memref<8xf32> -> memref<3x5xf32>
      %h = zrt.alloc activation : memref<4x5xf32>
      zrt.matmul %x, %full -> %h : memref<4x3xf32>, memref<3x5xf32> -> memref<4x5xf32>
      zrt.free %full : memref<3x5xf32>
      ...
    }
    ```
  }];
  let useDefaultTypePrinterParser = 1;
}

#endif // ZERO_ZRT_DIALECT

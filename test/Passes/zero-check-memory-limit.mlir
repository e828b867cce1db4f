// The program of zero-report.mlir (one 3x5 weight at stage 3 over 2 ranks)
// predicts a peak of 316 bytes per rank. A limit at the peak or above passes
// and leaves the IR as it was; one byte less is refused, naming the peak,
// the limit, the largest category and every category's peak.
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-clip-grad-norm --zero-lower-to-zrt -o %t.zrt.mlir
// RUN: zero-opt %t.zrt.mlir --zero-check-memory-limit=limit=316 | FileCheck %s --check-prefix=FITS
// RUN: zero-opt %t.zrt.mlir --zero-check-memory-limit=limit=1KiB | FileCheck %s --check-prefix=FITS
// RUN: not zero-opt %t.zrt.mlir --zero-check-memory-limit=limit=315 2>&1 | FileCheck %s --check-prefix=OVER
// RUN: not zero-opt %t.zrt.mlir --zero-check-memory-limit=limit=0.2KB 2>&1 | FileCheck %s --check-prefix=UNIT

// With the optimizer offloaded, the host holds 156 bytes a rank (the
// moments, 64, and the staging of the copies, 92), which the device's peak
// leaves out; host-limit holds them to a limit of their own, alone or with
// the device's.
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-clip-grad-norm --zero-offload-optimizer --zero-lower-to-zrt -o %t.host.mlir
// RUN: zero-opt %t.host.mlir --zero-check-memory-limit=host-limit=156 | FileCheck %s --check-prefix=FITS
// RUN: zero-opt %t.host.mlir --zero-check-memory-limit="limit=1KiB host-limit=1KiB" | FileCheck %s --check-prefix=FITS
// RUN: not zero-opt %t.host.mlir --zero-check-memory-limit=host-limit=155 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not zero-opt %t.host.mlir --zero-check-memory-limit="limit=1KiB host-limit=0.1KB" 2>&1 | FileCheck %s --check-prefix=HOST-UNIT
// RUN: not zero-opt %t.host.mlir --zero-check-memory-limit=host-limit=lots 2>&1 | FileCheck %s --check-prefix=HOST-BAD

// FITS-LABEL: func.func @zero_program_describe
// FITS: zrt.declare_program world_size 2 stage 3
// FITS-LABEL: func.func @zero_program_step

// OVER: memory-limit=315:0:0: error: predicted peak memory per rank is 316 bytes, over the memory limit of 315 bytes by 1; the largest category is comm (124 bytes; peaks: param 32 grad 92 optimizer 64 activation 88 comm 124 data 60) at ZeRO stage 3 on 2 rank(s)

// UNIT: error: predicted peak memory per rank is 316 bytes, over the memory limit of 200 bytes by 116;

// HOST: host-memory-limit=155:0:0: error: predicted peak host memory per rank is 156 bytes, over the host memory limit of 155 bytes by 1 (peaks: host_optimizer 64 host_staging 92) at ZeRO stage 3 on 2 rank(s)
// HOST-UNIT: error: predicted peak host memory per rank is 156 bytes, over the host memory limit of 100 bytes by 56
// HOST-BAD: error: zero-check-memory-limit: host-limit='lots' is not a byte count (like 512GiB, 1.5e11)

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

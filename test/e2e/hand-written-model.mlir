// A model written by hand (not --model=mlp): one gelu hidden layer with a
// residual block (nn.add), widths 7 and 11 that divide by neither 2 nor 3.
// Compiled from this file at stage 3 on 2 ranks (and stage 1 on 3, stage 2 on
// 4), it trains exactly as at stage 0 on one rank: the 20 losses agree within
// 1e-5 relative and fall.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/zero_e2e.py agree --out %t --mpirun "%mpirun" \
// RUN:     --combos 3:2,1:3,2:4 --lr 0.02 -- %s \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// CHECK: reference stage 0 world size 1: 20 steps
// CHECK-NEXT: stage 3 world size 2: 20 steps agree
// CHECK-NEXT: stage 1 world size 3: 20 steps agree
// CHECK-NEXT: stage 2 world size 4: 20 steps agree
// CHECK-NEXT: summary: 3 of 3 combinations agree with stage 0 at world size 1 over 20 steps

// The program reports the model's shape as this file declares it.
// RUN: %t/prog-s3-w2 --help > /dev/null
// RUN: %mpirun 2 %t/prog-s3-w2 --steps=1 | FileCheck %s --check-prefix=HEADER
// HEADER: program: ZeRO stage 3, world size 2, global batch 12, 7 features, 5 classes

func.func @forward(%x: tensor<12x7xf32>, %labels: tensor<12xi32>,
                   %w0: tensor<7x11xf32> {nn.param = "in.weight"},
                   %b0: tensor<11xf32> {nn.param = "in.bias"},
                   %w1: tensor<11x11xf32> {nn.param = "block.weight"},
                   %b1: tensor<11xf32> {nn.param = "block.bias"},
                   %w2: tensor<11x5xf32> {nn.param = "out.weight"},
                   %b2: tensor<5xf32> {nn.param = "out.bias"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<12x7xf32>, tensor<7x11xf32> -> tensor<12x11xf32>
  %1 = nn.bias_add %0, %b0 : tensor<12x11xf32>, tensor<11xf32>
  %h = nn.gelu %1 : tensor<12x11xf32>
  %2 = nn.matmul %h, %w1 : tensor<12x11xf32>, tensor<11x11xf32> -> tensor<12x11xf32>
  %3 = nn.bias_add %2, %b1 : tensor<12x11xf32>, tensor<11xf32>
  %4 = nn.gelu %3 : tensor<12x11xf32>
  %r = nn.add %h, %4 : tensor<12x11xf32>
  %5 = nn.matmul %r, %w2 : tensor<12x11xf32>, tensor<11x5xf32> -> tensor<12x5xf32>
  %6 = nn.bias_add %5, %b2 : tensor<12x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %6, %labels : tensor<12x5xf32>, tensor<12xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

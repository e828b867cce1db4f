// RUN: zero-opt %s --nn-autodiff --zero-adamw --nn-fuse-epilogues --zero-placement=stage=0 --zero-insert-collectives --zero-lower-to-zrt --zero-lower-zrt-to-calls --canonicalize | FileCheck %s

// Already split for 1 rank: the group zero-split-batch would declare.
zero.group @dp world_size(1)

// A fused linear layer is one zrt_matmul_bias call: (ctx, dtype, a, b,
// bias, c, pre_activation, m, n, k, trans_a, trans_b, epilogue). With GELU
// (epilogue 1) it writes two activations, the pre-activation that GELU's
// gradient reads later and the result; the bias-only layer (epilogue 0)
// passes a null pre-activation.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[ARGS:.*]]: !llvm.ptr,
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-DAG: %[[X:.*]] = llvm.load %[[ARGS]]
// CHECK: %[[PRE:.*]] = call @zrt_alloc(%[[CTX]], %c128_i64, %c3_i32)
// CHECK-NEXT: %[[G:.*]] = call @zrt_alloc(%[[CTX]], %c128_i64, %c3_i32)
// CHECK-NEXT: call @zrt_matmul_bias(%[[CTX]], %c0_i32, %[[X]], %[[W1:[^,]*]], %[[B1:[^,]*]], %[[G]], %[[PRE]], %c4_i64, %c8_i64, %c3_i64, %c0_i32, %c0_i32, %c1_i32)
// CHECK-NEXT: %[[Y:.*]] = call @zrt_alloc(%[[CTX]], %c80_i64, %c3_i32)
// CHECK-NEXT: call @zrt_matmul_bias(%[[CTX]], %c0_i32, %[[G]], %{{.*}}, %{{.*}}, %[[Y]], %[[NULL]], %c4_i64, %c5_i64, %c8_i64, %c0_i32, %c0_i32, %c0_i32)
// CHECK-NOT: call @zrt_bias_add
// CHECK-NOT: call @zrt_gelu(
// CHECK: call @zrt_gelu_grad(%[[CTX]], %c0_i32, %[[PRE]],
// CHECK: return

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w1: tensor<3x8xf32> {nn.param = "fc1.weight"}, %b1: tensor<8xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<8x5xf32> {nn.param = "fc2.weight"}, %b2: tensor<5xf32> {nn.param = "fc2.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w1 : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  %z = nn.bias_add %h, %b1 : tensor<4x8xf32>, tensor<8xf32>
  %g = nn.gelu %z : tensor<4x8xf32>
  %o = nn.matmul %g, %w2 : tensor<4x8xf32>, tensor<8x5xf32> -> tensor<4x5xf32>
  %y = nn.bias_add %o, %b2 : tensor<4x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

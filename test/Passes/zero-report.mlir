// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-clip-grad-norm --zero-lower-to-zrt --zero-report -o /dev/null | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-clip-grad-norm --zero-lower-to-zrt --zero-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON

// One 3x5 weight (15 floats) at stage 3 over 2 ranks: 8-element shards.
// param: its 8-float shard (32 B); optimizer: two moment shards (64 B);
// comm: the gathered 15 floats (60 B) while the 16-float padded copy is
// staged (64 B); grad: the 15-float whole gradient plus its 8-float shard.
// Traffic: one gather (forward only: no gradient flows to the data) and one
// reduce-scatter of the padded 16 floats; the loss and the squared norm are
// all-reduced (2 x 2 x 4 B).
// CHECK: zero-opt report: ZeRO stage 3, world size 2, 1 micro-batch(es) per step, Psi = 15 parameters of 4 bytes
// CHECK: param{{ +}}32
// CHECK-NEXT: grad{{ +}}92
// CHECK-NEXT: optimizer{{ +}}64
// CHECK: comm{{ +}}124
// CHECK: model states (param + grad + optimizer) 188; ZeRO formula 16 Psi/N = 120
// No attention here: the CUDA backend's workspace is its GEMM workspace.
// CHECK: runtime workspace on the CUDA backend
// CHECK-NEXT: gemm{{ +}}33554432
// CHECK-NEXT: attention statistics{{ +}}0
// CHECK: all_gather{{ +}}64{{ +}}1
// CHECK-NEXT: reduce_scatter{{ +}}64{{ +}}1
// CHECK-NEXT: all_reduce{{ +}}16{{ +}}2

// JSON: "stage": 3
// JSON: "traffic_bytes_per_step": {
// JSON-NEXT: "all_gather": 64,

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// --check-finite names the first parameter whose gradient is not finite.
// Here the first parameter is drawn huge (normal, scale 1e19): its own
// gradient stays finite, but the hidden activations it makes give the second
// parameter a gradient whose squares overflow float32. The step stops at
// step 1 naming out.weight, not in.weight, at every stage and world size (at
// stage 2 and 3 each rank sees only its shard of the gradient, and the ranks
// agree on the first).
// RUN: rm -rf %t && mkdir -p %t
// RUN: zero-opt %s --stage=0 --world-size=1 -o %t/s0
// RUN: not %t/s0 --steps=3 --check-finite 2>&1 | FileCheck %s
// RUN: zero-opt %s --stage=3 --world-size=2 -o %t/s3
// RUN: not %mpirun 2 %t/s3 --steps=3 --check-finite 2>&1 | FileCheck %s
// RUN: zero-opt %s --stage=2 --world-size=3 -o %t/s2
// RUN: not %mpirun 3 %t/s2 --steps=3 --check-finite 2>&1 | FileCheck %s
// mpirun forwards each rank's stdout and stderr apart, so the error may
// come out before the step's line: their order is not checked.
// CHECK-DAG: step 1 loss
// CHECK-DAG: error: step 1: the gradient norm is infinite (loss {{.*}}); the first parameter whose gradient is not finite: out.weight; training stopped
// CHECK-NOT: step 2 loss

// Without the flag the message says how to find it.
// RUN: not %t/s0 --steps=3 2>&1 | FileCheck %s --check-prefix=HINT
// HINT: error: step 1: the gradient norm is infinite {{.*}}; --check-finite names the first parameter whose gradient is not finite)

// The compiled program shows each gradient's squared norm to the runtime,
// by name, in the order the flag searches.
// RUN: zero-opt %s --stage=3 --world-size=2 --stop-at-zrt | FileCheck %s --check-prefix=ZRT
// ZRT: zrt.sum_squares %{{.*}} -> %[[IN:.*]] :
// ZRT-NEXT: zrt.watch_gradient %[[IN]] of "in.weight" : memref<f32>
// ZRT: zrt.sum_squares %{{.*}} -> %[[OUT:.*]] :
// ZRT-NEXT: zrt.watch_gradient %[[OUT]] of "out.weight" : memref<f32>

func.func @forward(%x: tensor<12x7xf32>, %labels: tensor<12xi32>,
                   %w0: tensor<7x11xf32> {nn.param = "in.weight", nn.init = "normal", nn.init_scale = 1.0e19 : f32},
                   %w1: tensor<11x5xf32> {nn.param = "out.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w0 : tensor<12x7xf32>, tensor<7x11xf32> -> tensor<12x11xf32>
  %y = nn.matmul %h, %w1 : tensor<12x11xf32>, tensor<11x5xf32> -> tensor<12x5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<12x5xf32>, tensor<12xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

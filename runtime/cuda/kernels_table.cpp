//===- kernels_table.cpp - The CUDA backend's DeviceKernels table ---------===//
//
// ZRT_ON_DEVICE (core/device.h) sends each zrt_* kernel called on a GPU
// context here. The CUDA kernels (kernels.h) take the zrt_* arguments in the
// same order, so the table holds them directly: each entry is typed as the
// zrt_* function it stands for, and a kernel whose signature drifted from
// zrt.h stops this file from compiling. The emulated device
// (tests/emulation/emulated_device.h) uses the same table.
//
//===----------------------------------------------------------------------===//

#include "cuda/kernels.h"

namespace zrt::cuda {

static DeviceKernels makeTable() {
  DeviceKernels kernels{};
  kernels.matmul = cuda::matmul;
  kernels.matmul_bias = cuda::matmulBias;
  kernels.bias_add = cuda::biasAdd;
  kernels.sum_rows = cuda::sumRows;
  kernels.add = cuda::add;
  kernels.relu = cuda::relu;
  kernels.relu_grad = cuda::reluGrad;
  kernels.gelu = cuda::gelu;
  kernels.gelu_grad = cuda::geluGrad;
  kernels.swiglu = cuda::swiglu;
  kernels.swiglu_grad = cuda::swigluGrad;
  kernels.softmax_xent = cuda::softmaxXent;
  kernels.softmax_xent_grad = cuda::softmaxXentGrad;
  kernels.embedding = cuda::embedding;
  kernels.embedding_grad = cuda::embeddingGrad;
  kernels.layer_norm = cuda::layerNorm;
  kernels.layer_norm_grad = cuda::layerNormGrad;
  kernels.rms_norm = cuda::rmsNorm;
  kernels.rms_norm_grad = cuda::rmsNormGrad;
  kernels.rope = cuda::rope;
  kernels.attention = cuda::attention;
  kernels.attention_grad = cuda::attentionGrad;
  kernels.slice_cols = cuda::sliceCols;
  kernels.slice_cols_grad = cuda::sliceColsGrad;
  kernels.cast = cuda::cast;
  kernels.sum_squares = cuda::sumSquares;
  kernels.clip_coefficient = cuda::clipCoefficient;
  kernels.adamw = cuda::adamw;
  kernels.copy = cuda::copy;
  kernels.fill = cuda::fill;
  kernels.shard_slice = cuda::shardSlice;
  return kernels;
}

const DeviceKernels &cudaKernels() {
  static const DeviceKernels table = makeTable();
  return table;
}

} // namespace zrt::cuda

//===- emulated_device.cpp - The emulated kernels behind ZRT_ON_DEVICE ----===//

#include "emulated_device.h"
#include "emulated_kernels.h"

#include "core/check.h"
#include "core/context.h"
#include "core/device.h"

#include <cstring>
#include <memory>
#include <new>

namespace zrt::cuda::emulated {

namespace {

/// Host memory standing in for device memory, the slot the kernels record
/// data errors in, and a device-less context of the same rank for the
/// kernels a GPU runs in a library.
class EmulatedRuntime : public DeviceRuntime {
public:
  explicit EmulatedRuntime(const zrt_context *ctx)
      : host(createLocalContext(ctx->rank, ctx->worldSize)) {}
  ~EmulatedRuntime() override { destroyContext(host); }

  void *allocate(int64_t bytes) override {
    void *ptr = ::operator new[](bytes, kAlignment, std::nothrow);
    if (ptr)
      std::memset(ptr, 0, bytes);
    return ptr;
  }
  void release(void *ptr) override { ::operator delete[](ptr, kAlignment); }
  void copyToDevice(void *dst, const void *src, int64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, int64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  /// Every emulated launch has finished when it returns; what is left is
  /// the CUDA runtime's report of a recorded data error.
  void synchronize() override { stopOnDeviceError(errors); }
  void *lossSlot() override { return &loss; }
  std::vector<WorkspacePart> workspaceParts() const override { return {}; }

  // The memory is the host's and the kernels are done when they return, so
  // the CPU backend's transport (MPI) runs the collectives.
  bool collectivesOnHost() const override { return true; }
  int64_t startAllGather(int32_t, const void *, void *, int64_t, int64_t,
                         void *, int64_t) override {
    notCalled();
  }
  int64_t startReduceScatter(int32_t, const void *, void *, int64_t, int64_t,
                             void *, int64_t) override {
    notCalled();
  }
  int64_t startAllReduce(int32_t, const void *, void *, int64_t,
                         int64_t) override {
    notCalled();
  }
  void wait(int64_t) override { notCalled(); }
  std::vector<int64_t> unwaited() const override { return {}; }

  DeviceError errors{};
  /// A CPU context with the device context's rank and world size.
  zrt_context *host;

private:
  // cudaMalloc's alignment.
  static constexpr std::align_val_t kAlignment{256};
  [[noreturn]] static void notCalled() {
    fatal("internal error: a collective was handed to the emulated CUDA "
          "device, whose collectives run on the host");
  }
  float loss = 0;
};

EmulatedRuntime &runtimeOf(zrt_context *ctx) {
  return *static_cast<EmulatedRuntime *>(ctx->deviceRuntime.get());
}

/// A table entry: the emulated kernel with the zrt_* arguments after the
/// context (which only the kernels that record errors need).
template <auto Kernel, typename... Args>
void forward(zrt_context *, Args... args) {
  Kernel(args...);
}
template <auto Kernel, typename... Args>
void forwardWithErrors(zrt_context *ctx, Args... args) {
  Kernel(args..., &runtimeOf(ctx).errors);
}

/// A table entry for a kernel a GPU runs in a library (cuBLASLt) or on the
/// copy engine, with no kernel of ours to emulate: the CPU backend's, on the
/// device-less context, so that whole programs run on the emulated device.
template <auto CpuKernel, typename... Args>
void onHost(zrt_context *ctx, Args... args) {
  CpuKernel(runtimeOf(ctx).host, args...);
}

DeviceKernels makeTable() {
  DeviceKernels kernels{};
  kernels.matmul = onHost<zrt_matmul>;
  kernels.matmul_bias = onHost<zrt_matmul_bias>;
  kernels.bias_add = forward<biasAdd>;
  kernels.sum_rows = forward<sumRows>;
  kernels.add = forward<add>;
  kernels.relu = forward<relu>;
  kernels.relu_grad = forward<reluGrad>;
  kernels.gelu = forward<gelu>;
  kernels.gelu_grad = forward<geluGrad>;
  kernels.swiglu = forward<swiglu>;
  kernels.swiglu_grad = forward<swigluGrad>;
  kernels.softmax_xent = forwardWithErrors<softmaxXent>;
  kernels.softmax_xent_grad = forwardWithErrors<softmaxXentGrad>;
  kernels.embedding = forwardWithErrors<embedding>;
  kernels.embedding_grad = forwardWithErrors<embeddingGrad>;
  kernels.layer_norm = forward<layerNorm>;
  kernels.layer_norm_grad = forward<layerNormGrad>;
  kernels.rms_norm = forward<rmsNorm>;
  kernels.rms_norm_grad = forward<rmsNormGrad>;
  kernels.rope = forward<rope>;
  kernels.attention = forward<attention>;
  kernels.attention_grad = forward<attentionGrad>;
  kernels.slice_cols = onHost<zrt_slice_cols>;
  kernels.slice_cols_grad = onHost<zrt_slice_cols_grad>;
  kernels.cast = forward<cast>;
  kernels.sum_squares = forward<sumSquares>;
  kernels.clip_coefficient = forward<clipCoefficient>;
  kernels.adamw = forward<adamw>;
  kernels.copy = onHost<zrt_copy>;
  kernels.fill = forward<fill>;
  kernels.shard_slice = onHost<zrt_shard_slice>;
  return kernels;
}

} // namespace

void attach(zrt_context *ctx) {
  if (ctx->deviceRuntime)
    fatal("zrt::cuda::emulated::attach: the context is already on a device");
  if (!ctx->allocations.empty())
    fatal("zrt::cuda::emulated::attach: the context already holds %zu host "
          "buffers",
          ctx->allocations.size());
  static const DeviceKernels table = makeTable();
  ctx->deviceRuntime = std::make_unique<EmulatedRuntime>(ctx);
  ctx->device = &table;
}

} // namespace zrt::cuda::emulated

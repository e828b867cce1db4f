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

/// Host memory standing in for device memory, and the slot the kernels
/// record data errors in.
class EmulatedRuntime : public DeviceRuntime {
public:
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

  int64_t startAllGather(int32_t, const void *, void *, int64_t, int64_t,
                         void *, int64_t) override {
    noCollectives("zrt_all_gather");
  }
  int64_t startReduceScatter(int32_t, const void *, void *, int64_t, int64_t,
                             void *, int64_t) override {
    noCollectives("zrt_reduce_scatter");
  }
  int64_t startAllReduce(int32_t, const void *, void *, int64_t,
                         int64_t) override {
    noCollectives("zrt_all_reduce");
  }
  void wait(int64_t) override { noCollectives("zrt_wait"); }
  std::vector<int64_t> unwaited() const override { return {}; }

  DeviceError errors{};

private:
  // cudaMalloc's alignment.
  static constexpr std::align_val_t kAlignment{256};
  [[noreturn]] static void noCollectives(const char *what) {
    fatal("%s: the emulated CUDA device has no collectives (NCCL)", what);
  }
  float loss = 0;
};

DeviceError *errorSlot(zrt_context *ctx) {
  return &static_cast<EmulatedRuntime *>(ctx->deviceRuntime.get())->errors;
}

/// A table entry: the emulated kernel with the zrt_* arguments after the
/// context (which only the kernels that record errors need).
template <auto Kernel, typename... Args>
void forward(zrt_context *, Args... args) {
  Kernel(args...);
}
template <auto Kernel, typename... Args>
void forwardWithErrors(zrt_context *ctx, Args... args) {
  Kernel(args..., errorSlot(ctx));
}

/// A table entry for a kernel the emulator does not run.
template <const char *Name, typename... Args>
void notEmulated(zrt_context *, Args...) {
  fatal("%s: no emulated kernel (cuBLASLt or the copy engine runs it on a "
        "GPU)",
        Name);
}
constexpr char kMatmul[] = "zrt_matmul";
constexpr char kMatmulBias[] = "zrt_matmul_bias";
constexpr char kSliceCols[] = "zrt_slice_cols";
constexpr char kSliceColsGrad[] = "zrt_slice_cols_grad";
constexpr char kCopy[] = "zrt_copy";
constexpr char kShardSlice[] = "zrt_shard_slice";

DeviceKernels makeTable() {
  DeviceKernels kernels{};
  kernels.matmul = notEmulated<kMatmul>;
  kernels.matmul_bias = notEmulated<kMatmulBias>;
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
  kernels.slice_cols = notEmulated<kSliceCols>;
  kernels.slice_cols_grad = notEmulated<kSliceColsGrad>;
  kernels.cast = forward<cast>;
  kernels.sum_squares = forward<sumSquares>;
  kernels.clip_coefficient = forward<clipCoefficient>;
  kernels.adamw = forward<adamw>;
  kernels.copy = notEmulated<kCopy>;
  kernels.fill = forward<fill>;
  kernels.shard_slice = notEmulated<kShardSlice>;
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
  ctx->deviceRuntime = std::make_unique<EmulatedRuntime>();
  ctx->device = &table;
}

} // namespace zrt::cuda::emulated

//===- kernel_cases.h - The CUDA kernels' checks, for any device -*- C++
//-*-===//
//
// One table of checks for the CUDA backend's kernels, run by
// zrt-cuda-kernel-tests on a GPU and by zrt-cuda-kernels-emulated on the
// host emulator of CUDA (tests/emulation/emulated_device.h). Each check
// calls a zrt_* entry point with the same inputs on a CPU context (the
// reference) and on a context attached to the device, so the dispatch
// (abi/kernels.cpp and the device's table) is tested with the kernel, and
// compares the outputs as comparison.h says. Inputs are drawn once and
// rounded to the dtype before either side sees them; outputs start as NaN,
// so an element a kernel skips shows.
//
// Every family has small, odd shapes (rows not a multiple of a block's
// warps, widths not a multiple of 32 or of the 16-byte pack, pointers
// misaligned by one element for the packs' scalar fallback, several row
// chunks in the column sums, several blocks in sum_squares), which the
// emulator runs in seconds; Shapes::Full adds the shapes of GPT-2 (124M)
// training, for a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_KERNEL_CASES_H
#define ZRT_CUDA_TESTS_KERNEL_CASES_H

#include "tests/checker.h"
#include "zero/zrt.h"

#include <functional>
#include <string>
#include <vector>

namespace zrt::cuda::test {

/// Where one side's tensors live and how the host fills and reads them.
class TensorMemory {
public:
  virtual ~TensorMemory() = default;
  /// `bytes` (>= 0) bytes, aligned to at least 16.
  virtual void *allocate(int64_t bytes) = 0;
  virtual void release(void *ptr) = 0;
  virtual void write(void *dst, const void *src, int64_t bytes) = 0;
  virtual void read(void *dst, const void *src, int64_t bytes) = 0;
};

/// zrt_alloc'd buffers of a context, filled and read through copyToDevice /
/// copyToHost: device memory on a GPU context.
class ContextMemory : public TensorMemory {
public:
  explicit ContextMemory(zrt_context *ctx) : ctx(ctx) {}
  void *allocate(int64_t bytes) override;
  void release(void *ptr) override;
  void write(void *dst, const void *src, int64_t bytes) override;
  void read(void *dst, const void *src, int64_t bytes) override;

private:
  zrt_context *ctx;
};

/// Host blocks of exactly the size asked for, so that a kernel reading or
/// writing one element past a tensor is caught by AddressSanitizer (a build
/// with -DZERO_SANITIZE=ON); zrt_alloc would round the size up.
class ExactHostMemory : public TensorMemory {
public:
  void *allocate(int64_t bytes) override;
  void release(void *ptr) override;
  void write(void *dst, const void *src, int64_t bytes) override;
  void read(void *dst, const void *src, int64_t bytes) override;
};

/// The tensors of one check on one side, released after it.
class Buffers {
public:
  explicit Buffers(TensorMemory &memory) : memory(memory) {}
  ~Buffers();
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;

  /// A tensor of `dtype` holding `values` (rounded to the dtype); when
  /// `misaligned`, its pointer is one element past a 16-byte boundary.
  void *floats(int32_t dtype, const std::vector<float> &values,
               bool misaligned = false);
  /// `n` elements of `dtype`, every one NaN.
  void *nans(int32_t dtype, int64_t n, bool misaligned = false);
  int32_t *ints(const std::vector<int32_t> &values);
  /// A float32 scalar (lr, step, loss, norms).
  float *scalar(float value);
  /// Raw bytes (copy).
  void *raw(const std::vector<unsigned char> &bytes);

  /// The tensor at `ptr` read back: its elements as floats, or its bytes.
  std::vector<float> read(const void *ptr) const;
  std::vector<unsigned char> readBytes(const void *ptr) const;

private:
  struct Buffer {
    void *block;         // what memory.allocate returned
    unsigned char *data; // the tensor: block + the misalignment
    int32_t dtype;       // ZRT_F32, ZRT_BF16, kInt32 or kBytes
    int64_t n, bytes;
  };
  static constexpr int32_t kInt32 = -1, kBytes = -2;

  void *add(int32_t dtype, int64_t n, const void *host, bool misaligned);
  const Buffer &find(const void *ptr) const;

  TensorMemory &memory;
  std::vector<Buffer> list;
};

/// A context and where the tensors given to its kernels live.
struct Side {
  zrt_context *ctx;
  TensorMemory &memory;
};

/// One kernel call (or a few) on one side; returns the tensors whose
/// contents are compared.
using Body = std::function<std::vector<void *>(zrt_context *, Buffers &)>;

struct Harness {
  Side reference; // a CPU context
  Side device;    // a context on the device under test
  Checker &check;

  /// The outputs of `body` on both sides, within `tolerance`.
  void close(const std::string &name, double tolerance, const Body &body);
  /// The outputs of `body` on both sides, bit for bit.
  void exact(const std::string &name, const Body &body);
};

/// Small: shapes a host emulator runs in seconds. Full: those and the
/// shapes of GPT-2 training, for a GPU.
enum class Shapes { Small, Full };

/// Every check, family by family: GEMMs (with the bias epilogues), bias and
/// column sums, elementwise, column slices, softmax cross-entropy,
/// embedding, norms, RoPE, attention, the optimizer's kernels, casts and
/// fill, copies and shard_slice, the exact sums (ZRT_EXACT). `shards` are
/// harnesses over ranks 1 and 2 of 3, for shard_slice. Attention runs on every path the CUDA backend has
/// for a shape (SIMT, and at bf16 with head_dim 64 or 128 the tensor cores
/// first, selected with cuda::setAttentionPath; the path in force before is
/// restored after).
void runKernelChecks(Harness &h, Harness shards[2], Shapes shapes);

/// --fault=bad-label / --fault=bad-id: a kernel on `device` meets a label /
/// token id out of range; the next synchronisation must stop the process
/// naming the kernel, the row and the value. Returns 0 when it did not stop
/// (the lit test then fails on the missing message), -1 when `fault` is
/// neither.
int runDataFault(const Side &device, const std::string &fault);

} // namespace zrt::cuda::test

#endif // ZRT_CUDA_TESTS_KERNEL_CASES_H

//===- kernels_emulation_test.cpp - CUDA kernels vs CPU, no GPU -----------===//
//
// zrt-cuda-kernels-emulated: runs every hand-written kernel of the CUDA
// backend (cuda/*_kernels.cuh, compiled as C++ over the host emulator of
// cuda_emulation.h, launched as the .cu files launch them:
// emulated_kernels.h) on small random shapes in f32 and bf16, and compares
// each result with the CPU backend's zrt_* kernel on a CPU context, given the
// same inputs. It needs only a host compiler, so the kernels' indexing,
// reductions, masks, vector paths and tails are checked on machines without
// a GPU (lit: test/runtime/cuda-kernels-emulated.test). Whether they are fast,
// and whether the hardware agrees with the emulator, only a GPU run shows
// (zrt-cuda-kernel-tests). Not here: matmul (cuBLASLt), the tensor-core
// attention (zrt-cuda-attention-emulated), copy / shard_slice / slice_cols
// (copy-engine calls, no kernel of ours) and the collectives (NCCL).
//
// Shapes are small and odd: rows not a multiple of a block's warps, row
// widths not a multiple of 32 or of the 16-byte pack, tensors whose
// pointers are misaligned by one element (the packs' scalar fallback),
// several row chunks in the column sums, several blocks in sum_squares.
//
// Tolerances are zrt-cuda-kernel-tests' (cuda/tests/comparison.h), as
// max |emulated - cpu| / max(1, |cpu|): bit-exact for relu, embedding,
// cast, fill; 1e-5 (kElementwise) for one formula per element; 1e-4
// (kReduction) for reductions in another order and RoPE's angles; 1e-2
// (kGemm) for attention; bf16 results 2 bf16 ulps (4 for attention).
//
// --fault=shfl-xor breaks the emulated __shfl_xor_sync (lane mask 16
// returns the lane's own value, so the first step of every xor butterfly
// adds a lane's partial to itself instead of to its partner's): every
// kernel that reduces over a warp (norms, softmax cross-entropy,
// sum_squares, attention) must then fail, while the elementwise ones still
// pass. --workers=N sets the OS threads (default: the hardware's, at most
// 4).
//
//===----------------------------------------------------------------------===//

#include "emulated_kernels.h"

#include "core/context.h"
#include "cuda/tests/comparison.h"
#include "tests/checker.h"
#include "tests/random_data.h"
#include "zero/zrt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

using namespace zrt;
using namespace zrt::cuda::test;
namespace emulated = zrt::cuda::emulated;

namespace {

std::string str(int64_t value) { return std::to_string(value); }

/// Host buffers of one check on one side (CPU or emulated), 16-byte aligned
/// or, on request, misaligned by one element.
class Buffers {
public:
  /// A tensor of `dtype` holding `values` (rounded to the dtype).
  void *floats(int32_t dtype, const std::vector<float> &values,
               bool misaligned = false) {
    Tensor host(dtype, values);
    return add(dtype, values.size(), host.data(), misaligned);
  }
  /// `n` elements of `dtype`, every one NaN.
  void *nans(int32_t dtype, int64_t n, bool misaligned = false) {
    Tensor host(dtype, n);
    return add(dtype, n, host.data(), misaligned);
  }
  int32_t *ints(const std::vector<int32_t> &values) {
    return static_cast<int32_t *>(
        add(kInt32, values.size(), values.data(), false));
  }
  float *scalar(float value) {
    return static_cast<float *>(floats(ZRT_F32, {value}));
  }

  std::vector<float> read(const void *ptr) const {
    const Buffer &b = find(ptr);
    std::vector<float> out(b.n);
    for (int64_t i = 0; i < b.n; ++i) {
      uint32_t bits = 0;
      if (b.dtype == ZRT_BF16) {
        uint16_t half;
        std::memcpy(&half, b.data + 2 * i, 2);
        bits = (uint32_t)half << 16;
      } else {
        std::memcpy(&bits, b.data + 4 * i, 4);
      }
      std::memcpy(&out[i], &bits, 4);
    }
    return out;
  }
  std::vector<unsigned char> readBytes(const void *ptr) const {
    const Buffer &b = find(ptr);
    return std::vector<unsigned char>(b.data, b.data + b.bytes);
  }

private:
  static constexpr int32_t kInt32 = -1;
  struct AlignedDelete {
    void operator()(unsigned char *p) const {
      ::operator delete[](p, std::align_val_t(16));
    }
  };
  struct Buffer {
    std::unique_ptr<unsigned char[], AlignedDelete> storage;
    unsigned char *data;
    int32_t dtype;
    int64_t n, bytes;
  };

  /// The tensor ends exactly where its allocation ends, so that a kernel
  /// reading or writing one element past it is caught by AddressSanitizer
  /// (a build with -DZERO_SANITIZE=ON).
  void *add(int32_t dtype, int64_t n, const void *host, bool misaligned) {
    const int64_t size = dtype == ZRT_BF16 ? 2 : 4;
    const int64_t offset = misaligned ? size : 0;
    Buffer b;
    b.storage.reset(static_cast<unsigned char *>(::operator new[](
        std::max<int64_t>(1, offset + n * size), std::align_val_t(16))));
    b.data = b.storage.get() + offset;
    b.dtype = dtype;
    b.n = n;
    b.bytes = n * size;
    if (b.bytes > 0) // host may be null then
      std::memcpy(b.data, host, b.bytes);
    list.push_back(std::move(b));
    return list.back().data;
  }
  const Buffer &find(const void *ptr) const {
    for (const Buffer &b : list)
      if (b.data == ptr)
        return b;
    std::fprintf(stderr, "internal error: unknown test buffer %p\n", ptr);
    std::exit(2);
  }

  std::vector<Buffer> list;
};

/// One kernel call (or a few) on the CPU backend (emulated == false) or the
/// emulated CUDA kernels; returns the buffers whose contents are compared.
using Body = std::function<std::vector<void *>(bool emulated, Buffers &)>;

struct Harness {
  zrt_context *cpu;
  Checker &check;

  /// The outputs of `body` on both sides, within `tolerance`.
  void close(const std::string &name, double tolerance, const Body &body) {
    Buffers c, e;
    std::vector<void *> cpuOut = body(false, c);
    std::vector<void *> emuOut = body(true, e);
    check.expectClose(name, worstOutputError(e, emuOut, c, cpuOut), tolerance);
  }

  /// The outputs of `body` on both sides, bit for bit.
  void exact(const std::string &name, const Body &body) {
    Buffers c, e;
    std::vector<void *> cpuOut = body(false, c);
    std::vector<void *> emuOut = body(true, e);
    std::string difference = firstByteDifference(e, emuOut, c, cpuOut);
    check.expectTrue(name + " (bit-exact)", difference.empty(), difference);
  }
};

//===--- Elementwise, bias, casts, fill -----------------------------------===//

void testElementwise(Harness &h) {
  // 1: one element; 37: no full bf16 pack and a tail; 1007: packs and a
  // tail of 3 (f32) or 7 (bf16); misaligned: every element one by one.
  struct Size {
    int64_t n;
    bool misaligned;
  };
  const Size sizes[] = {{1, false}, {37, false}, {1007, false}, {1007, true}};
  for (int32_t dtype : kDtypes)
    for (const Size &s : sizes) {
      const int64_t n = s.n;
      const bool mis = s.misaligned;
      std::string suffix = std::string(" ") + dtypeName(dtype) +
                           " n=" + str(n) + (mis ? " misaligned" : "");
      auto a = randomVector(n, -3, 3), b = randomVector(n, -3, 3);
      auto dy = randomVector(n);
      double e = tol(dtype, kElementwise);
      h.close("add" + suffix, e, [&](bool emu, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis);
        void *pa = buf.floats(dtype, a, mis), *pb = buf.floats(dtype, b, mis);
        emu ? emulated::add(dtype, pa, pb, y, n)
            : zrt_add(h.cpu, dtype, pa, pb, y, n);
        return std::vector<void *>{y};
      });
      h.close("add in place (y == a)" + suffix, e, [&](bool emu, Buffers &buf) {
        void *y = buf.floats(dtype, a, mis), *pb = buf.floats(dtype, b, mis);
        emu ? emulated::add(dtype, y, pb, y, n)
            : zrt_add(h.cpu, dtype, y, pb, y, n);
        return std::vector<void *>{y};
      });
      h.exact("relu" + suffix, [&](bool emu, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis), *x = buf.floats(dtype, a, mis);
        emu ? emulated::relu(dtype, x, y, n) : zrt_relu(h.cpu, dtype, x, y, n);
        return std::vector<void *>{y};
      });
      h.exact("relu_grad in place (dx == dy)" + suffix,
              [&](bool emu, Buffers &buf) {
                void *d = buf.floats(dtype, dy, mis);
                void *x = buf.floats(dtype, a, mis);
                emu ? emulated::reluGrad(dtype, x, d, d, n)
                    : zrt_relu_grad(h.cpu, dtype, x, d, d, n);
                return std::vector<void *>{d};
              });
      h.close("gelu" + suffix, e, [&](bool emu, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis), *x = buf.floats(dtype, a, mis);
        emu ? emulated::gelu(dtype, x, y, n) : zrt_gelu(h.cpu, dtype, x, y, n);
        return std::vector<void *>{y};
      });
      h.close("gelu_grad" + suffix, e, [&](bool emu, Buffers &buf) {
        void *dx = buf.nans(dtype, n, mis), *x = buf.floats(dtype, a, mis);
        void *d = buf.floats(dtype, dy, mis);
        emu ? emulated::geluGrad(dtype, x, d, dx, n)
            : zrt_gelu_grad(h.cpu, dtype, x, d, dx, n);
        return std::vector<void *>{dx};
      });
      h.close("swiglu" + suffix, e, [&](bool emu, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis);
        void *pa = buf.floats(dtype, a, mis), *pb = buf.floats(dtype, b, mis);
        emu ? emulated::swiglu(dtype, pa, pb, y, n)
            : zrt_swiglu(h.cpu, dtype, pa, pb, y, n);
        return std::vector<void *>{y};
      });
      h.close("swiglu_grad" + suffix, e, [&](bool emu, Buffers &buf) {
        void *dgate = buf.nans(dtype, n, mis), *dup = buf.nans(dtype, n, mis);
        void *pa = buf.floats(dtype, a, mis), *pb = buf.floats(dtype, b, mis);
        void *d = buf.floats(dtype, dy, mis);
        emu ? emulated::swigluGrad(dtype, pa, pb, d, dgate, dup, n)
            : zrt_swiglu_grad(h.cpu, dtype, pa, pb, d, dgate, dup, n);
        return std::vector<void *>{dgate, dup};
      });
    }
}

void testBias(Harness &h) {
  struct Shape {
    int64_t rows, cols;
  };
  // 7x13: scalar path; 5x24: 16-byte packs (24 is a multiple of 4 and 8);
  // 300x5: two row chunks in sum_rows; 0x3: sum_rows of no rows is zeros.
  const Shape shapes[] = {{1, 1}, {7, 13}, {5, 24}, {300, 5}, {0, 3}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      auto x = randomVector(s.rows * s.cols), bias = randomVector(s.cols);
      if (s.rows > 0) {
        h.close("bias_add" + suffix, tol(dtype, kElementwise),
                [&](bool emu, Buffers &buf) {
                  void *y = buf.nans(dtype, s.rows * s.cols);
                  void *px = buf.floats(dtype, x);
                  void *pb = buf.floats(dtype, bias);
                  emu ? emulated::biasAdd(dtype, px, pb, y, s.rows, s.cols)
                      : zrt_bias_add(h.cpu, dtype, px, pb, y, s.rows, s.cols);
                  return std::vector<void *>{y};
                });
        h.close("bias_add in place" + suffix, tol(dtype, kElementwise),
                [&](bool emu, Buffers &buf) {
                  void *y = buf.floats(dtype, x);
                  void *pb = buf.floats(dtype, bias);
                  emu ? emulated::biasAdd(dtype, y, pb, y, s.rows, s.cols)
                      : zrt_bias_add(h.cpu, dtype, y, pb, y, s.rows, s.cols);
                  return std::vector<void *>{y};
                });
      }
      h.close("sum_rows" + suffix, tol(dtype, kReduction),
              [&](bool emu, Buffers &buf) {
                void *y = buf.nans(dtype, s.cols);
                void *px = buf.floats(dtype, x);
                emu ? emulated::sumRows(dtype, px, y, s.rows, s.cols)
                    : zrt_sum_rows(h.cpu, dtype, px, y, s.rows, s.cols);
                return std::vector<void *>{y};
              });
    }
}

/// cuda_kernel_tests.cpp's castInputs: values whose bf16 rounding is
/// delicate (ties both ways, overflow to infinity, infinities, subnormals).
std::vector<float> castInputs() {
  auto bits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  };
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          1.0f + std::ldexp(1.0f, -8),
                          1.0f + 3 * std::ldexp(1.0f, -8),
                          -(1.0f + std::ldexp(1.0f, -8)),
                          bits(0x7f7fffffu),
                          bits(0x7f7f7fffu),
                          INFINITY,
                          -INFINITY,
                          bits(0x00000001u),
                          1e-40f,
                          NAN,
                          bits(0x7f800001u)};
  std::vector<float> more = randomVector(301, -1e3f, 1e3f);
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

void testCastFill(Harness &h) {
  std::vector<float> values = castInputs();
  const int64_t n = values.size();
  for (int32_t from : kDtypes)
    for (int32_t to : kDtypes) {
      if (from == to) // a copy, no kernel
        continue;
      h.exact(std::string("cast ") + dtypeName(from) + " -> " + dtypeName(to) +
                  " n=" + str(n),
              [&](bool emu, Buffers &buf) {
                void *src = buf.floats(ZRT_F32, values);
                if (from == ZRT_BF16) {
                  // The source as the CPU rounds it: both sides alike.
                  void *rounded = buf.nans(ZRT_BF16, n);
                  zrt_cast(h.cpu, ZRT_F32, ZRT_BF16, src, rounded, n);
                  src = rounded;
                }
                void *dst = buf.nans(to, n);
                emu ? emulated::cast(from, to, src, dst, n)
                    : zrt_cast(h.cpu, from, to, src, dst, n);
                return std::vector<void *>{dst};
              });
    }
  for (int32_t dtype : kDtypes)
    for (int64_t count : {int64_t(1), int64_t(1001)})
      for (float value : {-3.3f, -0.0f})
        h.exact(std::string("fill ") + dtypeName(dtype) + " n=" + str(count) +
                    " value " + (value == 0.0f ? "-0" : "-3.3"),
                [&](bool emu, Buffers &buf) {
                  // One element past the end: must stay NaN.
                  void *dst = buf.nans(dtype, count + 1);
                  emu ? emulated::fill(dtype, dst, count, value)
                      : zrt_fill(h.cpu, dtype, dst, count, value);
                  return std::vector<void *>{dst};
                });
}

//===--- Loss, embedding, norms, RoPE -------------------------------------===//

void testSoftmaxXent(Harness &h) {
  struct Shape {
    int64_t rows, cols;
  };
  // 700 columns: more than the block's 512 threads, not a multiple of 32.
  const Shape shapes[] = {{3, 4}, {17, 1}, {9, 700}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      auto logits = randomVector(s.rows * s.cols, -20, 20);
      auto labels = randomInts(s.rows, (int32_t)s.cols);
      labels[0] = 0;
      labels[s.rows - 1] = (int32_t)s.cols - 1;
      const float divisor = 2.0f * s.rows, dloss = 0.75f;
      cuda::DeviceError errors{};
      h.close("softmax_xent" + suffix, kReduction, [&](bool emu, Buffers &buf) {
        float *loss = static_cast<float *>(buf.nans(ZRT_F32, 1));
        void *x = buf.floats(dtype, logits);
        const int32_t *l = buf.ints(labels);
        emu ? emulated::softmaxXent(dtype, x, l, loss, s.rows, s.cols, divisor,
                                    &errors)
            : zrt_softmax_xent(h.cpu, dtype, x, l, loss, s.rows, s.cols,
                               divisor);
        return std::vector<void *>{loss};
      });
      h.close("softmax_xent_grad" + suffix, tol(dtype, kReduction),
              [&](bool emu, Buffers &buf) {
                void *dlogits = buf.nans(dtype, s.rows * s.cols);
                void *x = buf.floats(dtype, logits);
                const int32_t *l = buf.ints(labels);
                const float *d = buf.scalar(dloss);
                emu ? emulated::softmaxXentGrad(dtype, x, l, d, dlogits, s.rows,
                                                s.cols, divisor, &errors)
                    : zrt_softmax_xent_grad(h.cpu, dtype, x, l, d, dlogits,
                                            s.rows, s.cols, divisor);
                return std::vector<void *>{dlogits};
              });
      h.check.expectTrue("softmax_xent reports no error" + suffix,
                         errors.code == cuda::kNoDeviceError);
    }
  // A label out of range: recorded (row and value), the row skipped.
  Buffers buf;
  cuda::DeviceError errors{};
  void *logits = buf.floats(ZRT_F32, randomVector(3 * 4));
  float *loss = static_cast<float *>(buf.nans(ZRT_F32, 1));
  emulated::softmaxXent(ZRT_F32, logits, buf.ints({0, 3, 4}), loss, 3, 4, 3.0f,
                        &errors);
  h.check.expectTrue("softmax_xent records label 4 of row 2 out of range",
                     errors.code == cuda::kLabelOutOfRange && errors.row == 2 &&
                         errors.value == 4 && errors.bound == 4 &&
                         std::isfinite(*loss));
}

void testEmbedding(Harness &h) {
  struct Shape {
    int64_t n, vocab, dim;
  };
  // Rows of 3, 20 and 300 elements: 12 / 6, 80 / 40 and 1200 / 600 bytes,
  // so 4-, 2- and 16-byte units, and rows wider than a block.
  const Shape shapes[] = {{8, 5, 3}, {37, 11, 20}, {9, 4, 300}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.n) + " ids, vocab " + str(s.vocab) + ", dim " +
                           str(s.dim);
      std::vector<int32_t> ids = randomInts(s.n, (int32_t)s.vocab);
      std::vector<int32_t> few = randomInts(s.n / 2, 3);
      std::copy(few.begin(), few.end(), ids.begin());
      ids[s.n - 1] = (int32_t)s.vocab - 1;
      ids[s.n / 2] = 0;
      auto table = randomVector(s.vocab * s.dim);
      auto dout = randomVector(s.n * s.dim);
      cuda::DeviceError errors{};
      h.exact("embedding" + suffix, [&](bool emu, Buffers &buf) {
        void *out = buf.nans(dtype, s.n * s.dim);
        const int32_t *pi = buf.ints(ids);
        void *pt = buf.floats(dtype, table);
        emu ? emulated::embedding(dtype, pi, pt, out, s.n, s.vocab, s.dim,
                                  &errors)
            : zrt_embedding(h.cpu, dtype, pi, pt, out, s.n, s.vocab, s.dim);
        return std::vector<void *>{out};
      });
      h.close("embedding_grad" + suffix, tol(dtype, kReduction),
              [&](bool emu, Buffers &buf) {
                void *dtable = buf.nans(dtype, s.vocab * s.dim);
                const int32_t *pi = buf.ints(ids);
                void *pd = buf.floats(dtype, dout);
                emu ? emulated::embeddingGrad(dtype, pi, pd, dtable, s.n,
                                              s.vocab, s.dim, &errors)
                    : zrt_embedding_grad(h.cpu, dtype, pi, pd, dtable, s.n,
                                         s.vocab, s.dim);
                return std::vector<void *>{dtable};
              });
      h.check.expectTrue("embedding reports no error" + suffix,
                         errors.code == cuda::kNoDeviceError);
    }
  // An id out of range: recorded, its output row left alone.
  Buffers buf;
  cuda::DeviceError errors{};
  void *table = buf.floats(ZRT_BF16, std::vector<float>(5 * 2, 1.0f));
  void *out = buf.nans(ZRT_BF16, 3 * 2);
  emulated::embedding(ZRT_BF16, buf.ints({0, 4, 5}), table, out, 3, 5, 2,
                      &errors);
  std::vector<float> got = buf.read(out);
  h.check.expectTrue("embedding records id 5 of row 2 out of range",
                     errors.code == cuda::kTokenOutOfRange && errors.row == 2 &&
                         errors.value == 5 && errors.bound == 5 &&
                         got[3] == 1.0f && std::isnan(got[4]));
}

void testNorms(Harness &h) {
  struct Shape {
    int64_t rows, cols;
  };
  // 9 rows: more than a block's 8 warps; 100, 257 and 1100 columns: a
  // partial last pass of the warp over the row.
  const Shape shapes[] = {{1, 1}, {7, 13}, {9, 100}, {3, 257}, {2, 1100}};
  const float eps = 1e-5f;
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      auto x = randomVector(s.rows * s.cols, 2, 6);
      auto dy = randomVector(s.rows * s.cols);
      auto gamma = randomVector(s.cols, 0.5f, 1.5f);
      auto beta = randomVector(s.cols);
      const double r = tol(dtype, kReduction);
      const int64_t n = s.rows * s.cols;
      h.close("layer_norm" + suffix, r, [&](bool emu, Buffers &buf) {
        void *y = buf.nans(dtype, n), *px = buf.floats(dtype, x);
        void *g = buf.floats(dtype, gamma), *b = buf.floats(dtype, beta);
        emu ? emulated::layerNorm(dtype, px, g, b, y, s.rows, s.cols, eps)
            : zrt_layer_norm(h.cpu, dtype, px, g, b, y, s.rows, s.cols, eps);
        return std::vector<void *>{y};
      });
      h.close("layer_norm_grad" + suffix, r, [&](bool emu, Buffers &buf) {
        void *dx = buf.nans(dtype, n), *dgamma = buf.nans(dtype, s.cols);
        void *dbeta = buf.nans(dtype, s.cols);
        void *px = buf.floats(dtype, x), *g = buf.floats(dtype, gamma);
        void *d = buf.floats(dtype, dy);
        emu ? emulated::layerNormGrad(dtype, px, g, d, dx, dgamma, dbeta,
                                      s.rows, s.cols, eps)
            : zrt_layer_norm_grad(h.cpu, dtype, px, g, d, dx, dgamma, dbeta,
                                  s.rows, s.cols, eps);
        return std::vector<void *>{dx, dgamma, dbeta};
      });
      h.close("rms_norm" + suffix, r, [&](bool emu, Buffers &buf) {
        void *y = buf.nans(dtype, n), *px = buf.floats(dtype, x);
        void *g = buf.floats(dtype, gamma);
        emu ? emulated::rmsNorm(dtype, px, g, y, s.rows, s.cols, eps)
            : zrt_rms_norm(h.cpu, dtype, px, g, y, s.rows, s.cols, eps);
        return std::vector<void *>{y};
      });
      h.close("rms_norm_grad" + suffix, r, [&](bool emu, Buffers &buf) {
        void *dx = buf.nans(dtype, n), *dgamma = buf.nans(dtype, s.cols);
        void *px = buf.floats(dtype, x), *g = buf.floats(dtype, gamma);
        void *d = buf.floats(dtype, dy);
        emu ? emulated::rmsNormGrad(dtype, px, g, d, dx, dgamma, s.rows, s.cols,
                                    eps)
            : zrt_rms_norm_grad(h.cpu, dtype, px, g, d, dx, dgamma, s.rows,
                                s.cols, eps);
        return std::vector<void *>{dx, dgamma};
      });
    }
}

void testRope(Harness &h) {
  struct Shape {
    int64_t batch, seq, heads, headDim;
    float theta;
  };
  // head_dim 520: wider than the host-computed inv_freq table.
  const Shape shapes[] = {{1, 5, 3, 2, 10000.0f},
                          {2, 7, 2, 6, 10000.0f},
                          {1, 37, 2, 64, 500000.0f},
                          {1, 3, 1, 520, 10000.0f}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes)
      for (int inverse = 0; inverse < 2; ++inverse) {
        const int64_t n = s.batch * s.seq * s.heads * s.headDim;
        std::string suffix = std::string(" ") + dtypeName(dtype) + " batch " +
                             str(s.batch) + " seq " + str(s.seq) + " heads " +
                             str(s.heads) + " head_dim " + str(s.headDim) +
                             (inverse ? " inverse" : "");
        auto x = randomVector(n);
        h.close("rope" + suffix, tol(dtype, kReduction),
                [&](bool emu, Buffers &buf) {
                  void *y = buf.nans(dtype, n), *px = buf.floats(dtype, x);
                  emu ? emulated::rope(dtype, px, y, s.batch, s.seq, s.heads,
                                       s.headDim, s.theta, inverse)
                      : zrt_rope(h.cpu, dtype, px, y, s.batch, s.seq, s.heads,
                                 s.headDim, s.theta, inverse);
                  return std::vector<void *>{y};
                });
        h.close("rope in place" + suffix, tol(dtype, kReduction),
                [&](bool emu, Buffers &buf) {
                  void *y = buf.floats(dtype, x);
                  emu ? emulated::rope(dtype, y, y, s.batch, s.seq, s.heads,
                                       s.headDim, s.theta, inverse)
                      : zrt_rope(h.cpu, dtype, y, y, s.batch, s.seq, s.heads,
                                 s.headDim, s.theta, inverse);
                  return std::vector<void *>{y};
                });
      }
}

//===--- Attention (SIMT) -------------------------------------------------===//

void testAttention(Harness &h) {
  struct Shape {
    int64_t batch, seq, heads, kvHeads, headDim;
  };
  // Padded widths 32 (head_dim 1, 16), 64 (33, 40: zero-filled columns;
  // 64) and 128 (96, 128); seq 1, odd, and across several query, key and dk/dv
  // tiles; GQA groups 1, 2 and 4; batch 1 and 2.
  const Shape shapes[] = {{1, 1, 1, 1, 16},   {1, 67, 4, 2, 16},
                          {2, 33, 2, 2, 64},  {1, 130, 4, 2, 64},
                          {1, 21, 4, 1, 40},  {1, 9, 2, 2, 128},
                          {2, 70, 2, 1, 128}, {1, 37, 2, 2, 96},
                          {1, 5, 3, 1, 33},   {1, 3, 1, 1, 1}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      const int64_t tokens = s.batch * s.seq;
      const int64_t qn = tokens * s.heads * s.headDim;
      const int64_t kvn = tokens * s.kvHeads * s.headDim;
      auto q = randomVector(qn), k = randomVector(kvn), v = randomVector(kvn);
      auto dout = randomVector(qn);
      std::string suffix = std::string(" ") + dtypeName(dtype) + " (batch " +
                           str(s.batch) + " seq " + str(s.seq) + " heads " +
                           str(s.heads) + "/" + str(s.kvHeads) + " head_dim " +
                           str(s.headDim) + ") SIMT";
      const double e = tol(dtype, kGemm, /*bf16Ulps=*/4);
      h.close("attention" + suffix, e, [&](bool emu, Buffers &buf) {
        void *out = buf.nans(dtype, qn);
        void *pq = buf.floats(dtype, q), *pk = buf.floats(dtype, k);
        void *pv = buf.floats(dtype, v);
        emu ? emulated::attention(dtype, pq, pk, pv, out, s.batch, s.seq,
                                  s.heads, s.kvHeads, s.headDim)
            : zrt_attention(h.cpu, dtype, pq, pk, pv, out, s.batch, s.seq,
                            s.heads, s.kvHeads, s.headDim);
        return std::vector<void *>{out};
      });
      h.close("attention_grad" + suffix, e, [&](bool emu, Buffers &buf) {
        void *dq = buf.nans(dtype, qn), *dk = buf.nans(dtype, kvn);
        void *dv = buf.nans(dtype, kvn);
        void *pq = buf.floats(dtype, q), *pk = buf.floats(dtype, k);
        void *pv = buf.floats(dtype, v), *pd = buf.floats(dtype, dout);
        emu ? emulated::attentionGrad(dtype, pq, pk, pv, pd, dq, dk, dv,
                                      s.batch, s.seq, s.heads, s.kvHeads,
                                      s.headDim)
            : zrt_attention_grad(h.cpu, dtype, pq, pk, pv, pd, dq, dk, dv,
                                 s.batch, s.seq, s.heads, s.kvHeads, s.headDim);
        return std::vector<void *>{dq, dk, dv};
      });
    }
}

//===--- Optimizer --------------------------------------------------------===//

void testOptimizer(Harness &h) {
  // 9001: two blocks of partial sums in either dtype; misaligned: no packs.
  struct Size {
    int64_t n;
    bool misaligned;
  };
  const Size sizes[] = {{1, false}, {1001, false}, {9001, false}, {1001, true}};
  for (int32_t dtype : kDtypes)
    for (const Size &sz : sizes) {
      const int64_t n = sz.n;
      const bool mis = sz.misaligned;
      std::string suffix = std::string(" ") + dtypeName(dtype) +
                           " n=" + str(n) + (mis ? " misaligned" : "");
      auto x = randomVector(n, -2, 2);
      h.close("sum_squares" + suffix, kReduction, [&](bool emu, Buffers &buf) {
        float *out = static_cast<float *>(buf.nans(ZRT_F32, 1));
        void *px = buf.floats(dtype, x, mis);
        emu ? emulated::sumSquares(dtype, px, out, n)
            : zrt_sum_squares(h.cpu, dtype, px, out, n);
        return std::vector<void *>{out};
      });
      if (n > 1001)
        continue;
      auto p = randomVector(n), g = randomVector(n);
      auto m = randomVector(n, -0.1f, 0.1f), v = randomVector(n, 0.0f, 0.01f);
      for (int scaled = 0; scaled < 2; ++scaled)
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          std::string what = std::string("adamw") + suffix +
                             (scaled ? " grad_scale 0.5" : " no grad_scale") +
                             (inPlace ? " in place" : "");
          h.close(what, kElementwise, [&](bool emu, Buffers &buf) {
            float *pIn = static_cast<float *>(buf.floats(ZRT_F32, p, mis));
            float *mIn = static_cast<float *>(buf.floats(ZRT_F32, m, mis));
            float *vIn = static_cast<float *>(buf.floats(ZRT_F32, v, mis));
            float *pOut = inPlace ? pIn : (float *)buf.nans(ZRT_F32, n);
            float *mOut = inPlace ? mIn : (float *)buf.nans(ZRT_F32, n);
            float *vOut = inPlace ? vIn : (float *)buf.nans(ZRT_F32, n);
            const float *scale = scaled ? buf.scalar(0.5f) : nullptr;
            void *pg = buf.floats(dtype, g, mis);
            const float *lr = buf.scalar(1e-3f), *step = buf.scalar(3.0f);
            emu ? emulated::adamw(dtype, pIn, pg, mIn, vIn, pOut, mOut, vOut, n,
                                  lr, step, scale, 0.9f, 0.999f, 1e-8f, 0.01f)
                : zrt_adamw(h.cpu, dtype, pIn, pg, mIn, vIn, pOut, mOut, vOut,
                            n, lr, step, scale, 0.9f, 0.999f, 1e-8f, 0.01f);
            return std::vector<void *>{pOut, mOut, vOut};
          });
        }
    }
  h.exact("sum_squares f32 n=0", [&](bool emu, Buffers &buf) {
    float *out = static_cast<float *>(buf.nans(ZRT_F32, 1));
    void *px = buf.nans(ZRT_F32, 1);
    emu ? emulated::sumSquares(ZRT_F32, px, out, 0)
        : zrt_sum_squares(h.cpu, ZRT_F32, px, out, 0);
    return std::vector<void *>{out};
  });
  struct Clip {
    float totalSq, maxNorm;
  };
  const Clip clips[] = {
      {4.0f, 1.0f}, {0.25f, 1.0f}, {9.0f, 0.0f}, {9.0f, -1.0f}, {0.0f, 1.0f}};
  for (const Clip &c : clips)
    h.close("clip_coefficient total_sq " + std::to_string(c.totalSq) +
                " max_norm " + std::to_string(c.maxNorm),
            kElementwise, [&](bool emu, Buffers &buf) {
              float *coef = static_cast<float *>(buf.nans(ZRT_F32, 1));
              const float *t = buf.scalar(c.totalSq);
              const float *mx = buf.scalar(c.maxNorm);
              emu ? emulated::clipCoefficient(t, mx, coef)
                  : zrt_clip_coefficient(h.cpu, t, mx, coef);
              return std::vector<void *>{coef};
            });
}

} // namespace

int main(int argc, char **argv) {
  int workers =
      (int)std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  std::string fault;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--fault=", 0) == 0)
      fault = arg.substr(8);
    else if (arg.rfind("--workers=", 0) == 0)
      workers = std::max(1, std::atoi(arg.c_str() + 10));
    else {
      std::fprintf(stderr, "usage: %s [--fault=shfl-xor] [--workers=N]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!fault.empty() && fault != "shfl-xor") {
    std::fprintf(stderr, "unknown --fault=%s\n", fault.c_str());
    return 2;
  }
  emulated::setWorkers(workers);
  emulated::setFault(fault);
  std::printf("emulated CUDA kernels against the CPU backend%s%s\n",
              fault.empty() ? "" : ", broken on purpose: ", fault.c_str());
  const auto start = std::chrono::steady_clock::now();
  testRng.seed(1234);
  Checker check;
  zrt_context *cpu = createLocalContext();
  Harness h{cpu, check};
  testElementwise(h);
  testBias(h);
  testCastFill(h);
  testSoftmaxXent(h);
  testEmbedding(h);
  testNorms(h);
  testRope(h);
  testAttention(h);
  testOptimizer(h);
  destroyContext(cpu);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("(%.1f s)\n", seconds);
  return check.finish();
}

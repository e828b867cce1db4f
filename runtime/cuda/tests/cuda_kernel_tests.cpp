//===- cuda_kernel_tests.cpp - Every CUDA kernel against the CPU backend --===//
//
// The CPU kernels are checked against double-precision references by
// zrt-kernel-tests; here every kernel of the DeviceKernels table runs on a
// CPU context and on a CUDA context (both made without MPI, in one process)
// with the same inputs, and the results are compared. Each check calls the
// zrt_* entry point, so the dispatch (ZRT_ON_DEVICE, the table) is tested
// with the kernel. Inputs are drawn once and rounded to the dtype before
// either backend sees them; outputs start as NaN, so an element a kernel
// skips shows.
//
// Tolerances: tests/comparison.h, shared with zrt-cuda-kernels-emulated.
//
// `--fault=bad-label` / `--fault=bad-id` make a kernel meet a label / token
// id out of range on the GPU: the next synchronisation must stop the process
// naming the kernel, the row and the value (as zrt-kernel-tests does for the
// CPU); `--fault=huge-alloc` checks that running out of GPU memory is
// reported like running out of host memory.
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "core/device.h"
#include "cuda/attention_path.h"
#include "cuda/backend.h"
#include "cuda/tests/comparison.h"
#include "tests/checker.h"
#include "tests/random_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace zrt;
using namespace zrt::cuda::test;

namespace {

std::string str(int64_t value) { return std::to_string(value); }

/// The buffers of one check on one backend: zrt_alloc'd on its context and
/// filled through copyToDevice (a memcpy on the CPU context), freed after.
class Buffers {
public:
  explicit Buffers(zrt_context *ctx) : ctx(ctx) {}
  ~Buffers() {
    for (const Buffer &buffer : list)
      zrt_free(ctx, buffer.ptr);
  }
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;

  /// A tensor of `dtype` holding `values` (rounded to the dtype).
  void *floats(int32_t dtype, const std::vector<float> &values) {
    Tensor host(dtype, values);
    return add(dtype, values.size(), host.data());
  }
  /// `n` elements of `dtype`, every one NaN.
  void *nans(int32_t dtype, int64_t n) {
    Tensor host(dtype, n);
    return add(dtype, n, host.data());
  }
  void *ints(const std::vector<int32_t> &values) {
    return add(kInt32, values.size(), values.data());
  }
  /// A float32 scalar (lr, step, loss, norms).
  void *scalar(float value) { return floats(ZRT_F32, {value}); }
  /// Raw bytes (copy).
  void *raw(const std::vector<unsigned char> &bytes) {
    return add(kBytes, bytes.size(), bytes.data());
  }

  /// The buffer at `ptr` read back: its elements as floats.
  std::vector<float> read(void *ptr) const {
    const Buffer &buffer = find(ptr);
    std::vector<unsigned char> bytes = readBytes(ptr);
    std::vector<float> out(buffer.n);
    for (int64_t i = 0; i < buffer.n; ++i) {
      if (buffer.dtype == ZRT_BF16) {
        uint32_t bits = (uint32_t)(bytes[2 * i] | bytes[2 * i + 1] << 8) << 16;
        std::memcpy(&out[i], &bits, 4);
      } else if (buffer.dtype == kInt32) {
        int32_t value;
        std::memcpy(&value, &bytes[4 * i], 4);
        out[i] = (float)value;
      } else if (buffer.dtype == kBytes) {
        out[i] = bytes[i];
      } else {
        std::memcpy(&out[i], &bytes[4 * i], 4);
      }
    }
    return out;
  }
  std::vector<unsigned char> readBytes(void *ptr) const {
    const Buffer &buffer = find(ptr);
    std::vector<unsigned char> bytes(buffer.bytes);
    copyToHost(ctx, bytes.data(), ptr, buffer.bytes);
    return bytes;
  }

private:
  static constexpr int32_t kInt32 = -1, kBytes = -2;
  struct Buffer {
    void *ptr;
    int32_t dtype;
    int64_t n, bytes;
  };

  void *add(int32_t dtype, int64_t n, const void *host) {
    int64_t size = dtype == ZRT_BF16 ? 2 : dtype == kBytes ? 1 : 4;
    void *ptr = zrt_alloc(ctx, n * size, ZRT_MEM_ACTIVATION);
    copyToDevice(ctx, ptr, host, n * size);
    list.push_back({ptr, dtype, n, n * size});
    return ptr;
  }
  const Buffer &find(void *ptr) const {
    for (const Buffer &buffer : list)
      if (buffer.ptr == ptr)
        return buffer;
    std::fprintf(stderr, "internal error: unknown test buffer %p\n", ptr);
    std::exit(2);
  }

  zrt_context *ctx;
  std::vector<Buffer> list;
};

/// Runs one kernel call (or a few) on a backend; returns the buffers whose
/// contents are compared.
using Body = std::function<std::vector<void *>(zrt_context *, Buffers &)>;

struct Harness {
  zrt_context *cpu;
  zrt_context *gpu;
  Checker &check;

  /// The outputs of `body` on both backends, within `tolerance`.
  void close(const std::string &name, double tolerance, const Body &body) {
    Buffers c(cpu), g(gpu);
    std::vector<void *> cpuOut = body(cpu, c);
    std::vector<void *> gpuOut = body(gpu, g);
    synchronizeDevice(gpu); // also reports a kernel's data error
    check.expectClose(name, worstOutputError(g, gpuOut, c, cpuOut), tolerance);
  }

  /// The outputs of `body` on both backends, bit for bit.
  void exact(const std::string &name, const Body &body) {
    Buffers c(cpu), g(gpu);
    std::vector<void *> cpuOut = body(cpu, c);
    std::vector<void *> gpuOut = body(gpu, g);
    synchronizeDevice(gpu);
    std::string difference = firstByteDifference(g, gpuOut, c, cpuOut);
    check.expectTrue(name + " (bit-exact)", difference.empty(), difference);
  }
};

//===--- GEMM and the elementwise kernels ---------------------------------===//

void testMatmul(Harness &h) {
  struct Shape {
    int64_t m, n, k;
  };
  // Odd sizes in every transpose, GPT-2's projections (batch 2 x 256 tokens,
  // width 768: QKV, MLP and the weight gradient), and empty edges.
  const Shape small[] = {{1, 1, 1}, {7, 13, 5}, {33, 65, 17}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : small)
      for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
          auto a = randomVector(s.m * s.k), b = randomVector(s.k * s.n);
          h.close(std::string("matmul ") + dtypeName(dtype) + " m=" + str(s.m) +
                      " n=" + str(s.n) + " k=" + str(s.k) +
                      " transA=" + str(ta) + " transB=" + str(tb),
                  tol(dtype, kGemm), [&](zrt_context *ctx, Buffers &buf) {
                    void *c = buf.nans(dtype, s.m * s.n);
                    zrt_matmul(ctx, dtype, buf.floats(dtype, a),
                               buf.floats(dtype, b), c, s.m, s.n, s.k, ta, tb);
                    return std::vector<void *>{c};
                  });
        }
  struct Big {
    int64_t m, n, k;
    int ta, tb;
    const char *what;
  };
  const Big big[] = {{512, 2304, 768, 0, 0, "GPT-2 qkv"},
                     {512, 768, 3072, 0, 0, "GPT-2 mlp proj"},
                     {768, 3072, 512, 1, 0, "GPT-2 weight grad"},
                     {512, 768, 2304, 0, 1, "GPT-2 input grad"}};
  for (int32_t dtype : kDtypes)
    for (const Big &s : big) {
      auto a = randomVector(s.m * s.k), b = randomVector(s.k * s.n);
      h.close(std::string("matmul ") + dtypeName(dtype) + " " + s.what +
                  " m=" + str(s.m) + " n=" + str(s.n) + " k=" + str(s.k),
              tol(dtype, kGemm), [&](zrt_context *ctx, Buffers &buf) {
                void *c = buf.nans(dtype, s.m * s.n);
                zrt_matmul(ctx, dtype, buf.floats(dtype, a),
                           buf.floats(dtype, b), c, s.m, s.n, s.k, s.ta, s.tb);
                return std::vector<void *>{c};
              });
    }
  for (int32_t dtype : kDtypes) {
    // k == 0: c is all zeros; m == 0: nothing to write.
    h.exact(std::string("matmul ") + dtypeName(dtype) + " k=0 zeroes c",
            [&](zrt_context *ctx, Buffers &buf) {
              void *c = buf.nans(dtype, 3 * 4);
              void *a = buf.nans(dtype, 1), *b = buf.nans(dtype, 1);
              zrt_matmul(ctx, dtype, a, b, c, 3, 4, 0, 0, 0);
              return std::vector<void *>{c};
            });
    h.exact(std::string("matmul ") + dtypeName(dtype) + " m=0",
            [&](zrt_context *ctx, Buffers &buf) {
              void *c = buf.nans(dtype, 1);
              void *a = buf.nans(dtype, 1), *b = buf.nans(dtype, 4);
              zrt_matmul(ctx, dtype, a, b, c, 0, 4, 1, 0, 0);
              return std::vector<void *>{c};
            });
  }
}

/// zrt_matmul_bias: cuBLASLt's BIAS and GELU_AUX_BIAS epilogues against the
/// CPU's unfused kernels in sequence. n = 13 (not a multiple of 8) takes the
/// GPU's fallback for GELU (BIAS epilogue, then the GELU kernel); k = 0
/// leaves the bias alone. bf16 gets 4 ulps: the CPU rounds the product, the
/// sum with the bias and the GELU each to bf16, cuBLASLt only the last.
void testMatmulBias(Harness &h) {
  struct Shape {
    int64_t m, n, k;
    int ta, tb;
    const char *what;
  };
  const Shape shapes[] = {{7, 13, 5, 0, 0, "7x13x5"},
                          {7, 13, 5, 1, 1, "7x13x5 transA transB"},
                          {33, 64, 17, 0, 0, "33x64x17"},
                          {33, 64, 17, 0, 1, "33x64x17 transB"},
                          {3, 8, 0, 0, 0, "k=0"},
                          {512, 3072, 768, 0, 0, "GPT-2 mlp fc"}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes)
      for (int32_t epilogue : {ZRT_EPILOGUE_BIAS, ZRT_EPILOGUE_BIAS_GELU}) {
        bool gelu = epilogue == ZRT_EPILOGUE_BIAS_GELU;
        auto a = randomVector(std::max<int64_t>(1, s.m * s.k));
        auto b = randomVector(std::max<int64_t>(1, s.k * s.n));
        auto bias = randomVector(s.n);
        h.close(std::string("matmul_bias") + (gelu ? "_gelu " : " ") +
                    dtypeName(dtype) + " " + s.what,
                tol(dtype, kGemm, 4), [&](zrt_context *ctx, Buffers &buf) {
                  void *c = buf.nans(dtype, s.m * s.n);
                  void *pre = gelu ? buf.nans(dtype, s.m * s.n) : nullptr;
                  zrt_matmul_bias(ctx, dtype, buf.floats(dtype, a),
                                  buf.floats(dtype, b),
                                  buf.floats(dtype, bias), c, pre, s.m, s.n,
                                  s.k, s.ta, s.tb, epilogue);
                  std::vector<void *> out{c};
                  if (gelu)
                    out.push_back(pre);
                  return out;
                });
      }
}

void testBias(Harness &h) {
  struct Shape {
    int64_t rows, cols;
  };
  const Shape shapes[] = {{1, 1}, {7, 13}, {513, 768}, {3, 50257}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      auto x = randomVector(s.rows * s.cols), bias = randomVector(s.cols);
      h.close("bias_add" + suffix, tol(dtype, kElementwise),
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.nans(dtype, s.rows * s.cols);
                zrt_bias_add(ctx, dtype, buf.floats(dtype, x),
                             buf.floats(dtype, bias), y, s.rows, s.cols);
                return std::vector<void *>{y};
              });
      h.close("bias_add in place" + suffix, tol(dtype, kElementwise),
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.floats(dtype, x);
                zrt_bias_add(ctx, dtype, y, buf.floats(dtype, bias), y, s.rows,
                             s.cols);
                return std::vector<void *>{y};
              });
      h.close("sum_rows" + suffix, tol(dtype, kReduction),
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.nans(dtype, s.cols);
                zrt_sum_rows(ctx, dtype, buf.floats(dtype, x), y, s.rows,
                             s.cols);
                return std::vector<void *>{y};
              });
    }
}

void testElementwise(Harness &h) {
  const int64_t sizes[] = {1, 37, (1 << 20) + 7};
  for (int32_t dtype : kDtypes)
    for (int64_t n : sizes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " n=" + str(n);
      auto a = randomVector(n, -3, 3), b = randomVector(n, -3, 3), dy = randomVector(n);
      double e = tol(dtype, kElementwise);
      h.close("add" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n);
        zrt_add(ctx, dtype, buf.floats(dtype, a), buf.floats(dtype, b), y, n);
        return std::vector<void *>{y};
      });
      h.close("add in place (y == a)" + suffix, e,
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.floats(dtype, a);
                zrt_add(ctx, dtype, y, buf.floats(dtype, b), y, n);
                return std::vector<void *>{y};
              });
      h.close("add in place (y == b)" + suffix, e,
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.floats(dtype, b);
                zrt_add(ctx, dtype, buf.floats(dtype, a), y, y, n);
                return std::vector<void *>{y};
              });
      h.exact("relu" + suffix, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n);
        zrt_relu(ctx, dtype, buf.floats(dtype, a), y, n);
        return std::vector<void *>{y};
      });
      h.exact("relu_grad in place (dx == dy)" + suffix,
              [&](zrt_context *ctx, Buffers &buf) {
                void *d = buf.floats(dtype, dy);
                zrt_relu_grad(ctx, dtype, buf.floats(dtype, a), d, d, n);
                return std::vector<void *>{d};
              });
      h.close("gelu" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n);
        zrt_gelu(ctx, dtype, buf.floats(dtype, a), y, n);
        return std::vector<void *>{y};
      });
      h.close("gelu_grad" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *dx = buf.nans(dtype, n);
        zrt_gelu_grad(ctx, dtype, buf.floats(dtype, a), buf.floats(dtype, dy),
                      dx, n);
        return std::vector<void *>{dx};
      });
      h.close("gelu_grad in place (dx == dy)" + suffix, e,
              [&](zrt_context *ctx, Buffers &buf) {
                void *d = buf.floats(dtype, dy);
                zrt_gelu_grad(ctx, dtype, buf.floats(dtype, a), d, d, n);
                return std::vector<void *>{d};
              });
      h.close("swiglu" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n);
        zrt_swiglu(ctx, dtype, buf.floats(dtype, a), buf.floats(dtype, b), y,
                   n);
        return std::vector<void *>{y};
      });
      h.close("swiglu_grad" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *dgate = buf.nans(dtype, n), *dup = buf.nans(dtype, n);
        zrt_swiglu_grad(ctx, dtype, buf.floats(dtype, a), buf.floats(dtype, b),
                        buf.floats(dtype, dy), dgate, dup, n);
        return std::vector<void *>{dgate, dup};
      });
    }
}

void testSlices(Harness &h) {
  struct Shape {
    int64_t rows, cols, offset, size;
    const char *what;
  };
  const Shape shapes[] = {{7, 12, 4, 4, "7x12 [4, 8)"},
                          {5, 13, 12, 1, "5x13 [12, 13)"},
                          {512, 2304, 768, 768, "GPT-2 qkv -> k"}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " + s.what;
      auto x = randomVector(s.rows * s.cols), dy = randomVector(s.rows * s.size);
      h.exact("slice_cols" + suffix, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, s.rows * s.size);
        zrt_slice_cols(ctx, dtype, buf.floats(dtype, x), y, s.rows, s.cols,
                       s.offset, s.size);
        return std::vector<void *>{y};
      });
      h.exact("slice_cols_grad" + suffix, [&](zrt_context *ctx, Buffers &buf) {
        void *dx = buf.nans(dtype, s.rows * s.cols);
        zrt_slice_cols_grad(ctx, dtype, buf.floats(dtype, dy), dx, s.rows,
                            s.cols, s.offset, s.size);
        return std::vector<void *>{dx};
      });
    }
}

//===--- Loss, embedding, norms, RoPE, attention --------------------------===//

void testSoftmaxXent(Harness &h) {
  struct Shape {
    int64_t rows, cols;
  };
  const Shape shapes[] = {{3, 4}, {17, 1}, {512, 256}, {64, 50257}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      // Large logits: the maximum must be subtracted before exponentiating.
      auto logits = randomVector(s.rows * s.cols, -20, 20);
      auto labels = randomInts(s.rows, (int32_t)s.cols);
      labels[0] = 0;
      labels[s.rows - 1] = (int32_t)s.cols - 1;
      float divisor = 2.0f * s.rows, dloss = 0.75f;
      h.close("softmax_xent" + suffix, kReduction,
              [&](zrt_context *ctx, Buffers &buf) {
                void *loss = buf.nans(ZRT_F32, 1);
                zrt_softmax_xent(ctx, dtype, buf.floats(dtype, logits),
                                 (const int32_t *)buf.ints(labels),
                                 (float *)loss, s.rows, s.cols, divisor);
                return std::vector<void *>{loss};
              });
      h.close("softmax_xent_grad" + suffix, tol(dtype, kReduction),
              [&](zrt_context *ctx, Buffers &buf) {
                void *dlogits = buf.nans(dtype, s.rows * s.cols);
                zrt_softmax_xent_grad(ctx, dtype, buf.floats(dtype, logits),
                                      (const int32_t *)buf.ints(labels),
                                      (const float *)buf.scalar(dloss), dlogits,
                                      s.rows, s.cols, divisor);
                return std::vector<void *>{dlogits};
              });
    }
}

void testEmbedding(Harness &h) {
  struct Shape {
    int64_t n, vocab, dim;
    const char *what;
  };
  const Shape shapes[] = {{8, 5, 3, "8 ids, vocab 5, dim 3"},
                          {512, 50257, 768, "GPT-2: 2x256 ids, vocab 50257"}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " + s.what;
      // Half the ids from a few rows (many repeats, which the gradient must
      // sum), half from the whole vocabulary; both ends included.
      std::vector<int32_t> ids = randomInts(s.n, (int32_t)s.vocab);
      std::vector<int32_t> few = randomInts(s.n / 2, 4);
      std::copy(few.begin(), few.end(), ids.begin());
      ids[s.n - 1] = (int32_t)s.vocab - 1;
      ids[s.n / 2] = 0;
      auto table = randomVector(s.vocab * s.dim), dout = randomVector(s.n * s.dim);
      h.exact("embedding" + suffix, [&](zrt_context *ctx, Buffers &buf) {
        void *out = buf.nans(dtype, s.n * s.dim);
        zrt_embedding(ctx, dtype, (const int32_t *)buf.ints(ids),
                      buf.floats(dtype, table), out, s.n, s.vocab, s.dim);
        return std::vector<void *>{out};
      });
      h.close("embedding_grad" + suffix, tol(dtype, kReduction),
              [&](zrt_context *ctx, Buffers &buf) {
                void *dtable = buf.nans(dtype, s.vocab * s.dim);
                zrt_embedding_grad(ctx, dtype, (const int32_t *)buf.ints(ids),
                                   buf.floats(dtype, dout), dtable, s.n,
                                   s.vocab, s.dim);
                return std::vector<void *>{dtable};
              });
    }
}

void testNorms(Harness &h) {
  struct Shape {
    int64_t rows, cols;
  };
  const Shape shapes[] = {{1, 1}, {7, 13}, {512, 768}, {3, 4099}};
  const float eps = 1e-5f;
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      // An offset mean: the variance must not be computed as E[x^2]-E[x]^2
      // carelessly.
      auto x = randomVector(s.rows * s.cols, 2, 6), dy = randomVector(s.rows * s.cols);
      auto gamma = randomVector(s.cols, 0.5f, 1.5f), beta = randomVector(s.cols);
      double r = tol(dtype, kReduction);
      h.close("layer_norm" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, s.rows * s.cols);
        zrt_layer_norm(ctx, dtype, buf.floats(dtype, x),
                       buf.floats(dtype, gamma), buf.floats(dtype, beta), y,
                       s.rows, s.cols, eps);
        return std::vector<void *>{y};
      });
      h.close(
          "layer_norm_grad" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
            void *dx = buf.nans(dtype, s.rows * s.cols);
            void *dgamma = buf.nans(dtype, s.cols);
            void *dbeta = buf.nans(dtype, s.cols);
            zrt_layer_norm_grad(ctx, dtype, buf.floats(dtype, x),
                                buf.floats(dtype, gamma), buf.floats(dtype, dy),
                                dx, dgamma, dbeta, s.rows, s.cols, eps);
            return std::vector<void *>{dx, dgamma, dbeta};
          });
      h.close("rms_norm" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, s.rows * s.cols);
        zrt_rms_norm(ctx, dtype, buf.floats(dtype, x), buf.floats(dtype, gamma),
                     y, s.rows, s.cols, eps);
        return std::vector<void *>{y};
      });
      h.close("rms_norm_grad" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
        void *dx = buf.nans(dtype, s.rows * s.cols);
        void *dgamma = buf.nans(dtype, s.cols);
        zrt_rms_norm_grad(ctx, dtype, buf.floats(dtype, x),
                          buf.floats(dtype, gamma), buf.floats(dtype, dy), dx,
                          dgamma, s.rows, s.cols, eps);
        return std::vector<void *>{dx, dgamma};
      });
    }
}

void testRope(Harness &h) {
  struct Shape {
    int64_t batch, seq, heads, headDim;
    float theta;
  };
  const Shape shapes[] = {{1, 5, 3, 2, 10000.0f},
                          {2, 7, 2, 6, 10000.0f},
                          {2, 256, 12, 64, 10000.0f},
                          {1, 300, 4, 64, 500000.0f}};
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes)
      for (int inverse = 0; inverse < 2; ++inverse) {
        int64_t n = s.batch * s.seq * s.heads * s.headDim;
        std::string suffix = std::string(" ") + dtypeName(dtype) + " batch " +
                             str(s.batch) + " seq " + str(s.seq) + " heads " +
                             str(s.heads) + " head_dim " + str(s.headDim) +
                             (inverse ? " inverse" : "");
        auto x = randomVector(n);
        h.close("rope" + suffix, tol(dtype, kReduction),
                [&](zrt_context *ctx, Buffers &buf) {
                  void *y = buf.nans(dtype, n);
                  zrt_rope(ctx, dtype, buf.floats(dtype, x), y, s.batch, s.seq,
                           s.heads, s.headDim, s.theta, inverse);
                  return std::vector<void *>{y};
                });
        h.close("rope in place" + suffix, tol(dtype, kReduction),
                [&](zrt_context *ctx, Buffers &buf) {
                  void *y = buf.floats(dtype, x);
                  zrt_rope(ctx, dtype, y, y, s.batch, s.seq, s.heads, s.headDim,
                           s.theta, inverse);
                  return std::vector<void *>{y};
                });
      }
}

/// Every shape on every kernel path the CUDA backend has for it: the SIMT
/// kernels for f32 and for bf16 at head_dims without tensor-core kernels,
/// and at bf16 with head_dim 64 or 128 both the tensor-core kernels and the
/// SIMT ones (switched with cuda::setAttentionPath, which overrides
/// ZRT_CUDA_ATTENTION; restored after). Each check's name ends with the path.
void testAttention(Harness &h) {
  struct Shape {
    int64_t batch, seq, heads, kvHeads, headDim;
    const char *what;
  };
  const Shape shapes[] = {
      {1, 1, 1, 1, 64, "one token"},
      {1, 67, 4, 2, 16, "GQA 4/2, odd seq, head_dim 16 (the tiny presets)"},
      {2, 33, 4, 4, 64, "odd seq"},
      {1, 130, 4, 2, 64, "GQA 4/2"},
      {1, 1, 2, 1, 128, "one token, head_dim 128"},
      {2, 65, 8, 2, 128, "GQA 8/2, odd seq, head_dim 128"},
      {1, 256, 8, 2, 128, "Llama-like: GQA 8/2, head_dim 128"},
      {2, 256, 12, 12, 64, "GPT-2: batch 2, seq 256, 12 heads"},
      {1, 1024, 12, 12, 64, "GPT-2: batch 1, seq 1024, 12 heads"}};
  const cuda::AttentionPath initialPath = cuda::attentionPath();
  for (int32_t dtype : kDtypes)
    for (const Shape &s : shapes) {
      int64_t tokens = s.batch * s.seq;
      int64_t qn = tokens * s.heads * s.headDim;
      int64_t kvn = tokens * s.kvHeads * s.headDim;
      auto q = randomVector(qn), k = randomVector(kvn), v = randomVector(kvn);
      auto dout = randomVector(qn);
      const bool tensorCores =
          dtype == ZRT_BF16 && (s.headDim == 64 || s.headDim == 128);
      std::vector<cuda::AttentionPath> paths = {cuda::AttentionPath::Simt};
      if (tensorCores)
        paths.insert(paths.begin(), cuda::AttentionPath::TensorCores);
      for (cuda::AttentionPath path : paths) {
        cuda::setAttentionPath(path);
        std::string suffix =
            std::string(" ") + dtypeName(dtype) + " " + s.what + " (batch " +
            str(s.batch) + " seq " + str(s.seq) + " heads " + str(s.heads) +
            "/" + str(s.kvHeads) + " head_dim " + str(s.headDim) + ") " +
            (path == cuda::AttentionPath::TensorCores ? "tensor cores"
                                                      : "SIMT");
        double e = tol(dtype, kGemm, /*bf16Ulps=*/4);
        h.close("attention" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
          void *out = buf.nans(dtype, qn);
          zrt_attention(ctx, dtype, buf.floats(dtype, q), buf.floats(dtype, k),
                        buf.floats(dtype, v), out, s.batch, s.seq, s.heads,
                        s.kvHeads, s.headDim);
          return std::vector<void *>{out};
        });
        h.close(
            "attention_grad" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
              void *dq = buf.nans(dtype, qn);
              void *dk = buf.nans(dtype, kvn), *dv = buf.nans(dtype, kvn);
              zrt_attention_grad(ctx, dtype, buf.floats(dtype, q),
                                 buf.floats(dtype, k), buf.floats(dtype, v),
                                 buf.floats(dtype, dout), dq, dk, dv, s.batch,
                                 s.seq, s.heads, s.kvHeads, s.headDim);
              return std::vector<void *>{dq, dk, dv};
            });
      }
    }
  cuda::setAttentionPath(initialPath);
}

//===--- Optimizer, norms of gradients, memory ----------------------------===//

void testOptimizer(Harness &h) {
  const int64_t sizes[] = {1, 1001, (1 << 20) + 3};
  for (int32_t dtype : kDtypes)
    for (int64_t n : sizes) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " n=" + str(n);
      auto x = randomVector(n, -2, 2);
      h.close("sum_squares" + suffix, kReduction,
              [&](zrt_context *ctx, Buffers &buf) {
                void *out = buf.nans(ZRT_F32, 1);
                zrt_sum_squares(ctx, dtype, buf.floats(dtype, x), (float *)out,
                                n);
                return std::vector<void *>{out};
              });
      auto p = randomVector(n), g = randomVector(n), m = randomVector(n, -0.1f, 0.1f);
      auto v = randomVector(n, 0.0f, 0.01f);
      for (int scaled = 0; scaled < 2; ++scaled)
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          std::string what = std::string("adamw") + suffix +
                             (scaled ? " grad_scale 0.5" : " no grad_scale") +
                             (inPlace ? " in place" : "");
          // Parameters, moments and step are float32 whatever g's dtype.
          h.close(what, kElementwise, [&](zrt_context *ctx, Buffers &buf) {
            float *pIn = (float *)buf.floats(ZRT_F32, p);
            float *mIn = (float *)buf.floats(ZRT_F32, m);
            float *vIn = (float *)buf.floats(ZRT_F32, v);
            float *pOut = inPlace ? pIn : (float *)buf.nans(ZRT_F32, n);
            float *mOut = inPlace ? mIn : (float *)buf.nans(ZRT_F32, n);
            float *vOut = inPlace ? vIn : (float *)buf.nans(ZRT_F32, n);
            const float *scale =
                scaled ? (const float *)buf.scalar(0.5f) : nullptr;
            zrt_adamw(ctx, dtype, pIn, buf.floats(dtype, g), mIn, vIn, pOut,
                      mOut, vOut, n, (const float *)buf.scalar(1e-3f),
                      (const float *)buf.scalar(3.0f), scale, 0.9f, 0.999f,
                      1e-8f, 0.01f);
            return std::vector<void *>{pOut, mOut, vOut};
          });
        }
    }
  // n == 0: the sum is 0.
  h.exact("sum_squares f32 n=0", [&](zrt_context *ctx, Buffers &buf) {
    void *out = buf.nans(ZRT_F32, 1);
    zrt_sum_squares(ctx, ZRT_F32, buf.nans(ZRT_F32, 1), (float *)out, 0);
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
            kElementwise, [&](zrt_context *ctx, Buffers &buf) {
              void *coef = buf.nans(ZRT_F32, 1);
              zrt_clip_coefficient(ctx, (const float *)buf.scalar(c.totalSq),
                                   (const float *)buf.scalar(c.maxNorm),
                                   (float *)coef);
              return std::vector<void *>{coef};
            });
}

/// Values whose bf16 rounding is delicate: ties to even both ways, the
/// largest values that round to infinity or not, infinities, subnormals.
std::vector<float> castInputs() {
  auto bits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  };
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          1.0f + std::ldexp(1.0f, -8),     // tie -> 1
                          1.0f + 3 * std::ldexp(1.0f, -8), // tie -> up
                          -(1.0f + std::ldexp(1.0f, -8)),
                          bits(0x7f7fffffu), // FLT_MAX: rounds to inf
                          bits(0x7f7f7fffu), // just below the tie
                          INFINITY,
                          -INFINITY,
                          bits(0x00000001u), // smallest subnormal
                          1e-40f};
  std::vector<float> more = randomVector(1000, -1e3f, 1e3f);
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

void testMemoryOps(Harness &h, zrt_context *cpuShards[2],
                   zrt_context *gpuShards[2]) {
  std::vector<float> values = castInputs();
  int64_t n = values.size();
  for (int32_t from : kDtypes)
    for (int32_t to : kDtypes)
      h.exact(std::string("cast ") + dtypeName(from) + " -> " + dtypeName(to) +
                  " n=" + str(n),
              [&](zrt_context *ctx, Buffers &buf) {
                // The source is stored as f32 bits, then (for bf16) as the
                // CPU rounds them: both backends start from the same bits.
                void *src = buf.floats(from, values);
                void *dst = buf.nans(to, n);
                zrt_cast(ctx, from, to, src, dst, n);
                return std::vector<void *>{dst};
              });
  // A NaN stays a NaN (its payload bits are the backend's own); a NaN
  // whose payload lives only in the low 16 bits must not become infinity.
  auto nanBits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  };
  std::vector<float> nans = {NAN, -NAN, nanBits(0x7f800001u),
                             nanBits(0xff800001u)};
  for (int32_t to : kDtypes)
    h.close(std::string("cast f32 -> ") + dtypeName(to) + " keeps NaN NaN", 0,
            [&](zrt_context *ctx, Buffers &buf) {
              void *dst = buf.floats(to, std::vector<float>(nans.size(), 1));
              zrt_cast(ctx, ZRT_F32, to, buf.floats(ZRT_F32, nans), dst,
                       nans.size());
              return std::vector<void *>{dst};
            });
  const int64_t byteCounts[] = {0, 1, 13, (4 << 20) + 3};
  for (int64_t bytes : byteCounts) {
    std::vector<unsigned char> data(bytes);
    for (unsigned char &c : data)
      c = (unsigned char)testRng();
    h.exact("copy " + str(bytes) + " bytes",
            [&](zrt_context *ctx, Buffers &buf) {
              void *dst = buf.raw(std::vector<unsigned char>(bytes, 0xab));
              zrt_copy(ctx, buf.raw(data), dst, bytes);
              return std::vector<void *>{dst};
            });
  }
  h.exact("copy in place (src == dst)", [&](zrt_context *ctx, Buffers &buf) {
    void *p = buf.raw({1, 2, 3, 4, 5});
    zrt_copy(ctx, p, p, 5);
    return std::vector<void *>{p};
  });
  for (int32_t dtype : kDtypes)
    for (int64_t count : {int64_t(1), int64_t(1001), int64_t(1 << 20)})
      h.exact(std::string("fill ") + dtypeName(dtype) + " n=" + str(count),
              [&](zrt_context *ctx, Buffers &buf) {
                void *dst = buf.nans(dtype, count + 1);
                // -3.3 is not a bf16 value: fill rounds it like a cast.
                zrt_fill(ctx, dtype, dst, count, -3.3f);
                return std::vector<void *>{dst};
              });
  // Ranks 1 and 2 of 3: a full shard and the last, padded one.
  const int64_t numels[] = {10, 3 * 1000 + 1};
  for (int32_t dtype : kDtypes)
    for (int64_t numel : numels)
      for (int r = 0; r < 2; ++r) {
        int64_t s = (numel + 2) / 3;
        auto full = randomVector(numel);
        Harness shard{cpuShards[r], gpuShards[r], h.check};
        shard.exact(std::string("shard_slice ") + dtypeName(dtype) + " numel " +
                        str(numel) + " rank " + str(r + 1) + " of 3",
                    [&](zrt_context *ctx, Buffers &buf) {
                      void *out = buf.nans(dtype, s);
                      zrt_shard_slice(ctx, dtype, buf.floats(dtype, full), out,
                                      numel, s);
                      return std::vector<void *>{out};
                    });
      }
}

//===--- Faults -----------------------------------------------------------===//

int runFault(zrt_context *gpu, const std::string &fault) {
  Buffers buf(gpu);
  if (fault == "bad-label") {
    void *logits = buf.floats(ZRT_F32, std::vector<float>(3 * 4, 0.0f));
    void *labels = buf.ints({0, 3, 4});
    zrt_softmax_xent(gpu, ZRT_F32, logits, (const int32_t *)labels,
                     (float *)buf.nans(ZRT_F32, 1), 3, 4, 3.0f);
  } else if (fault == "bad-id") {
    void *table = buf.floats(ZRT_BF16, std::vector<float>(5 * 2, 1.0f));
    void *ids = buf.ints({0, 4, 5});
    zrt_embedding(gpu, ZRT_BF16, (const int32_t *)ids, table,
                  buf.nans(ZRT_BF16, 3 * 2), 3, 5, 2);
  } else if (fault == "huge-alloc") {
    zrt_alloc(gpu, int64_t(1) << 60, ZRT_MEM_ACTIVATION);
  } else {
    std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
    return 2;
  }
  synchronizeDevice(gpu);
  std::printf("fault %s did not stop the program\n", fault.c_str());
  return 0;
}

zrt_context *gpuContext(int rank = 0, int worldSize = 1) {
  zrt_context *ctx = createLocalContext(rank, worldSize);
  cuda::attach(ctx, 0);
  return ctx;
}

} // namespace

int main(int argc, char **argv) {
  testRng.seed(1234);
  std::string why;
  if (cuda::visibleGpus(why) <= 0) {
    std::fprintf(stderr, "error: no CUDA GPU is visible (%s)\n", why.c_str());
    return 2;
  }
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0) {
    zrt_context *gpu = gpuContext();
    int status = runFault(gpu, argv[1] + 8);
    destroyContext(gpu);
    return status;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--fault=bad-label|bad-id|huge-alloc]\n",
                 argv[0]);
    return 2;
  }
  std::printf("GPU: %s\n", cuda::gpuName(0).c_str());
  Checker check;
  zrt_context *cpu = createLocalContext(), *gpu = gpuContext();
  zrt_context *cpuShards[2] = {createLocalContext(1, 3),
                               createLocalContext(2, 3)};
  zrt_context *gpuShards[2] = {gpuContext(1, 3), gpuContext(2, 3)};
  Harness h{cpu, gpu, check};
  testMatmul(h);
  testMatmulBias(h);
  testBias(h);
  testElementwise(h);
  testSlices(h);
  testSoftmaxXent(h);
  testEmbedding(h);
  testNorms(h);
  testRope(h);
  testAttention(h);
  testOptimizer(h);
  testMemoryOps(h, cpuShards, gpuShards);
  // Nothing leaked: every test buffer was freed on both backends.
  check.expectTrue("every buffer freed (cpu and gpu ledgers at 0)",
                   cpu->ledger.currentTotal == 0 &&
                       gpu->ledger.currentTotal == 0);
  for (zrt_context *ctx :
       {cpu, gpu, cpuShards[0], cpuShards[1], gpuShards[0], gpuShards[1]})
    destroyContext(ctx);
  return check.finish();
}

//===- kernel_cases.cpp - The CUDA kernels' checks, for any device --------===//

#include "cuda/tests/kernel_cases.h"

#include "core/device.h"
#include "core/exact.h"
#include "cuda/attention_path.h"
#include "cuda/tests/comparison.h"
#include "tests/random_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace zrt::cuda::test {

namespace {

std::string str(int64_t value) { return std::to_string(value); }

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// `small`, then `full` when the run asks for the full set.
template <typename T>
std::vector<T> pick(Shapes shapes, std::vector<T> small,
                    const std::vector<T> &full = {}) {
  if (shapes == Shapes::Full)
    small.insert(small.end(), full.begin(), full.end());
  return small;
}

} // namespace

//===--- Memory and buffers -----------------------------------------------===//

void *ContextMemory::allocate(int64_t bytes) {
  return zrt_alloc(ctx, bytes, ZRT_MEM_ACTIVATION);
}
void ContextMemory::release(void *ptr) { zrt_free(ctx, ptr); }
void ContextMemory::write(void *dst, const void *src, int64_t bytes) {
  copyToDevice(ctx, dst, src, bytes);
}
void ContextMemory::read(void *dst, const void *src, int64_t bytes) {
  copyToHost(ctx, dst, src, bytes);
}

void *ExactHostMemory::allocate(int64_t bytes) {
  // operator new of 0 bytes still returns a distinct pointer.
  return ::operator new[](bytes, std::align_val_t(16));
}
void ExactHostMemory::release(void *ptr) {
  ::operator delete[](ptr, std::align_val_t(16));
}
void ExactHostMemory::write(void *dst, const void *src, int64_t bytes) {
  if (bytes > 0)
    std::memcpy(dst, src, bytes);
}
void ExactHostMemory::read(void *dst, const void *src, int64_t bytes) {
  if (bytes > 0)
    std::memcpy(dst, src, bytes);
}

Buffers::~Buffers() {
  for (const Buffer &buffer : list)
    memory.release(buffer.block);
}

void *Buffers::floats(int32_t dtype, const std::vector<float> &values,
                      bool misaligned) {
  Tensor host(dtype, values);
  return add(dtype, values.size(), host.data(), misaligned);
}

void *Buffers::nans(int32_t dtype, int64_t n, bool misaligned) {
  Tensor host(dtype, n);
  return add(dtype, n, host.data(), misaligned);
}

int32_t *Buffers::ints(const std::vector<int32_t> &values) {
  return static_cast<int32_t *>(
      add(kInt32, values.size(), values.data(), false));
}

float *Buffers::scalar(float value) {
  return static_cast<float *>(floats(ZRT_F32, {value}));
}

void *Buffers::raw(const std::vector<unsigned char> &bytes) {
  return add(kBytes, bytes.size(), bytes.data(), false);
}

void *Buffers::add(int32_t dtype, int64_t n, const void *host,
                   bool misaligned) {
  const int64_t size = dtype == ZRT_BF16 ? 2 : dtype == kBytes ? 1 : 4;
  const int64_t offset = misaligned ? size : 0;
  Buffer buffer;
  buffer.block = memory.allocate(offset + n * size);
  buffer.data = static_cast<unsigned char *>(buffer.block) + offset;
  buffer.dtype = dtype;
  buffer.n = n;
  buffer.bytes = n * size;
  memory.write(buffer.data, host, buffer.bytes);
  list.push_back(buffer);
  return buffer.data;
}

const Buffers::Buffer &Buffers::find(const void *ptr) const {
  for (const Buffer &buffer : list)
    if (buffer.data == ptr)
      return buffer;
  std::fprintf(stderr, "internal error: unknown test buffer %p\n", ptr);
  std::exit(2);
}

std::vector<unsigned char> Buffers::readBytes(const void *ptr) const {
  const Buffer &buffer = find(ptr);
  std::vector<unsigned char> bytes(buffer.bytes);
  memory.read(bytes.data(), buffer.data, buffer.bytes);
  return bytes;
}

std::vector<float> Buffers::read(const void *ptr) const {
  const Buffer &buffer = find(ptr);
  std::vector<unsigned char> bytes = readBytes(ptr);
  std::vector<float> out(buffer.n);
  for (int64_t i = 0; i < buffer.n; ++i) {
    if (buffer.dtype == ZRT_BF16) {
      uint16_t half;
      std::memcpy(&half, &bytes[2 * i], 2);
      out[i] = fromBits((uint32_t)half << 16);
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

//===--- The harness ------------------------------------------------------===//

void Harness::close(const std::string &name, double tolerance,
                    const Body &body) {
  Buffers r(reference.memory), d(device.memory);
  std::vector<void *> referenceOut = body(reference.ctx, r);
  std::vector<void *> deviceOut = body(device.ctx, d);
  synchronizeDevice(device.ctx); // also reports a kernel's data error
  check.expectClose(name, worstOutputError(d, deviceOut, r, referenceOut),
                    tolerance);
}

void Harness::exact(const std::string &name, const Body &body) {
  Buffers r(reference.memory), d(device.memory);
  std::vector<void *> referenceOut = body(reference.ctx, r);
  std::vector<void *> deviceOut = body(device.ctx, d);
  synchronizeDevice(device.ctx);
  std::string difference = firstByteDifference(d, deviceOut, r, referenceOut);
  check.expectTrue(name + " (bit-exact)", difference.empty(), difference);
}

namespace {

//===--- GEMM (cuBLASLt) --------------------------------------------------===//

void testMatmul(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t m, n, k;
  };
  // Odd sizes in every transpose.
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
  // GPT-2's projections (batch 2 x 256 tokens, width 768: QKV, MLP and the
  // weight and input gradients).
  struct Big {
    int64_t m, n, k;
    int ta, tb;
    const char *what;
  };
  const std::vector<Big> big =
      pick<Big>(shapes, {},
                {{512, 2304, 768, 0, 0, "GPT-2 qkv"},
                 {512, 768, 3072, 0, 0, "GPT-2 mlp proj"},
                 {768, 3072, 512, 1, 0, "GPT-2 weight grad"},
                 {512, 768, 2304, 0, 1, "GPT-2 input grad"}});
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
void testMatmulBias(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t m, n, k;
    int ta, tb;
    const char *what;
  };
  const std::vector<Shape> list =
      pick<Shape>(shapes,
                  {{7, 13, 5, 0, 0, "7x13x5"},
                   {7, 13, 5, 1, 1, "7x13x5 transA transB"},
                   {33, 64, 17, 0, 0, "33x64x17"},
                   {33, 64, 17, 0, 1, "33x64x17 transB"},
                   {3, 8, 0, 0, 0, "k=0"}},
                  {{512, 3072, 768, 0, 0, "GPT-2 mlp fc"}});
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list)
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
                                  buf.floats(dtype, b), buf.floats(dtype, bias),
                                  c, pre, s.m, s.n, s.k, s.ta, s.tb, epilogue);
                  std::vector<void *> out{c};
                  if (gelu)
                    out.push_back(pre);
                  return out;
                });
      }
}

//===--- Copy-engine kernels ----------------------------------------------===//

void testSlices(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t rows, cols, offset, size;
    const char *what;
  };
  const std::vector<Shape> list = pick<Shape>(
      shapes, {{7, 12, 4, 4, "7x12 [4, 8)"}, {5, 13, 12, 1, "5x13 [12, 13)"}},
      {{512, 2304, 768, 768, "GPT-2 qkv -> k"}});
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " + s.what;
      auto x = randomVector(s.rows * s.cols),
           dy = randomVector(s.rows * s.size);
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

void testCopies(Harness &h, Harness shards[2], Shapes shapes) {
  for (int64_t bytes : pick<int64_t>(shapes, {0, 1, 13}, {(4 << 20) + 3})) {
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
  // Ranks 1 and 2 of 3: a full shard and the last, padded one.
  for (int32_t dtype : kDtypes)
    for (int64_t numel : {int64_t(10), int64_t(3 * 1000 + 1)})
      for (int r = 0; r < 2; ++r) {
        int64_t s = (numel + 2) / 3;
        auto full = randomVector(numel);
        shards[r].exact(std::string("shard_slice ") + dtypeName(dtype) +
                            " numel " + str(numel) + " rank " + str(r + 1) +
                            " of 3",
                        [&](zrt_context *ctx, Buffers &buf) {
                          void *out = buf.nans(dtype, s);
                          zrt_shard_slice(ctx, dtype, buf.floats(dtype, full),
                                          out, numel, s);
                          return std::vector<void *>{out};
                        });
      }
}

//===--- Elementwise, bias, casts, fill -----------------------------------===//

void testElementwise(Harness &h, Shapes shapes) {
  // 1: one element; 37: no full bf16 pack and a tail; 1007: packs and a
  // tail of 3 (f32) or 7 (bf16); misaligned: every element one by one;
  // 2^20 + 7: many blocks.
  struct Size {
    int64_t n;
    bool misaligned;
  };
  const std::vector<Size> sizes =
      pick<Size>(shapes, {{1, false}, {37, false}, {1007, false}, {1007, true}},
                 {{(1 << 20) + 7, false}});
  for (int32_t dtype : kDtypes)
    for (const Size &s : sizes) {
      const int64_t n = s.n;
      const bool mis = s.misaligned;
      std::string suffix = std::string(" ") + dtypeName(dtype) +
                           " n=" + str(n) + (mis ? " misaligned" : "");
      auto a = randomVector(n, -3, 3), b = randomVector(n, -3, 3);
      auto dy = randomVector(n);
      double e = tol(dtype, kElementwise);
      h.close("add" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis);
        void *pa = buf.floats(dtype, a, mis), *pb = buf.floats(dtype, b, mis);
        zrt_add(ctx, dtype, pa, pb, y, n);
        return std::vector<void *>{y};
      });
      h.close("add in place (y == a)" + suffix, e,
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.floats(dtype, a, mis);
                zrt_add(ctx, dtype, y, buf.floats(dtype, b, mis), y, n);
                return std::vector<void *>{y};
              });
      h.close("add in place (y == b)" + suffix, e,
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.floats(dtype, b, mis);
                zrt_add(ctx, dtype, buf.floats(dtype, a, mis), y, y, n);
                return std::vector<void *>{y};
              });
      h.exact("relu" + suffix, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis);
        zrt_relu(ctx, dtype, buf.floats(dtype, a, mis), y, n);
        return std::vector<void *>{y};
      });
      h.exact("relu_grad in place (dx == dy)" + suffix,
              [&](zrt_context *ctx, Buffers &buf) {
                void *d = buf.floats(dtype, dy, mis);
                zrt_relu_grad(ctx, dtype, buf.floats(dtype, a, mis), d, d, n);
                return std::vector<void *>{d};
              });
      h.close("gelu" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis);
        zrt_gelu(ctx, dtype, buf.floats(dtype, a, mis), y, n);
        return std::vector<void *>{y};
      });
      h.close("gelu_grad" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *dx = buf.nans(dtype, n, mis);
        zrt_gelu_grad(ctx, dtype, buf.floats(dtype, a, mis),
                      buf.floats(dtype, dy, mis), dx, n);
        return std::vector<void *>{dx};
      });
      h.close("gelu_grad in place (dx == dy)" + suffix, e,
              [&](zrt_context *ctx, Buffers &buf) {
                void *d = buf.floats(dtype, dy, mis);
                zrt_gelu_grad(ctx, dtype, buf.floats(dtype, a, mis), d, d, n);
                return std::vector<void *>{d};
              });
      h.close("swiglu" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n, mis);
        zrt_swiglu(ctx, dtype, buf.floats(dtype, a, mis),
                   buf.floats(dtype, b, mis), y, n);
        return std::vector<void *>{y};
      });
      h.close("swiglu_grad" + suffix, e, [&](zrt_context *ctx, Buffers &buf) {
        void *dgate = buf.nans(dtype, n, mis), *dup = buf.nans(dtype, n, mis);
        zrt_swiglu_grad(ctx, dtype, buf.floats(dtype, a, mis),
                        buf.floats(dtype, b, mis), buf.floats(dtype, dy, mis),
                        dgate, dup, n);
        return std::vector<void *>{dgate, dup};
      });
    }
}

void testBias(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t rows, cols;
  };
  // 7x13: scalar path; 5x24: 16-byte packs (24 is a multiple of 4 and 8);
  // 300x5: two row chunks in sum_rows; 0x3: sum_rows of no rows is zeros;
  // GPT-2's hidden width and vocabulary.
  const std::vector<Shape> list =
      pick<Shape>(shapes, {{1, 1}, {7, 13}, {5, 24}, {300, 5}, {0, 3}},
                  {{513, 768}, {3, 50257}});
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      auto x = randomVector(s.rows * s.cols), bias = randomVector(s.cols);
      if (s.rows > 0) {
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
                  zrt_bias_add(ctx, dtype, y, buf.floats(dtype, bias), y,
                               s.rows, s.cols);
                  return std::vector<void *>{y};
                });
      }
      h.close("sum_rows" + suffix, tol(dtype, kReduction),
              [&](zrt_context *ctx, Buffers &buf) {
                void *y = buf.nans(dtype, s.cols);
                zrt_sum_rows(ctx, dtype, buf.floats(dtype, x), y, s.rows,
                             s.cols);
                return std::vector<void *>{y};
              });
    }
}

/// Values whose bf16 rounding is delicate: ties to even both ways, the
/// largest values that round to infinity or not, infinities, subnormals;
/// then random ones.
std::vector<float> castInputs() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          1.0f + std::ldexp(1.0f, -8),     // tie -> 1
                          1.0f + 3 * std::ldexp(1.0f, -8), // tie -> up
                          -(1.0f + std::ldexp(1.0f, -8)),
                          fromBits(0x7f7fffffu), // FLT_MAX: rounds to inf
                          fromBits(0x7f7f7fffu), // just below the tie
                          INFINITY,
                          -INFINITY,
                          fromBits(0x00000001u), // smallest subnormal
                          1e-40f};
  std::vector<float> more = randomVector(301, -1e3f, 1e3f);
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

void testCastFill(Harness &h, Shapes shapes) {
  std::vector<float> values = castInputs();
  const int64_t n = values.size();
  for (int32_t from : kDtypes)
    for (int32_t to : kDtypes)
      h.exact(std::string("cast ") + dtypeName(from) + " -> " + dtypeName(to) +
                  " n=" + str(n),
              [&](zrt_context *ctx, Buffers &buf) {
                // The source as `from` holds it (bf16: rounded as the CPU
                // rounds): both sides start from the same bits.
                void *src = buf.floats(from, values);
                void *dst = buf.nans(to, n);
                zrt_cast(ctx, from, to, src, dst, n);
                return std::vector<void *>{dst};
              });
  // A NaN stays a NaN (compared as NaN, not by its payload bits); a NaN
  // whose payload lives only in the low 16 bits must not become infinity.
  std::vector<float> nans = {NAN, -NAN, fromBits(0x7f800001u),
                             fromBits(0xff800001u)};
  for (int32_t to : kDtypes)
    h.close(std::string("cast f32 -> ") + dtypeName(to) + " keeps NaN NaN", 0,
            [&](zrt_context *ctx, Buffers &buf) {
              void *dst = buf.floats(to, std::vector<float>(nans.size(), 1));
              zrt_cast(ctx, ZRT_F32, to, buf.floats(ZRT_F32, nans), dst,
                       nans.size());
              return std::vector<void *>{dst};
            });
  for (int32_t dtype : kDtypes)
    for (int64_t count : pick<int64_t>(shapes, {1, 1001}, {1 << 20}))
      for (float value : {-3.3f, -0.0f})
        h.exact(std::string("fill ") + dtypeName(dtype) + " n=" + str(count) +
                    " value " + (value == 0.0f ? "-0" : "-3.3"),
                [&](zrt_context *ctx, Buffers &buf) {
                  // One element past the end: must stay NaN. -3.3 is not a
                  // bf16 value: fill rounds it like a cast.
                  void *dst = buf.nans(dtype, count + 1);
                  zrt_fill(ctx, dtype, dst, count, value);
                  return std::vector<void *>{dst};
                });
}

//===--- Loss, embedding, norms, RoPE -------------------------------------===//

void testSoftmaxXent(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t rows, cols;
  };
  // 700 columns: more than the block's 512 threads, not a multiple of 32.
  const std::vector<Shape> list = pick<Shape>(
      shapes, {{3, 4}, {17, 1}, {9, 700}}, {{512, 256}, {64, 50257}});
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      // Large logits: the maximum must be subtracted before exponentiating.
      auto logits = randomVector(s.rows * s.cols, -20, 20);
      auto labels = randomInts(s.rows, (int32_t)s.cols);
      labels[0] = 0;
      labels[s.rows - 1] = (int32_t)s.cols - 1;
      const float divisor = 2.0f * s.rows, dloss = 0.75f;
      h.close("softmax_xent" + suffix, kReduction,
              [&](zrt_context *ctx, Buffers &buf) {
                float *loss = static_cast<float *>(buf.nans(ZRT_F32, 1));
                zrt_softmax_xent(ctx, dtype, buf.floats(dtype, logits),
                                 buf.ints(labels), loss, s.rows, s.cols,
                                 divisor);
                return std::vector<void *>{loss};
              });
      h.close("softmax_xent_grad" + suffix, tol(dtype, kReduction),
              [&](zrt_context *ctx, Buffers &buf) {
                void *dlogits = buf.nans(dtype, s.rows * s.cols);
                zrt_softmax_xent_grad(ctx, dtype, buf.floats(dtype, logits),
                                      buf.ints(labels), buf.scalar(dloss),
                                      dlogits, s.rows, s.cols, divisor);
                return std::vector<void *>{dlogits};
              });
      // Both in one pass, the gradient written over the logits.
      h.close("softmax_xent_fused" + suffix, tol(dtype, kReduction),
              [&](zrt_context *ctx, Buffers &buf) {
                float *loss = static_cast<float *>(buf.nans(ZRT_F32, 1));
                void *inPlace = buf.floats(dtype, logits);
                zrt_softmax_xent_fused(ctx, dtype, inPlace, buf.ints(labels),
                                       buf.scalar(dloss), loss, inPlace,
                                       s.rows, s.cols, divisor);
                return std::vector<void *>{loss, inPlace};
              });
    }
}

void testEmbedding(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t n, vocab, dim;
  };
  // Rows of 3, 20 and 300 elements: 12 / 6, 80 / 40 and 1200 / 600 bytes,
  // so 4-, 2- and 16-byte units, and rows wider than a block; GPT-2: 2x256
  // ids into its vocabulary.
  const std::vector<Shape> list = pick<Shape>(
      shapes, {{8, 5, 3}, {37, 11, 20}, {9, 4, 300}}, {{512, 50257, 768}});
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.n) + " ids, vocab " + str(s.vocab) + ", dim " +
                           str(s.dim);
      // Half the ids from a few rows (many repeats, which the gradient must
      // sum), half from the whole vocabulary; both ends included.
      std::vector<int32_t> ids = randomInts(s.n, (int32_t)s.vocab);
      std::vector<int32_t> few = randomInts(s.n / 2, 3);
      std::copy(few.begin(), few.end(), ids.begin());
      ids[s.n - 1] = (int32_t)s.vocab - 1;
      ids[s.n / 2] = 0;
      auto table = randomVector(s.vocab * s.dim);
      auto dout = randomVector(s.n * s.dim);
      h.exact("embedding" + suffix, [&](zrt_context *ctx, Buffers &buf) {
        void *out = buf.nans(dtype, s.n * s.dim);
        zrt_embedding(ctx, dtype, buf.ints(ids), buf.floats(dtype, table), out,
                      s.n, s.vocab, s.dim);
        return std::vector<void *>{out};
      });
      h.close("embedding_grad" + suffix, tol(dtype, kReduction),
              [&](zrt_context *ctx, Buffers &buf) {
                void *dtable = buf.nans(dtype, s.vocab * s.dim);
                zrt_embedding_grad(ctx, dtype, buf.ints(ids),
                                   buf.floats(dtype, dout), dtable, s.n,
                                   s.vocab, s.dim);
                return std::vector<void *>{dtable};
              });
    }
}

void testNorms(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t rows, cols;
  };
  // 9 rows: more than a block's 8 warps; 100, 257 and 1100 columns: a
  // partial last pass of the warp over the row.
  const std::vector<Shape> list =
      pick<Shape>(shapes, {{1, 1}, {7, 13}, {9, 100}, {3, 257}, {2, 1100}},
                  {{512, 768}, {3, 4099}});
  const float eps = 1e-5f;
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list) {
      std::string suffix = std::string(" ") + dtypeName(dtype) + " " +
                           str(s.rows) + "x" + str(s.cols);
      // An offset mean: the variance must not be computed as E[x^2]-E[x]^2
      // carelessly.
      auto x = randomVector(s.rows * s.cols, 2, 6);
      auto dy = randomVector(s.rows * s.cols);
      auto gamma = randomVector(s.cols, 0.5f, 1.5f);
      auto beta = randomVector(s.cols);
      const double r = tol(dtype, kReduction);
      const int64_t n = s.rows * s.cols;
      h.close("layer_norm" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n);
        zrt_layer_norm(ctx, dtype, buf.floats(dtype, x),
                       buf.floats(dtype, gamma), buf.floats(dtype, beta), y,
                       s.rows, s.cols, eps);
        return std::vector<void *>{y};
      });
      h.close(
          "layer_norm_grad" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
            void *dx = buf.nans(dtype, n);
            void *dgamma = buf.nans(dtype, s.cols);
            void *dbeta = buf.nans(dtype, s.cols);
            zrt_layer_norm_grad(ctx, dtype, buf.floats(dtype, x),
                                buf.floats(dtype, gamma), buf.floats(dtype, dy),
                                dx, dgamma, dbeta, s.rows, s.cols, eps);
            return std::vector<void *>{dx, dgamma, dbeta};
          });
      h.close("rms_norm" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
        void *y = buf.nans(dtype, n);
        zrt_rms_norm(ctx, dtype, buf.floats(dtype, x), buf.floats(dtype, gamma),
                     y, s.rows, s.cols, eps);
        return std::vector<void *>{y};
      });
      h.close("rms_norm_grad" + suffix, r, [&](zrt_context *ctx, Buffers &buf) {
        void *dx = buf.nans(dtype, n);
        void *dgamma = buf.nans(dtype, s.cols);
        zrt_rms_norm_grad(ctx, dtype, buf.floats(dtype, x),
                          buf.floats(dtype, gamma), buf.floats(dtype, dy), dx,
                          dgamma, s.rows, s.cols, eps);
        return std::vector<void *>{dx, dgamma};
      });
    }
}

void testRope(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t batch, seq, heads, headDim;
    float theta;
  };
  // head_dim 520: wider than one launch's inv_freq chunk; GPT-2-like
  // and Llama-3's theta at long positions.
  const std::vector<Shape> list =
      pick<Shape>(shapes,
                  {{1, 5, 3, 2, 10000.0f},
                   {2, 7, 2, 6, 10000.0f},
                   {1, 37, 2, 64, 500000.0f},
                   {1, 3, 1, 520, 10000.0f}},
                  {{2, 256, 12, 64, 10000.0f}, {1, 300, 4, 64, 500000.0f}});
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list)
      for (int inverse = 0; inverse < 2; ++inverse) {
        const int64_t n = s.batch * s.seq * s.heads * s.headDim;
        std::string suffix = std::string(" ") + dtypeName(dtype) + " batch " +
                             str(s.batch) + " seq " + str(s.seq) + " heads " +
                             str(s.heads) + " head_dim " + str(s.headDim) +
                             (inverse ? " inverse" : "");
        auto x = randomVector(n);
        std::vector<float> invFreq = ropeTestFrequencies(s.headDim, s.theta);
        h.close("rope" + suffix, tol(dtype, kReduction),
                [&](zrt_context *ctx, Buffers &buf) {
                  void *y = buf.nans(dtype, n);
                  zrt_rope(ctx, dtype, buf.floats(dtype, x), y, s.batch, s.seq,
                           s.heads, s.headDim, invFreq.data(), inverse);
                  return std::vector<void *>{y};
                });
        h.close("rope in place" + suffix, tol(dtype, kReduction),
                [&](zrt_context *ctx, Buffers &buf) {
                  void *y = buf.floats(dtype, x);
                  zrt_rope(ctx, dtype, y, y, s.batch, s.seq, s.heads, s.headDim,
                           invFreq.data(), inverse);
                  return std::vector<void *>{y};
                });
      }
}

//===--- Attention --------------------------------------------------------===//

/// The paths the CUDA backend has for attention at `dtype` and `headDim`:
/// the SIMT kernels always, the tensor-core ones first at bf16 with head_dim
/// 64 or 128.
std::vector<cuda::AttentionPath> attentionPaths(int32_t dtype,
                                                int64_t headDim) {
  if (dtype == ZRT_BF16 && (headDim == 64 || headDim == 128))
    return {cuda::AttentionPath::TensorCores, cuda::AttentionPath::Simt};
  return {cuda::AttentionPath::Simt};
}

/// Every shape on every kernel path the backend has for it; each check's
/// name ends with the path.
void testAttention(Harness &h, Shapes shapes) {
  struct Shape {
    int64_t batch, seq, heads, kvHeads, headDim;
  };
  // The SIMT kernels pad head_dim to 32 (1, 16), 64 (33, 40: zero-filled
  // columns; 64) or 128 (96, 128); seq 1, odd, and across several query,
  // key and dk/dv tiles; GQA groups 1, 2 and 4; batch 1 and 2. Full adds
  // GPT-2's (12 heads of 64, seq 256 and 1024) and a Llama-like GQA 8/2 at
  // head_dim 128.
  const std::vector<Shape> list = pick<Shape>(shapes,
                                              {{1, 1, 1, 1, 16},
                                               {1, 67, 4, 2, 16},
                                               {2, 33, 2, 2, 64},
                                               {1, 130, 4, 2, 64},
                                               {1, 21, 4, 1, 40},
                                               {1, 9, 2, 2, 128},
                                               {2, 70, 2, 1, 128},
                                               {1, 37, 2, 2, 96},
                                               {1, 5, 3, 1, 33},
                                               {1, 3, 1, 1, 1}},
                                              {{1, 1, 2, 1, 128},
                                               {2, 65, 8, 2, 128},
                                               {1, 256, 8, 2, 128},
                                               {2, 256, 12, 12, 64},
                                               {1, 1024, 12, 12, 64}});
  for (int32_t dtype : kDtypes)
    for (const Shape &s : list) {
      const int64_t tokens = s.batch * s.seq;
      const int64_t qn = tokens * s.heads * s.headDim;
      const int64_t kvn = tokens * s.kvHeads * s.headDim;
      auto q = randomVector(qn), k = randomVector(kvn), v = randomVector(kvn);
      auto dout = randomVector(qn);
      for (cuda::AttentionPath path : attentionPaths(dtype, s.headDim)) {
        cuda::setAttentionPath(path);
        std::string suffix =
            std::string(" ") + dtypeName(dtype) + " (batch " + str(s.batch) +
            " seq " + str(s.seq) + " heads " + str(s.heads) + "/" +
            str(s.kvHeads) + " head_dim " + str(s.headDim) + ") " +
            (path == cuda::AttentionPath::TensorCores ? "tensor cores"
                                                      : "SIMT");
        const double e = tol(dtype, kGemm, /*bf16Ulps=*/4);
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
}

//===--- Optimizer --------------------------------------------------------===//

void testOptimizer(Harness &h, Shapes shapes) {
  // 9001: two blocks of partial sums in either dtype (sum_squares only);
  // misaligned: no packs; 2^20 + 3: many blocks.
  struct Size {
    int64_t n;
    bool misaligned, adamw;
  };
  const std::vector<Size> sizes = pick<Size>(shapes,
                                             {{1, false, true},
                                              {1001, false, true},
                                              {9001, false, false},
                                              {1001, true, true}},
                                             {{(1 << 20) + 3, false, true}});
  for (int32_t dtype : kDtypes)
    for (const Size &sz : sizes) {
      const int64_t n = sz.n;
      const bool mis = sz.misaligned;
      std::string suffix = std::string(" ") + dtypeName(dtype) +
                           " n=" + str(n) + (mis ? " misaligned" : "");
      auto x = randomVector(n, -2, 2);
      h.close("sum_squares" + suffix, kReduction,
              [&](zrt_context *ctx, Buffers &buf) {
                float *out = static_cast<float *>(buf.nans(ZRT_F32, 1));
                zrt_sum_squares(ctx, dtype, buf.floats(dtype, x, mis), out, n);
                return std::vector<void *>{out};
              });
      if (!sz.adamw)
        continue;
      auto p = randomVector(n), g = randomVector(n);
      auto m = randomVector(n, -0.1f, 0.1f), v = randomVector(n, 0.0f, 0.01f);
      for (int scaled = 0; scaled < 2; ++scaled)
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          std::string what = std::string("adamw") + suffix +
                             (scaled ? " grad_scale 0.5" : " no grad_scale") +
                             (inPlace ? " in place" : "");
          // Parameters, moments and step are float32 whatever g's dtype.
          h.close(what, kElementwise, [&](zrt_context *ctx, Buffers &buf) {
            float *pIn = static_cast<float *>(buf.floats(ZRT_F32, p, mis));
            float *mIn = static_cast<float *>(buf.floats(ZRT_F32, m, mis));
            float *vIn = static_cast<float *>(buf.floats(ZRT_F32, v, mis));
            float *pOut = inPlace ? pIn : (float *)buf.nans(ZRT_F32, n, mis);
            float *mOut = inPlace ? mIn : (float *)buf.nans(ZRT_F32, n, mis);
            float *vOut = inPlace ? vIn : (float *)buf.nans(ZRT_F32, n, mis);
            const float *scale = scaled ? buf.scalar(0.5f) : nullptr;
            zrt_adamw(ctx, dtype, pIn, buf.floats(dtype, g, mis), mIn, vIn,
                      pOut, mOut, vOut, n, buf.scalar(1e-3f), buf.scalar(3.0f),
                      scale, buf.scalar(0.8f), buf.scalar(0.95f),
                      buf.scalar(1e-6f), buf.scalar(0.1f));
            return std::vector<void *>{pOut, mOut, vOut};
          });
          std::string lion = std::string("lion") + suffix +
                             (scaled ? " grad_scale 0.5" : " no grad_scale") +
                             (inPlace ? " in place" : "");
          h.close(lion, kElementwise, [&](zrt_context *ctx, Buffers &buf) {
            float *pIn = static_cast<float *>(buf.floats(ZRT_F32, p, mis));
            float *mIn = static_cast<float *>(buf.floats(ZRT_F32, m, mis));
            float *pOut = inPlace ? pIn : (float *)buf.nans(ZRT_F32, n, mis);
            float *mOut = inPlace ? mIn : (float *)buf.nans(ZRT_F32, n, mis);
            const float *scale = scaled ? buf.scalar(0.5f) : nullptr;
            zrt_lion(ctx, dtype, pIn, buf.floats(dtype, g, mis), mIn, pOut,
                     mOut, n, buf.scalar(1e-3f), scale, buf.scalar(0.8f),
                     buf.scalar(0.95f), buf.scalar(0.1f));
            return std::vector<void *>{pOut, mOut};
          });
        }
    }
  // n == 0: the sum is 0.
  h.exact("sum_squares f32 n=0", [&](zrt_context *ctx, Buffers &buf) {
    float *out = static_cast<float *>(buf.nans(ZRT_F32, 1));
    zrt_sum_squares(ctx, ZRT_F32, buf.nans(ZRT_F32, 1), out, 0);
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
              float *coef = static_cast<float *>(buf.nans(ZRT_F32, 1));
              zrt_clip_coefficient(ctx, buf.scalar(c.totalSq),
                                   buf.scalar(c.maxNorm), coef);
              return std::vector<void *>{coef};
            });
}

//===--- Exact sums (ZRT_EXACT) -------------------------------------------===//

/// Floats of magnitudes 2^-70 to 2^40, either sign.
std::vector<float> wideValues(int64_t n) {
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-70, 40), sign(0, 1);
  std::vector<float> values(n);
  for (float &v : values)
    v = std::ldexp(mantissa(testRng), exponent(testRng)) *
        (sign(testRng) ? -1.0f : 1.0f);
  return values;
}

/// The bytes of n exact elements: the conversions of wideValues, with the
/// NaN sentinel at every 97th.
std::vector<unsigned char> exactBytes(int64_t n) {
  std::vector<float> values = wideValues(n);
  std::vector<unsigned char> bytes(16 * n);
  for (int64_t i = 0; i < n; ++i)
    storeExact(bytes.data(), i, i % 97 == 96 ? kExactNaN : toExact(values[i]));
  return bytes;
}

/// The exact kernels give the CPU's bits (they are integer arithmetic): one
/// block and several, either dtype.
void testExact(Harness &h, Shapes shapes) {
  const std::vector<int64_t> sizes =
      pick<int64_t>(shapes, {1, 1001, 9001}, {(1 << 20) + 3});
  for (int32_t dtype : kDtypes)
    for (int64_t n : sizes) {
      std::string suffix =
          std::string(" ") + dtypeName(dtype) + " n=" + str(n);
      auto x = wideValues(n);
      auto acc = exactBytes(n);
      h.exact("accumulate_exact" + suffix, [&](zrt_context *ctx, Buffers &buf) {
        void *out = buf.raw(acc);
        zrt_accumulate_exact(ctx, dtype, buf.floats(dtype, x), out, n);
        return std::vector<void *>{out};
      });
      auto y = randomVector(n, -3, 3);
      for (int64_t i = 0; i < n; i += 5)
        y[i] *= 1e-9f; // squares that round below 2^-64
      auto start = exactBytes(1);
      h.exact("sum_squares_exact" + suffix, [&](zrt_context *ctx,
                                                Buffers &buf) {
        void *out = buf.raw(start);
        zrt_sum_squares_exact(ctx, dtype, buf.floats(dtype, y), out, n);
        return std::vector<void *>{out};
      });
    }
  const auto unchanged = exactBytes(1);
  h.exact("sum_squares_exact f32 n=0", [&](zrt_context *ctx, Buffers &buf) {
    void *out = buf.raw(unchanged);
    zrt_sum_squares_exact(ctx, ZRT_F32, buf.nans(ZRT_F32, 1), out, 0);
    return std::vector<void *>{out};
  });
  for (int64_t n : pick<int64_t>(shapes, {1, 4001}, {(1 << 20) + 3})) {
    auto in = exactBytes(n);
    h.exact("from_exact n=" + str(n), [&](zrt_context *ctx, Buffers &buf) {
      float *out = static_cast<float *>(buf.nans(ZRT_F32, n));
      zrt_from_exact(ctx, buf.raw(in), out, n);
      return std::vector<void *>{out};
    });
  }
  const auto before = exactBytes(1001);
  for (float value : {0.0f, -3.3f})
    h.exact("fill exact n=1001 value " + std::to_string(value),
            [&](zrt_context *ctx, Buffers &buf) {
              void *out = buf.raw(before);
              zrt_fill(ctx, ZRT_EXACT, out, 1001, value);
              return std::vector<void *>{out};
            });
}

} // namespace

//===--- Every family -----------------------------------------------------===//

void runKernelChecks(Harness &h, Harness shards[2], Shapes shapes) {
  const cuda::AttentionPath initialPath = cuda::attentionPath();
  testMatmul(h, shapes);
  testMatmulBias(h, shapes);
  testBias(h, shapes);
  testElementwise(h, shapes);
  testSlices(h, shapes);
  testSoftmaxXent(h, shapes);
  testEmbedding(h, shapes);
  testNorms(h, shapes);
  testRope(h, shapes);
  testAttention(h, shapes);
  cuda::setAttentionPath(initialPath);
  testOptimizer(h, shapes);
  testCastFill(h, shapes);
  testCopies(h, shards, shapes);
  testExact(h, shapes);
}

//===--- Data faults ------------------------------------------------------===//

int runDataFault(const Side &device, const std::string &fault) {
  Buffers buf(device.memory);
  if (fault == "bad-label") {
    void *logits = buf.floats(ZRT_F32, std::vector<float>(3 * 4, 0.0f));
    zrt_softmax_xent(device.ctx, ZRT_F32, logits, buf.ints({0, 3, 4}),
                     static_cast<float *>(buf.nans(ZRT_F32, 1)), 3, 4, 3.0f);
  } else if (fault == "bad-id") {
    void *table = buf.floats(ZRT_BF16, std::vector<float>(5 * 2, 1.0f));
    zrt_embedding(device.ctx, ZRT_BF16, buf.ints({0, 4, 5}), table,
                  buf.nans(ZRT_BF16, 3 * 2), 3, 5, 2);
  } else {
    return -1;
  }
  synchronizeDevice(device.ctx);
  std::printf("fault %s did not stop the program\n", fault.c_str());
  return 0;
}

} // namespace zrt::cuda::test

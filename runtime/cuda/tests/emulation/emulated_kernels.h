//===- emulated_kernels.h - The CUDA kernels on the emulator ----*- C++ -*-===//
//
// The CUDA backend's entry points of cuda/kernels.h, minus the context,
// running the same kernels (cuda/*_kernels.cuh) with the same launch
// configurations as the .cu files, but over the host emulator of
// cuda_emulation.h: pointers are host pointers and every call returns when
// its kernels have run. What a .cu file does with a library (CUB's sort in
// the embedding gradient) or the copy engine (memsets) is done here on the
// host. Plain C++ with no CUDA type, so that the test that compares these
// with the CPU backend (kernels_emulation_test.cpp) includes no emulated
// CUDA header.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_EMULATION_EMULATED_KERNELS_H
#define ZRT_CUDA_TESTS_EMULATION_EMULATED_KERNELS_H

#include "cuda/device_error.cuh"

#include <cstdint>
#include <string>

namespace zrt::cuda::emulated {

/// OS threads the emulator spreads a launch's blocks over.
void setWorkers(int workers);
/// emu::fault (cuda_emulation.h): a primitive broken on purpose.
void setFault(const std::string &fault);

// elementwise_kernels.cuh
void biasAdd(int32_t dtype, const void *x, const void *bias, void *y,
             int64_t rows, int64_t cols);
void sumRows(int32_t dtype, const void *x, void *y, int64_t rows, int64_t cols);
void add(int32_t dtype, const void *a, const void *b, void *y, int64_t n);
void relu(int32_t dtype, const void *x, void *y, int64_t n);
void reluGrad(int32_t dtype, const void *x, const void *dy, void *dx,
              int64_t n);
void gelu(int32_t dtype, const void *x, void *y, int64_t n);
void geluGrad(int32_t dtype, const void *x, const void *dy, void *dx,
              int64_t n);
void swiglu(int32_t dtype, const void *gate, const void *up, void *y,
            int64_t n);
void swigluGrad(int32_t dtype, const void *gate, const void *up, const void *dy,
                void *dgate, void *dup, int64_t n);
void cast(int32_t srcDtype, int32_t dstDtype, const void *src, void *dst,
          int64_t n);

// softmax_xent_kernels.cuh
void softmaxXent(int32_t dtype, const void *logits, const int32_t *labels,
                 float *loss, int64_t rows, int64_t cols, float divisor,
                 DeviceError *errors);
void softmaxXentGrad(int32_t dtype, const void *logits, const int32_t *labels,
                     const float *dloss, void *dlogits, int64_t rows,
                     int64_t cols, float divisor, DeviceError *errors);

// embedding_kernels.cuh
void embedding(int32_t dtype, const int32_t *ids, const void *table, void *out,
               int64_t n, int64_t vocab, int64_t dim, DeviceError *errors);
void embeddingGrad(int32_t dtype, const int32_t *ids, const void *dout,
                   void *dtable, int64_t n, int64_t vocab, int64_t dim,
                   DeviceError *errors);

// norms_kernels.cuh
void layerNorm(int32_t dtype, const void *x, const void *gamma,
               const void *beta, void *y, int64_t rows, int64_t cols,
               float eps);
void layerNormGrad(int32_t dtype, const void *x, const void *gamma,
                   const void *dy, void *dx, void *dgamma, void *dbeta,
                   int64_t rows, int64_t cols, float eps);
void rmsNorm(int32_t dtype, const void *x, const void *gamma, void *y,
             int64_t rows, int64_t cols, float eps);
void rmsNormGrad(int32_t dtype, const void *x, const void *gamma,
                 const void *dy, void *dx, void *dgamma, int64_t rows,
                 int64_t cols, float eps);

// rope_kernels.cuh
void rope(int32_t dtype, const void *x, void *y, int64_t batch, int64_t seq,
          int64_t heads, int64_t headDim, float theta, int32_t inverse);

// attention_kernels.cuh (the SIMT kernels, every dtype and head_dim)
void attention(int32_t dtype, const void *q, const void *k, const void *v,
               void *out, int64_t batch, int64_t seq, int64_t heads,
               int64_t kvHeads, int64_t headDim);
void attentionGrad(int32_t dtype, const void *q, const void *k, const void *v,
                   const void *dout, void *dq, void *dk, void *dv,
                   int64_t batch, int64_t seq, int64_t heads, int64_t kvHeads,
                   int64_t headDim);

// optimizer_kernels.cuh
void sumSquares(int32_t dtype, const void *x, float *out, int64_t n);
void clipCoefficient(const float *totalSq, const float *maxNorm, float *coef);
void adamw(int32_t gradDtype, const float *p, const void *g, const float *m,
           const float *v, float *pOut, float *mOut, float *vOut, int64_t n,
           const float *lr, const float *step, const float *gradScale,
           float beta1, float beta2, float eps, float weightDecay);

// memory_ops_kernels.cuh
void fill(int32_t dtype, void *dst, int64_t n, float value);

} // namespace zrt::cuda::emulated

#endif // ZRT_CUDA_TESTS_EMULATION_EMULATED_KERNELS_H

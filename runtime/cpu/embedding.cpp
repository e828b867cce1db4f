//===- embedding.cpp - Token embedding lookup and its gradient ------------===//
//
// The gradient scatters rows of dout into the table. Rows are grouped by id
// (a stable sort of the positions) so that each table row is accumulated in
// float32 once, in position order, and rounded once: bf16 would otherwise
// round after every repeated token, and the order would not matter for f32
// only by luck.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

using namespace zrt;

/// Stops the job on the first id outside [0, vocab): one rank may be the only
/// one holding a bad token, hence fatal (MPI_Abort).
static void checkIds(const char *kernel, const int32_t *ids, int64_t n,
                     int64_t vocab) {
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      fatal("%s: id %d in row %lld is outside [0, %lld)", kernel, ids[i],
            (long long)i, (long long)vocab);
}

void zrt::cpu::embedding(zrt_context *, int32_t dtype, const int32_t *ids,
                         const void *table, void *out, int64_t n, int64_t vocab,
                         int64_t dim) {
  int64_t rowBytes = dim * floatDtypeSize("zrt_embedding", dtype);
  checkIds("zrt_embedding", ids, n, vocab);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy((char *)out + i * rowBytes,
                (const char *)table + ids[i] * rowBytes, rowBytes);
}

void zrt::cpu::embeddingGrad(zrt_context *, int32_t dtype, const int32_t *ids,
                             const void *dout, void *dtable, int64_t n,
                             int64_t vocab, int64_t dim) {
  int64_t size = floatDtypeSize("zrt_embedding_grad", dtype);
  checkIds("zrt_embedding_grad", ids, n, vocab);
  std::memset(dtable, 0, vocab * dim * size);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return ids[x] < ids[y]; });
  dispatchDtype("zrt_embedding_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    std::vector<float> sum(dim);
    for (int64_t first = 0; first < n;) {
      int32_t id = ids[order[first]];
      std::fill(sum.begin(), sum.end(), 0.0f);
      int64_t last = first;
      for (; last < n && ids[order[last]] == id; ++last) {
        const T *row = (const T *)dout + order[last] * dim;
        for (int64_t c = 0; c < dim; ++c)
          sum[c] += load(row, c);
      }
      for (int64_t c = 0; c < dim; ++c)
        store((T *)dtable + id * dim, c, sum[c]);
      first = last;
    }
  });
}

//===- dtype.cpp - float32 views of f32 and bf16 tensors ------------------===//

#include "cpu/dtype.h"
#include "cpu/vector_math.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

namespace zrt {

namespace {
struct FreeBlock {
  std::unique_ptr<float[]> block;
  int64_t capacity;
};
// Per thread: the compute thread and the communication thread never share a
// block, and no lock is needed.
thread_local std::vector<FreeBlock> freeBlocks;
} // namespace

ScratchLease::ScratchLease(int64_t n) {
  std::optional<size_t> fits;
  for (size_t i = 0; i < freeBlocks.size(); ++i)
    if (freeBlocks[i].capacity >= n &&
        (!fits || freeBlocks[i].capacity < freeBlocks[*fits].capacity))
      fits = i;
  if (fits) {
    block = std::move(freeBlocks[*fits].block);
    capacity = freeBlocks[*fits].capacity;
    freeBlocks.erase(freeBlocks.begin() + *fits);
    return;
  }
  // Every free block is too small: give the largest back to the allocator
  // rather than keep it beside the new one.
  auto largest = std::max_element(freeBlocks.begin(), freeBlocks.end(),
                                  [](const FreeBlock &a, const FreeBlock &b) {
                                    return a.capacity < b.capacity;
                                  });
  if (largest != freeBlocks.end())
    freeBlocks.erase(largest);
  block.reset(new float[std::max<int64_t>(n, 1)]);
  capacity = n;
}

ScratchLease::~ScratchLease() {
  if (block)
    freeBlocks.push_back({std::move(block), capacity});
}

FloatInput::FloatInput(const char *kernel, int32_t dtype, const void *data,
                       int64_t n) {
  ptr = (const float *)data;
  dispatchDtype(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      float *wide = copy.emplace(n).get();
      ZRT_VECTORIZE
      for (int64_t i = 0; i < n; ++i)
        wide[i] = load((const T *)data, i);
      ptr = wide;
    }
  });
}

FloatOutput::FloatOutput(const char *kernel, int32_t dtype, void *data,
                         int64_t n)
    : ptr((float *)data), destination(data), dtype(dtype), n(n) {
  // Validates the dtype now, before the kernel writes anything.
  floatDtypeSize(kernel, dtype);
  if (dtype != ZRT_F32)
    ptr = scratch.emplace(n).get();
}

void FloatOutput::commit() {
  if (dtype != ZRT_BF16)
    return;
  Bf16 *narrow = (Bf16 *)destination;
  ZRT_VECTORIZE
  for (int64_t i = 0; i < n; ++i)
    store(narrow, i, ptr[i]);
}

} // namespace zrt

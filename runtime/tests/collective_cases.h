//===- collective_cases.h - Collective checks of both backends --*- C++ -*-===//
//
// The collective checks of zrt-collective-tests (CPU backend, host memory)
// and zrt-cuda-collective-tests (NCCL, device memory) are one set of cases:
// only where the tensors live and how a context is made differ, and a
// BufferAdapter says that. Each binary adds what is its own (the CPU one
// overlap and MPI faults, the CUDA one stream ordering) around
// runCollectiveCases.
//
// The cases run once per dtype (f32, bf16), each on a context of its own so
// that its byte counters can be checked against its element size. Inputs are
// small integers and halves (below 256, where bf16 still holds every
// integer), so every expected value is exact in both dtypes whatever order
// MPI or NCCL sums in. The asynchronous forms run the same kinds of cases
// started back to back, several outstanding at once, and must give the
// blocking forms' bytes whatever the order of the waits.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_TESTS_COLLECTIVE_CASES_H
#define ZRT_TESTS_COLLECTIVE_CASES_H

#include "tests/checker.h"
#include "zero/zrt.h"

#include <cstdint>
#include <vector>

namespace zrt {

/// Where a test binary's tensors live and how it makes its contexts.
class BufferAdapter {
public:
  virtual ~BufferAdapter() = default;

  /// A context on MPI_COMM_WORLD ready for collectives, with the groups of
  /// a program that declares shard groups of `shardGroupSize` ranks (0:
  /// none; see prepareShardGroups); destroyContext releases it.
  virtual zrt_context *makeContext(int64_t shardGroupSize = 0) const = 0;
  virtual void *allocate(zrt_context *ctx, int64_t bytes) const = 0;
  virtual void release(zrt_context *ctx, void *ptr) const = 0;
  /// Copies `bytes` host bytes at `src` into the buffer `dst`.
  virtual void upload(zrt_context *ctx, void *dst, const void *src,
                      int64_t bytes) const = 0;
  /// Copies `bytes` of the buffer `src` to the host once everything queued
  /// on `ctx` has finished.
  virtual void download(zrt_context *ctx, void *dst, const void *src,
                        int64_t bytes) const = 0;
  /// The name of the byte-counter check (its dtype is inserted after the
  /// first word).
  virtual const char *bytesCheckName() const { return "counters (bytes)"; }
};

/// A tensor of `dtype` in an adapter's memory, built from and read back as
/// floats.
class BufferTensor {
public:
  BufferTensor(const BufferAdapter &memory, zrt_context *ctx, int32_t dtype,
               const std::vector<float> &values);
  /// `n` NaNs: an element a collective must not write stays NaN.
  BufferTensor(const BufferAdapter &memory, zrt_context *ctx, int32_t dtype,
               int64_t n);
  ~BufferTensor();
  BufferTensor(const BufferTensor &) = delete;
  BufferTensor &operator=(const BufferTensor &) = delete;

  void *data() { return ptr; }
  /// Waits for everything queued on the context, then reads the tensor back.
  std::vector<float> values() const;

private:
  const BufferAdapter &memory;
  zrt_context *ctx;
  int32_t dtype;
  int64_t n;
  void *ptr;
};

/// Prints the world size (rank 0), then runs every shared case through
/// `memory`: all_gather, reduce_scatter (with padding), all_reduce, the
/// shard_slice round trip and the counters in each dtype, bf16's rounding
/// of pair sums, and the asynchronous forms waited in three orders.
void runCollectiveCases(Checker &check, const BufferAdapter &memory);

/// Declares on a fresh context (before a device backend attaches) a program
/// of the world's size that shards over groups of `shardGroupSize` ranks
/// (nothing when 0), validates it and forms its groups, as zrt_run does.
void prepareShardGroups(zrt_context *ctx, int64_t shardGroupSize);

/// The world ranks of `group` as this rank sees them, in the group's order:
/// the world; the G consecutive ranks of its shard group; the ranks of its
/// replica group (rank % G alike). Without shard groups (shardGroupSize 0)
/// the shard group is the world and the replica group this rank alone.
std::vector<int> groupMembers(int rank, int worldSize, int64_t shardGroupSize,
                              int32_t group);

/// Prints the world size and shard group size (rank 0), then checks the
/// collectives over every zrt_group on contexts with shard groups of
/// `shardGroupSize` (0: none): the groups' ranks and sizes; all_gather,
/// reduce_scatter (padded) and all_reduce, blocking and started, in each
/// dtype, on distinct random data of every rank against sums made here
/// over the group's ranks; and the bytes counted per group.
void runGroupCases(Checker &check, const BufferAdapter &memory,
                   int64_t shardGroupSize);

} // namespace zrt

#endif // ZRT_TESTS_COLLECTIVE_CASES_H

//===- cuda_emulation.cpp - CUDA's execution model on the host, for tests -===//
//
// The fibers, barriers and warp collectives of cuda_emulation.h (read its
// comment first), and mma.cuh's primitives over them.
//
//===----------------------------------------------------------------------===//

#include "cuda_emulation.h"

#include <ucontext.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace emu {

std::string fault;

namespace {

constexpr size_t kStackBytes = 256 << 10;
constexpr int kWarpSize = 32;

struct Fiber {
  ucontext_t context;
  dim3 index;
  int linear = 0;
  bool done = false;
  unsigned warpOps = 0; // collectives so far: picks the slot set
};

/// A warp's barrier and its two sets of exchange slots.
struct Warp {
  unsigned lanes = kWarpSize; // fewer in a block's partial last warp
  unsigned arrived = 0, generation = 0;
  const char *op[2][kWarpSize];
  alignas(16) unsigned char slots[2][kWarpSize][kSlotBytes];
};

/// One OS thread's blocks: the fibers of the block it runs now.
struct Worker {
  ucontext_t scheduler;
  std::vector<Fiber> fibers;
  std::vector<std::unique_ptr<char[]>> stacks;
  std::vector<Warp> warps;
  std::unique_ptr<uint4[]> shared;
  size_t sharedBytes = 0;
  dim3 block, blockSize, grid;
  unsigned arrived = 0, generation = 0; // __syncthreads
  Fiber *current = nullptr;
  const std::function<void()> *body = nullptr;
  bool progress = false; // since the scheduler's last round
};

thread_local Worker *worker = nullptr;

Worker &self() {
  if (!worker)
    fail("a CUDA builtin was used outside an emulated kernel");
  return *worker;
}

/// Back to the scheduler until it resumes this fiber.
void yield() {
  Worker &w = *worker;
  swapcontext(&w.current->context, &w.scheduler);
}

/// Arrives at a barrier of `count` threads; returns once all have arrived.
void barrier(unsigned &arrived, unsigned &generation, unsigned count) {
  Worker &w = *worker;
  const unsigned mine = generation;
  if (++arrived == count) {
    arrived = 0;
    ++generation;
    w.progress = true;
    return;
  }
  while (generation == mine)
    yield();
  w.progress = true;
}

void fiberMain() {
  Worker &w = *worker;
  (*w.body)();
  w.current->done = true;
  // Returning resumes uc_link: the scheduler.
}

dim3 unflatten(size_t linear, const dim3 &size) {
  return dim3((unsigned)(linear % size.x), (unsigned)(linear / size.x % size.y),
              (unsigned)(linear / size.x / size.y));
}

/// Runs every thread of block `linear` to completion, round-robin.
void runBlock(Worker &w, size_t linear) {
  w.block = unflatten(linear, w.grid);
  const size_t threads = w.fibers.size();
  std::memset(w.shared.get(), 0xff, w.sharedBytes);
  w.arrived = w.generation = 0;
  for (Warp &warp : w.warps)
    warp.arrived = warp.generation = 0;
  for (size_t i = 0; i < threads; ++i) {
    Fiber &f = w.fibers[i];
    f.index = unflatten(i, w.blockSize);
    f.linear = (int)i;
    f.done = false;
    f.warpOps = 0;
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = w.stacks[i].get();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &w.scheduler;
    makecontext(&f.context, fiberMain, 0);
  }
  size_t remaining = threads;
  while (remaining > 0) {
    w.progress = false;
    for (Fiber &f : w.fibers) {
      if (f.done)
        continue;
      w.current = &f;
      swapcontext(&w.scheduler, &f.context);
      if (f.done) {
        --remaining;
        w.progress = true;
      }
    }
    if (!w.progress)
      fail("deadlock in block (%u, %u, %u): %zu threads wait at barriers "
           "that cannot complete (divergent __syncthreads or warp "
           "collective, or a thread exited early)",
           w.block.x, w.block.y, w.block.z, remaining);
  }
  w.current = nullptr;
}

void runBlocks(dim3 grid, dim3 block, size_t sharedBytes,
               const std::function<void()> &body, size_t first, size_t step) {
  Worker w;
  w.grid = grid;
  w.blockSize = block;
  w.body = &body;
  const size_t threads = (size_t)block.x * block.y * block.z;
  w.fibers.resize(threads);
  for (size_t i = 0; i < threads; ++i)
    w.stacks.emplace_back(new char[kStackBytes]);
  w.warps.resize((threads + kWarpSize - 1) / kWarpSize);
  for (size_t i = 0; i < w.warps.size(); ++i)
    w.warps[i].lanes =
        (unsigned)std::min<size_t>(kWarpSize, threads - i * kWarpSize);
  w.sharedBytes = sharedBytes;
  w.shared.reset(new uint4[(sharedBytes + 15) / 16 + 1]);
  worker = &w;
  const size_t blocks = (size_t)grid.x * grid.y * grid.z;
  for (size_t b = first; b < blocks; b += step)
    runBlock(w, b);
  worker = nullptr;
}

} // namespace

void fail(const char *format, ...) {
  std::fflush(stdout);
  std::fprintf(stderr, "emulation error: ");
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  std::_Exit(1); // other workers may still run: no exit handlers
}

const dim3 &threadIndex() { return self().current->index; }
const dim3 &blockIndex() { return self().block; }
const dim3 &blockDimension() { return self().blockSize; }
const dim3 &gridDimension() { return self().grid; }
int laneId() { return self().current->linear % kWarpSize; }
int warpLanes() {
  Worker &w = self();
  return (int)w.warps[w.current->linear / kWarpSize].lanes;
}
unsigned char *sharedMemory() {
  return reinterpret_cast<unsigned char *>(self().shared.get());
}
size_t sharedMemoryBytes() { return self().sharedBytes; }

void syncThreads() {
  Worker &w = self();
  barrier(w.arrived, w.generation, (unsigned)w.fibers.size());
}

const unsigned char *warpExchange(const char *op, const void *data,
                                  size_t bytes) {
  Worker &w = self();
  Fiber &f = *w.current;
  const int lane = f.linear % kWarpSize;
  Warp &warp = w.warps[f.linear / kWarpSize];
  const unsigned set = f.warpOps++ & 1u;
  if (bytes > kSlotBytes)
    fail("%s: %zu bytes exceed a warp exchange slot", op, bytes);
  if (bytes > 0)
    std::memcpy(warp.slots[set][lane], data, bytes);
  warp.op[set][lane] = op;
  barrier(warp.arrived, warp.generation, warp.lanes);
  for (int l = 0; l < (int)warp.lanes; ++l)
    if (std::strcmp(warp.op[set][l], op) != 0)
      fail("divergent warp collective in block %u warp %d: lane %d at %s, "
           "lane %d at %s",
           w.block.x, f.linear / kWarpSize, lane, op, l, warp.op[set][l]);
  return &warp.slots[set][0][0];
}

const unsigned char *shuffle(const char *op, const void *data, size_t bytes,
                             int source) {
  const unsigned char *slots = warpExchange(op, data, bytes);
  if (source < 0 || source >= warpLanes())
    fail("%s: lane %d reads lane %d of a warp of %d lanes", op, laneId(),
         source, warpLanes());
  return slots + (size_t)source * kSlotBytes;
}

void launch(dim3 grid, dim3 block, size_t sharedBytes,
            const std::function<void()> &body, int workers) {
  const size_t threads = (size_t)block.x * block.y * block.z;
  if (threads == 0 || threads > 1024)
    fail("a block of %zu threads (must be 1 to 1024)", threads);
  const size_t blocks = (size_t)grid.x * grid.y * grid.z;
  const size_t count = std::max<size_t>(1, std::min<size_t>(workers, blocks));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < count; ++i)
    pool.emplace_back(runBlocks, grid, block, sharedBytes, std::cref(body), i,
                      count);
  runBlocks(grid, block, sharedBytes, body, 0, count);
  for (std::thread &thread : pool)
    thread.join();
}

} // namespace emu

//===--- mma.cuh's primitives ---------------------------------------------===//

namespace zrt::cuda::tc {
namespace {

uint16_t readBits(const unsigned char *address) {
  uint16_t bits;
  std::memcpy(&bits, address, 2);
  return bits;
}

/// The address lane `lane` posted to an ldmatrix.
const unsigned char *postedRow(const unsigned char *slots, int lane) {
  const unsigned char *row;
  std::memcpy(&row, slots + (size_t)lane * emu::kSlotBytes, sizeof(row));
  return row;
}

void ldmatrix(uint32_t (&r)[4], const Bf16 *row, bool trans) {
  const char *op = trans ? "ldmatrix.x4.trans" : "ldmatrix.x4";
  const unsigned char *base = emu::sharedMemory();
  const unsigned char *address = reinterpret_cast<const unsigned char *>(row);
  if (address < base || address + 16 > base + emu::sharedMemoryBytes() ||
      (address - base) % 16 != 0)
    emu::fail("%s: lane %d's row address %p is not a 16-byte aligned row "
              "inside the block's %zu bytes of shared memory",
              op, emu::laneId(), (const void *)row, emu::sharedMemoryBytes());
  const unsigned char *slots = emu::warpExchange(op, &address, sizeof(address));
  if (emu::fault == "ldmatrix-trans")
    trans = false;
  const int lane = emu::laneId(), group = lane / 4, pair = lane % 4;
  for (int i = 0; i < 4; ++i) {
    uint16_t lo, hi;
    if (!trans) {
      // Row `group` of matrix i, columns 2 pair and 2 pair + 1.
      const unsigned char *source = postedRow(slots, 8 * i + group);
      lo = readBits(source + 2 * (2 * pair));
      hi = readBits(source + 2 * (2 * pair + 1));
    } else {
      // Column `group` of matrix i, rows 2 pair and 2 pair + 1.
      lo = readBits(postedRow(slots, 8 * i + 2 * pair) + 2 * group);
      hi = readBits(postedRow(slots, 8 * i + 2 * pair + 1) + 2 * group);
    }
    r[i] = (uint32_t)lo | (uint32_t)hi << 16;
  }
}

struct MmaOperands {
  uint32_t a[4];
  uint32_t b[2];
};

MmaOperands postedOperands(const unsigned char *slots, int lane) {
  MmaOperands operands;
  std::memcpy(&operands, slots + (size_t)lane * emu::kSlotBytes,
              sizeof(operands));
  return operands;
}

float halfOf(uint32_t pair, int high) {
  return high ? highBf16(pair) : lowBf16(pair);
}

} // namespace

void ldmatrixX4(uint32_t (&r)[4], const Bf16 *row) { ldmatrix(r, row, false); }
void ldmatrixX4Trans(uint32_t (&r)[4], const Bf16 *row) {
  ldmatrix(r, row, true);
}

void mmaBf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  MmaOperands mine;
  std::memcpy(mine.a, a, sizeof(mine.a));
  mine.b[0] = b0;
  mine.b[1] = b1;
  const unsigned char *slots =
      emu::warpExchange("mma.m16n8k16", &mine, sizeof(mine));
  const bool brokenB = emu::fault == "mma-b-layout";
  // A[row][k]: lane (row % 8) * 4 + (k % 8) / 2, register row / 8 + 2 (k / 8),
  // half k % 2. B[k][col]: lane col * 4 + (k % 8) / 2, register k / 8, half
  // k % 2.
  auto elementA = [&](int row, int k) {
    MmaOperands owner = postedOperands(slots, row % 8 * 4 + k % 8 / 2);
    return halfOf(owner.a[row / 8 + 2 * (k / 8)], k % 2);
  };
  auto elementB = [&](int k, int col) {
    MmaOperands owner = postedOperands(slots, col * 4 + k % 8 / 2);
    return halfOf(owner.b[k / 8], (k % 2) ^ (int)brokenB);
  };
  const int lane = emu::laneId(), group = lane / 4, pair = lane % 4;
  for (int i = 0; i < 4; ++i) {
    // d0, d1: row group; d2, d3: row group + 8; columns 2 pair + i % 2.
    const int row = group + 8 * (i / 2), col = 2 * pair + i % 2;
    double sum = 0.0;
    for (int k = 0; k < 16; ++k)
      sum += (double)elementA(row, k) * (double)elementB(k, col);
    d[i] = (float)((double)d[i] + sum);
  }
}

} // namespace zrt::cuda::tc

//===- device_context.h - The CUDA state of a context -----------*- C++ -*-===//
//
// A context on a GPU owns two streams: every kernel runs on the compute
// stream, every collective on the communication stream, so NCCL transfers
// overlap the kernels issued after them. (A third, the copy stream, carries
// the optimizer offload's uploads from the host-task thread: see
// core/device.h's ordered copies.) The two streams meet only through
// events: a collective's stream waits for an event recorded on the compute
// stream when it starts (its inputs were produced by kernels), and zrt_wait
// makes the compute stream wait for the collective's completion event. No
// host thread blocks on either until the driver synchronises after a step,
// which is also where a kernel's data error (a bad label) is reported and
// where a collective that never completes is caught by a watchdog.
//
// Memory comes from the stream-ordered allocator on the compute stream
// (cudaMallocAsync / cudaFreeAsync): a buffer freed right after its last
// kernel is reused only after that kernel ran, without the device-wide
// synchronisation that cudaFree implies on every call (a step frees hundreds
// of buffers). Buffers a collective reads or writes are freed only after its
// wait, which orders the compute stream behind the collective.
//
// Internal to the CUDA backend (device_context.cpp, nccl_collectives.cpp,
// kernels_table.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_DEVICE_CONTEXT_H
#define ZRT_CUDA_DEVICE_CONTEXT_H

#include "core/context.h"
#include "core/device.h"
#include "cuda/kernels.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace zrt::cuda {

/// One collective started on the communication stream and not yet retired
/// (retired: waited for, and complete at a synchronisation).
struct InFlight {
  int64_t handle;
  CollectiveInfo info;
  int64_t countedBytes;
  cudaEvent_t done; // recorded on the communication stream after it
  bool waited;
};

class CudaRuntime final : public DeviceRuntime {
public:
  /// Sets up `gpu` for `ctx` (see backend.h's attach).
  CudaRuntime(zrt_context *ctx, int gpu);
  ~CudaRuntime() override;
  CudaRuntime(const CudaRuntime &) = delete;
  CudaRuntime &operator=(const CudaRuntime &) = delete;

  // DeviceRuntime (memory, transfers, synchronisation: device_context.cpp).
  void *allocate(int64_t bytes) override;
  void release(void *ptr) override;
  void *allocateHost(int64_t bytes) override;
  void releaseHost(void *ptr) override;
  void copyToDevice(void *dst, const void *src, int64_t bytes) override;
  void copyToHost(void *dst, const void *src, int64_t bytes) override;
  void synchronize() override;

  // DeviceRuntime (the offload's ordered copies: device_context.cpp). The
  // copies down run on the compute stream, in order with the kernels that
  // write their sources and the ones that reuse that memory after; the
  // uploads run on the copy stream, so that they overlap the kernels.
  bool overlapsHostTasks() const override { return true; }
  void copyToHostQueued(void *dst, const void *src, int64_t bytes) override;
  int64_t fence() override;
  void waitForFence(int64_t fence) override;
  void uploadAfter(int64_t fence, void *dst, const void *src,
                   int64_t bytes) override;
  void orderAfterUpload(const void *dst) override;
  void finishUploads() override;
  float *stepScalars() override { return scalars; }
  std::vector<WorkspacePart> workspaceParts() const override;

  // DeviceRuntime (collectives: nccl_collectives.cpp).
  int64_t start(const CollectiveCall &call) override;
  // What start() enqueues on the communication stream for each collective
  // of the catalogue (zero/zrt_collectives.def), over `over` (null: this
  // rank alone, where it is a copy): libzrt does not link without each.
#define ZRT_COLLECTIVE(KIND, name, RuntimeName, ...)                           \
  void enqueue##RuntimeName(const CollectiveCall &call, ncclComm_t over);
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
  void wait(int64_t handle) override;
  std::vector<int64_t> unwaited() const override;

  /// Waits for the compute stream, then stops the job naming the kernel,
  /// the row and the value if a kernel recorded a data error.
  void checkDeviceErrors();

  /// At least `bytes` of device memory for a kernel's per-call intermediates
  /// (the attention backward's per-row statistics), valid for the work
  /// enqueued on the compute stream until the next call. One buffer per
  /// context, grown (stream-ordered, on the compute stream) and never shrunk:
  /// its size is the high-water mark, counted in workspaceParts().
  void *kernelScratch(size_t bytes);

  /// Per-call scratch (Scratch, launch_utils.cuh) allocated (+) or freed (-);
  /// its high-water mark is counted in workspaceParts().
  void noteTransientScratch(int64_t bytes);

  zrt_context *const ctx;
  const int gpu;
  cudaStream_t compute = nullptr;
  cudaStream_t comm = nullptr;
  cudaStream_t copy = nullptr; // the offload's uploads (host tasks)
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr; // kGemmWorkspaceBytes
  DeviceError *errorSlot = nullptr;
  float *scalars = nullptr; // kNumStepScalars floats


private:
  /// Blocks until `stream` is idle, polling: a failed kernel, an NCCL error
  /// or a wait beyond the timeout (ZRT_NCCL_TIMEOUT_S) stops the job.
  void waitForStream(cudaStream_t stream);
  /// Retires the collectives that were waited for (all complete by now).
  void retireWaited();

  // NCCL and the collectives' bookkeeping (nccl_collectives.cpp).
  void initNccl();
  void destroyNccl();
  /// Aborts every communicator (a failed or stuck collective).
  void abortNccl();
  /// The distinct communicators of groupComms.
  std::vector<ncclComm_t> communicators() const;
  /// Called between polls: stops the job (aborting the communicator first)
  /// on an asynchronous NCCL error, or when `elapsedSeconds` exceeds the
  /// timeout, naming the first collective that has not completed.
  void checkProgress(double elapsedSeconds);
  /// Records the start of a collective on the communication stream around
  /// `launch()` (which enqueues the transfer there) and returns its handle;
  /// `info` labels its trace slice and the watchdog's message.
  template <typename Launch>
  int64_t startCollective(const CollectiveInfo &info, int64_t countedBytes,
                          Launch launch);

  /// The offload's events: the host-task thread and the main thread both
  /// take them, under offloadMutex. Fence i (1, 2, ...) is fences[i - 1];
  /// the last upload to each buffer not yet ordered is in uploads. Every
  /// event returns to spareOffloadEvents at finishUploads().
  cudaEvent_t fenceEvent(int64_t fence);
  std::mutex offloadMutex;
  std::vector<cudaEvent_t> fences;
  std::unordered_map<const void *, cudaEvent_t> uploads;
  std::vector<cudaEvent_t> uploadEvents; // every upload's, until retired
  std::vector<cudaEvent_t> spareOffloadEvents;

  uint64_t deviceBytes = 0; // the GPU's memory (cudaMemGetInfo's total)
  void *scratch = nullptr;  // kernelScratch's buffer
  size_t scratchBytes = 0;
  int64_t transientScratchLive = 0; // noteTransientScratch's running sum
  int64_t transientScratchPeak = 0; // and its maximum
  ncclComm_t nccl = nullptr; // null: a context without MPI (one rank)
  /// The communicator of each zrt_group: the world's is `nccl`, and so is
  /// the shard group's without shard groups; null for a group of this rank
  /// alone (its collectives are copies).
  ncclComm_t groupComms[ZRT_NUM_GROUPS] = {};
  double timeoutSeconds = 300;
  cudaEvent_t inputsReady = nullptr; // re-recorded at every start
  std::deque<InFlight> inFlight;     // in start order
  std::vector<cudaEvent_t> spareEvents;
  std::unordered_set<int64_t> notWaited;
  int64_t nextHandle = 1;
};

/// An event without timing from `spare` (which the caller's lock guards),
/// or a new one.
cudaEvent_t takeEvent(std::vector<cudaEvent_t> &spare);

/// The CUDA state of `ctx`; stops the job if `ctx` is not on a GPU.
CudaRuntime &runtimeOf(zrt_context *ctx);

} // namespace zrt::cuda

#endif // ZRT_CUDA_DEVICE_CONTEXT_H

//===- agree.cpp - One verdict on errors only some ranks may see ----------===//

#include "core/agree.h"
#include "core/check.h"

#include <cstdio>
#include <vector>

namespace zrt {

std::string agreeOnError(zrt_context *ctx, const std::string &error) {
  if (ctx->comm == MPI_COMM_NULL)
    return error;
  quiesceComm(ctx);
  int mine = error.empty() ? ctx->worldSize : ctx->rank;
  int first = mine;
  ZRT_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx->comm));
  if (first == ctx->worldSize)
    return "";
  // Messages are short; the length travels first so receivers can size.
  int length = (int)error.size();
  ZRT_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first, ctx->comm));
  std::vector<char> text(error.begin(), error.end());
  text.resize(length);
  ZRT_MPI_CHECK(MPI_Bcast(text.data(), length, MPI_CHAR, first, ctx->comm));
  return std::string(text.begin(), text.end());
}

namespace {
/// FNV-1a, 64 bits: stable across builds and machines.
struct Hasher {
  uint64_t state = 1469598103934665603ull;
  void bytes(const void *data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      state ^= static_cast<const unsigned char *>(data)[i];
      state *= 1099511628211ull;
    }
  }
  template <typename T> void value(T v) { bytes(&v, sizeof v); }
  void text(const std::string &s) {
    value<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
};
} // namespace

uint64_t programHash(const zrt_context *ctx) {
  Hasher h;
  const ProgramDesc &p = ctx->program;
  for (int64_t v : {p.abiVersion, p.worldSize, p.stage, int64_t(p.task),
                    p.globalBatch, p.seqLen, p.numFeatures, p.numClasses,
                    p.microBatches})
    h.value(v);
  // Only when declared, so that other programs keep their hash.
  if (p.deterministic)
    h.value(p.chunkRows);
  if (p.shardGroups)
    h.value(p.shardGroupSize);
  h.value<uint64_t>(ctx->args.size());
  for (const ArgDesc &arg : ctx->args) {
    h.text(arg.name);
    for (int32_t v : {arg.role, arg.dtype, arg.rank, int32_t(arg.sharded),
                      arg.init})
      h.value(v);
    for (int64_t d : arg.dims)
      h.value(d);
    h.value(arg.initScale);
  }
  for (const zrt_context::Arena &arena : ctx->arenas)
    h.value(arena.bytes);
  return h.state;
}

std::string checkSameProgram(zrt_context *ctx) {
  if (ctx->comm == MPI_COMM_NULL)
    return "";
  quiesceComm(ctx);
  uint64_t mine = programHash(ctx);
  std::vector<uint64_t> all(ctx->worldSize);
  ZRT_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1,
                              MPI_UINT64_T, ctx->comm));
  std::string differing;
  for (int r = 1; r < ctx->worldSize; ++r)
    if (all[r] != all[0])
      differing += (differing.empty() ? "" : ", ") + std::to_string(r);
  if (differing.empty())
    return "";
  char hashes[64];
  std::snprintf(hashes, sizeof hashes, "%016llx", (unsigned long long)all[0]);
  return "the ranks run different programs: rank(s) " + differing +
         " declared another program than rank 0 (program hash " + hashes +
         "); start every rank with the same executable";
}

} // namespace zrt

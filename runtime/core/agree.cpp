//===- agree.cpp - One verdict on errors only some ranks may see ----------===//

#include "core/agree.h"
#include "core/check.h"

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

} // namespace zrt

// bench/xent_fused.cpp - the fused loss kernel against the two it replaces.
//
// Times zrt_softmax_xent + zrt_softmax_xent_grad and zrt_softmax_xent_fused
// on the CPU backend, in one run, on random logits of GPT-2's vocabulary
// (50257) for ROWS rows (default 512), f32 and bf16, median of REPEATS
// (default 7), and checks the fused results are bit-identical. Build and run:
//
//   c++ -O2 -std=gnu++17 -Iinclude -Iruntime $(mpicxx --showme:compile) \
//     bench/xent_fused.cpp -o build/xent_fused -Lbuild/lib -lzrt \
//     -Wl,-rpath,$PWD/build/lib $(mpicxx --showme:link)
//   build/xent_fused [ROWS] [REPEATS]
#include "core/context.h"
#include "zero/zrt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

static double seconds(const std::chrono::steady_clock::time_point &start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

int main(int argc, char **argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 512, cols = 50257;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
  zrt_context *ctx = zrt::createLocalContext();
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  std::vector<float> logits(rows * cols);
  for (float &x : logits)
    x = value(rng);
  std::vector<int32_t> labels(rows);
  for (int32_t &l : labels)
    l = int32_t(rng() % cols);
  const float dloss = 0.75f, divisor = float(rows);
  for (int32_t dtype : {ZRT_F32, ZRT_BF16}) {
    size_t bytes = rows * cols * (dtype == ZRT_BF16 ? 2 : 4);
    std::vector<char> in(bytes), gradA(bytes), gradB(bytes);
    zrt_cast(ctx, ZRT_F32, dtype, logits.data(), in.data(), rows * cols);
    std::vector<double> separate, fused;
    float lossA = 0, lossB = 0;
    for (int i = 0; i < repeats; ++i) {
      auto start = std::chrono::steady_clock::now();
      zrt_softmax_xent(ctx, dtype, in.data(), labels.data(), &lossA, rows,
                       cols, divisor);
      zrt_softmax_xent_grad(ctx, dtype, in.data(), labels.data(), &dloss,
                            gradA.data(), rows, cols, divisor);
      separate.push_back(seconds(start));
      start = std::chrono::steady_clock::now();
      zrt_softmax_xent_fused(ctx, dtype, in.data(), labels.data(), &dloss,
                             &lossB, gradB.data(), rows, cols, divisor);
      fused.push_back(seconds(start));
    }
    std::sort(separate.begin(), separate.end());
    std::sort(fused.begin(), fused.end());
    bool same = lossA == lossB && std::memcmp(gradA.data(), gradB.data(),
                                              bytes) == 0;
    std::printf("%s %lldx%lld: separate %.1f ms, fused %.1f ms, speedup "
                "%.2fx, results %s\n",
                dtype == ZRT_F32 ? "f32" : "bf16", (long long)rows,
                (long long)cols, separate[repeats / 2] * 1e3,
                fused[repeats / 2] * 1e3,
                separate[repeats / 2] / fused[repeats / 2],
                same ? "bit-identical" : "DIFFERENT");
  }
  zrt::destroyContext(ctx);
  return 0;
}

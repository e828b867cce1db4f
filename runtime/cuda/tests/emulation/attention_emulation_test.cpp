//===- attention_emulation_test.cpp - Tensor-core attention without a GPU -===//
//
// zrt-cuda-attention-emulated: runs the bf16 tensor-core attention kernels
// (cuda/attention_tc_kernels.cuh, launched by attention_tc.cu, both compiled
// as C++ over the emulator of cuda_emulation.h: zrt_cuda_emulated) forward
// and backward, and compares them with a float64
// reference computed from the same bf16-rounded inputs. It needs only a host
// compiler: it is how the kernels' fragment layouts, masks, tiling and
// online softmax are checked on a machine without a GPU (lit:
// test/runtime/cuda-attention-emulated.test). Whether the real mma/ldmatrix
// behave as the PTX ISA says, and how fast the kernels are, only a GPU run
// shows (zrt-cuda-kernel-tests).
//
// Error: max |kernel - reference| / max |reference| per output tensor (out,
// dq, dk, dv). Tolerance kTolerance = 1e-2, from the bf16 roundings the
// kernels make and the reference does not: each output is rounded to bf16
// once (at most 2^-9 of its magnitude, so at most 2^-9 ~ 0.002 of the
// tensor's max), P is rounded to bf16 before P V and dP^T dO (2^-9 relative
// on every term, at most 0.002 of sum |P| |v| ~ the max), and dS before
// dS K and dS^T Q (likewise); the three add up to ~0.006 in the worst case
// and ~0.002 typically. A wrong fragment index, mask or rescaling gives
// errors of order 1 (see --fault).
//
// Options: --full adds larger shapes (minutes), --quick runs two cases only;
// --fault=mma-b-layout or --fault=ldmatrix-trans breaks the emulator's mma
// or ldmatrix on purpose, and every numeric check must then fail;
// --workers=N sets the OS threads (default: the hardware's, at most 4).
//
//===----------------------------------------------------------------------===//

#include "cuda/attention_tc.h"
#include "cuda/attention_tc_kernels.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace zrt::cuda::tc;

namespace {

constexpr double kTolerance = 1e-2;

struct Case {
  int64_t batch, seq, heads, kvHeads;
  int headDim;
};

/// bf16 elements with guard zones of NaN on both sides; guardsIntact tells
/// whether a kernel wrote outside [0, n).
class Bf16Buffer {
public:
  static constexpr size_t kGuard = 256;
  Bf16Buffer(size_t n, uint16_t fill) : n(n), bits(n + 2 * kGuard, kNaN) {
    for (size_t i = 0; i < n; ++i)
      bits[kGuard + i] = fill;
  }
  Bf16 *data() { return reinterpret_cast<Bf16 *>(bits.data() + kGuard); }
  float at(size_t i) const { return emu::bf16ToFloat(bits[kGuard + i]); }
  void set(size_t i, uint16_t value) { bits[kGuard + i] = value; }
  size_t size() const { return n; }
  bool guardsIntact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (bits[i] != kNaN || bits[kGuard + n + i] != kNaN)
        return false;
    return true;
  }

private:
  static constexpr uint16_t kNaN = 0x7fc1;
  size_t n;
  std::vector<uint16_t> bits;
};

/// n values from N(0, sigma^2), rounded to bf16.
Bf16Buffer randomBf16(std::mt19937 &rng, size_t n, float sigma) {
  std::normal_distribution<float> normal(0.0f, sigma);
  Bf16Buffer buffer(n, 0);
  for (size_t i = 0; i < n; ++i)
    buffer.set(i, emu::roundToBf16(normal(rng)));
  return buffer;
}

struct Reference {
  std::vector<double> out, dq, dk, dv;
};

/// Causal GQA attention and its gradient in float64, from the bf16 inputs.
Reference reference(const Case &c, const Bf16Buffer &q, const Bf16Buffer &k,
                    const Bf16Buffer &v, const Bf16Buffer &dout) {
  const int64_t D = c.headDim, group = c.heads / c.kvHeads;
  const int64_t qStride = c.heads * D, kvStride = c.kvHeads * D;
  const double scale = 1.0 / std::sqrt((double)D);
  Reference r;
  r.out.assign(q.size(), 0.0);
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(k.size(), 0.0);
  std::vector<double> p(c.seq), dp(c.seq);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t kvh = h / group;
      for (int64_t i = 0; i < c.seq; ++i) {
        const int64_t qi = (b * c.seq + i) * qStride + h * D;
        double m = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          const int64_t kj = (b * c.seq + j) * kvStride + kvh * D;
          double s = 0.0;
          for (int64_t d = 0; d < D; ++d)
            s += (double)q.at(qi + d) * k.at(kj + d);
          p[j] = s * scale;
          m = std::max(m, p[j]);
        }
        double l = 0.0;
        for (int64_t j = 0; j <= i; ++j)
          l += p[j] = std::exp(p[j] - m);
        double delta = 0.0;
        for (int64_t j = 0; j <= i; ++j) {
          const int64_t kj = (b * c.seq + j) * kvStride + kvh * D;
          p[j] /= l;
          double dot = 0.0;
          for (int64_t d = 0; d < D; ++d) {
            r.out[qi + d] += p[j] * v.at(kj + d);
            dot += (double)dout.at(qi + d) * v.at(kj + d);
          }
          dp[j] = dot;
          delta += p[j] * dot;
        }
        for (int64_t j = 0; j <= i; ++j) {
          const int64_t kj = (b * c.seq + j) * kvStride + kvh * D;
          const double ds = p[j] * (dp[j] - delta);
          for (int64_t d = 0; d < D; ++d) {
            r.dq[qi + d] += scale * ds * k.at(kj + d);
            r.dk[kj + d] += scale * ds * q.at(qi + d);
            r.dv[kj + d] += p[j] * dout.at(qi + d);
          }
        }
      }
    }
  return r;
}

/// max |got - ref| / max |ref|; NaN if any element is NaN (never written).
double relativeError(const Bf16Buffer &got, const std::vector<double> &ref) {
  double worst = 0.0, scale = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = got.at(i);
    if (std::isnan(g))
      return NAN;
    worst = std::max(worst, std::fabs(g - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return worst / std::max(scale, 1e-30);
}

struct Results {
  int passed = 0, failed = 0;
  void expectClose(const std::string &name, double error) {
    const bool ok = !(error > kTolerance) && !std::isnan(error);
    (ok ? passed : failed) += 1;
    std::printf("%s %s: max error %.3g (tolerance %.3g)\n",
                ok ? "PASS" : "FAIL", name.c_str(), error, kTolerance);
    std::fflush(stdout);
  }
  void expectTrue(const std::string &name, bool ok) {
    (ok ? passed : failed) += 1;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", name.c_str());
  }
};

template <int D>
void runCase(const Case &c, std::mt19937 &rng, Results &results) {
  const size_t qn = (size_t)(c.batch * c.seq * c.heads * D);
  const size_t kvn = (size_t)(c.batch * c.seq * c.kvHeads * D);
  // q wider than k so that softmax rows range from flat to peaked.
  Bf16Buffer q = randomBf16(rng, qn, 2.0f), k = randomBf16(rng, kvn, 1.0f);
  Bf16Buffer v = randomBf16(rng, kvn, 1.0f), dout = randomBf16(rng, qn, 1.0f);
  const uint16_t nan = 0x7fc0;
  Bf16Buffer out(qn, nan), dq(qn, nan), dk(kvn, nan), dv(kvn, nan);
  const size_t rows = (size_t)(c.batch * c.heads * c.seq);
  std::vector<float> statistics(2 * rows, NAN);

  // attention_tc.cu's launches themselves (grids, shared memory opt-in).
  const char *kernel = "attention_tc";
  zrt::cuda::attentionTensorCores(kernel, nullptr, q.data(), k.data(), v.data(),
                                  out.data(), c.batch, c.seq, c.heads,
                                  c.kvHeads, D);
  zrt::cuda::attentionGradTensorCores(kernel, nullptr, q.data(), k.data(),
                                      v.data(), dout.data(), dq.data(),
                                      dk.data(), dv.data(), c.batch, c.seq,
                                      c.heads, c.kvHeads, D, statistics.data());
  cudaError_t launched = cudaGetLastError();

  const Reference ref = reference(c, q, k, v, dout);
  const std::string shape =
      " d" + std::to_string(D) + " b" + std::to_string(c.batch) + " t" +
      std::to_string(c.seq) + " h" + std::to_string(c.heads) + "/" +
      std::to_string(c.kvHeads);
  results.expectClose("attention_tc forward" + shape,
                      relativeError(out, ref.out));
  results.expectClose("attention_tc backward dq" + shape,
                      relativeError(dq, ref.dq));
  results.expectClose("attention_tc backward dk" + shape,
                      relativeError(dk, ref.dk));
  results.expectClose("attention_tc backward dv" + shape,
                      relativeError(dv, ref.dv));
  results.expectTrue("attention_tc launches accepted" + shape,
                     launched == cudaSuccess);
  results.expectTrue("attention_tc writes nothing outside its outputs" + shape,
                     out.guardsIntact() && dq.guardsIntact() &&
                         dk.guardsIntact() && dv.guardsIntact());
}

/// Sequence lengths around the tile sizes (1, 17: one partial tile; 64: one
/// full tile; 65: one element past it; 130, 256: several tiles, a partial
/// last one or not), GQA groups 1, 2 and 4, batches 1 and 2, at both
/// head_dims.
std::vector<Case> defaultCases() {
  std::vector<Case> cases;
  for (int d : {64, 128}) {
    cases.push_back({1, 1, 1, 1, d});
    cases.push_back({2, 17, 4, 2, d});
    cases.push_back({1, 64, 4, 1, d});
    cases.push_back({2, 65, 2, 2, d});
    cases.push_back({1, 130, 4, 2, d});
    cases.push_back({1, 256, 4, 1, d});
  }
  return cases;
}

/// One multi-tile GQA case per head_dim: enough for --fault runs.
std::vector<Case> quickCases() {
  return {{1, 130, 4, 2, 64}, {1, 130, 4, 2, 128}};
}

std::vector<Case> fullCases() {
  std::vector<Case> cases = defaultCases();
  for (int d : {64, 128}) {
    cases.push_back({2, 130, 8, 2, d});
    cases.push_back({2, 256, 4, 4, d});
    cases.push_back({1, 500, 2, 1, d});
    cases.push_back({1, 1024, 1, 1, d});
  }
  return cases;
}

} // namespace

int main(int argc, char **argv) {
  bool full = false, quick = false;
  int workers =
      (int)std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--full")
      full = true;
    else if (arg == "--quick")
      quick = true;
    else if (arg.rfind("--fault=", 0) == 0)
      emu::fault = arg.substr(8);
    else if (arg.rfind("--workers=", 0) == 0)
      workers = std::max(1, std::atoi(arg.c_str() + 10));
    else {
      std::fprintf(stderr,
                   "usage: %s [--full | --quick] "
                   "[--fault=mma-b-layout|ldmatrix-trans] [--workers=N]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!emu::fault.empty() && emu::fault != "mma-b-layout" &&
      emu::fault != "ldmatrix-trans") {
    std::fprintf(stderr, "unknown --fault=%s\n", emu::fault.c_str());
    return 2;
  }
  std::printf(
      "emulated tensor-core attention (bf16 mma.m16n8k16, fp32 "
      "accumulation)%s%s\n",
      emu::fault.empty() ? "" : ", broken on purpose: ", emu::fault.c_str());
  emu::setLaunchWorkers(workers);
  auto start = std::chrono::steady_clock::now();
  std::mt19937 rng(1234);
  Results results;
  const std::vector<Case> cases = full    ? fullCases()
                                  : quick ? quickCases()
                                          : defaultCases();
  for (const Case &c : cases) {
    if (c.headDim == 64)
      runCase<64>(c, rng, results);
    else
      runCase<128>(c, rng, results);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("%d passed, %d failed (%.1f s)\n", results.passed, results.failed,
              seconds);
  return results.failed == 0 ? 0 : 1;
}

//===- schedule_check.cpp - --check-schedule: the run against the plan ----===//

#include "core/schedule_check.h"
#include "core/check.h"
#include "core/context.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace zrt {

void ScheduleCheck::declare(int64_t sequence, const CollectivePlan &plan) {
  if (sequence < 1 || sequence > 10000000)
    fatal("zrt_declare_collective_plan: sequence %lld is out of range",
          (long long)sequence);
  if (plans.size() < size_t(sequence))
    plans.resize(sequence);
  if (plans[sequence - 1].declared)
    fatal("zrt_declare_collective_plan: collective %lld declared twice",
          (long long)sequence);
  plans[sequence - 1] = plan;
  plans[sequence - 1].declared = true;
}

/// Only the collectives of training steps are planned (not the driver's
/// own between steps, not a validation pass's).
static bool isStepCollective(const CollectiveInfo &info) {
  return info.step > 0 && !info.validation && info.sequence > 0;
}

void ScheduleCheck::started(const CollectiveInfo &info, int64_t handle,
                            int64_t issuedNs) {
  if (!isStepCollective(info))
    return;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(info.step, info.sequence);
  InFlight &run = inFlight[key]; // `began` may have made it already
  run.info = info;
  run.startedNs = issuedNs;
  keyOfHandle[handle] = key;
}

void ScheduleCheck::began(const CollectiveInfo &info) {
  if (!isStepCollective(info))
    return;
  int64_t now = nowNs();
  std::lock_guard<std::mutex> lock(mutex);
  inFlight[{info.step, info.sequence}].beganNs = now;
}

void ScheduleCheck::waited(int64_t handle, int64_t blockedNs) {
  std::lock_guard<std::mutex> lock(mutex);
  auto key = keyOfHandle.find(handle);
  if (key == keyOfHandle.end())
    return;
  auto it = inFlight.find(key->second);
  keyOfHandle.erase(key);
  if (it == inFlight.end())
    return;
  const InFlight &run = it->second;
  size_t index = size_t(run.info.sequence - 1);
  if (samples.size() <= index) {
    samples.resize(index + 1);
    infos.resize(index + 1);
  }
  // A collective that ran inline (no communication thread) began at once.
  int64_t began = run.beganNs >= 0 ? run.beganNs : run.startedNs;
  samples[index].push_back(
      {run.info.step, std::max<int64_t>(0, began - run.startedNs), blockedNs});
  infos[index] = run.info;
  inFlight.erase(it);
}

namespace {

double ms(double ns) { return ns / 1e6; }

} // namespace

double ScheduleCheck::median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool ScheduleCheck::verdict(zrt_context *ctx, double toleranceMs) const {
  std::lock_guard<std::mutex> lock(mutex);
  int64_t count = int64_t(plans.size());
  // Per collective: the median queueing and blocking over the counted
  // steps, and the steps counted. The first step is warm-up (first touch
  // of every buffer) when there are later ones.
  int64_t lastStep = 0;
  for (const auto &perCollective : samples)
    for (const Sample &sample : perCollective)
      lastStep = std::max(lastStep, sample.step);
  int64_t firstCounted = lastStep > 1 ? 2 : 1;
  std::vector<double> mine(3 * count, 0);
  for (int64_t i = 0; i < count && i < int64_t(samples.size()); ++i) {
    std::vector<double> queued, blocked;
    for (const Sample &sample : samples[i])
      if (sample.step >= firstCounted) {
        queued.push_back(double(sample.queuedNs));
        blocked.push_back(double(sample.blockedNs));
      }
    mine[3 * i] = median(queued);
    mine[3 * i + 1] = median(blocked);
    mine[3 * i + 2] = double(queued.size());
  }
  int world = ctx->comm == MPI_COMM_NULL ? 1 : ctx->worldSize;
  std::vector<double> all(size_t(world) * mine.size());
  if (world == 1)
    all = mine;
  else
    ZRT_MPI_CHECK(MPI_Gather(mine.data(), int(mine.size()), MPI_DOUBLE,
                             all.data(), int(mine.size()), MPI_DOUBLE, 0,
                             ctx->comm));
  int ok = 1;
  if (ctx->rank == 0) {
    double tolerance = toleranceMs * 1e6;
    int64_t late = 0, measured = 0, firstLate = 0;
    double worstExcess = -1e300;
    int64_t worstSequence = 0;
    for (int64_t i = 0; i < count; ++i) {
      const CollectivePlan &plan = plans[i];
      // The rank whose collective was furthest behind the plan.
      int worstRank = 0;
      double queuedExcess = -1e300, blockedExcess = -1e300;
      double queued = 0, blocked = 0, steps = 0;
      for (int r = 0; r < world; ++r) {
        const double *m = &all[size_t(r) * mine.size() + 3 * i];
        double q = m[0] - double(plan.queuedNs), b = m[1] - double(plan.exposedNs);
        if (std::max(q, b) > std::max(queuedExcess, blockedExcess)) {
          worstRank = r;
          queuedExcess = q;
          blockedExcess = b;
          queued = m[0];
          blocked = m[1];
        }
        steps = m[2];
      }
      if (steps == 0)
        continue; // never ran in a counted step (or only on the CUDA side)
      ++measured;
      double excess = std::max(queuedExcess, blockedExcess);
      if (excess > worstExcess) {
        worstExcess = excess;
        worstSequence = i + 1;
      }
      if (!plan.declared) {
        std::printf("check-schedule: collective %lld of the step has no plan "
                    "in the program\n",
                    (long long)(i + 1));
        ok = 0;
        continue;
      }
      if (excess <= tolerance)
        continue;
      if (!late)
        firstLate = i + 1;
      ++late;
      ok = 0;
      std::string what = i < int64_t(infos.size())
                             ? describeTransfer(infos[i])
                             : std::string("collective");
      std::printf("check-schedule: collective %lld of the step (%s) ran later "
                  "than planned on rank %d: it began %.2f ms after its start "
                  "(planned %.2f ms) and its wait blocked %.2f ms (planned "
                  "%.2f ms), the median of %.0f step(s); tolerance %.2f ms\n",
                  (long long)(i + 1), what.c_str(), worstRank, ms(queued),
                  ms(double(plan.queuedNs)), ms(blocked),
                  ms(double(plan.exposedNs)), steps, toleranceMs);
    }
    if (late)
      std::printf("check-schedule: FAILED: %lld of %lld collectives a step "
                  "ran later than the compiler's plan; the first, collective "
                  "%lld, delays those queued behind it\n",
                  (long long)late, (long long)count, (long long)firstLate);
    else if (ok && measured)
      std::printf("check-schedule: passed: %lld collectives a step ran as "
                  "planned, within %.2f ms; the furthest behind, collective "
                  "%lld, by %.2f ms\n",
                  (long long)measured, toleranceMs, (long long)worstSequence,
                  ms(std::max(0.0, worstExcess)));
    else if (ok)
      std::printf("check-schedule: the program started no collective in a "
                  "training step; nothing to check\n");
    std::fflush(stdout);
  }
  if (world > 1)
    ZRT_MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, 0, ctx->comm));
  return ok != 0;
}

void injectTestDelay(const CollectiveInfo &info) {
  static const std::pair<int64_t, int64_t> delay = [] {
    const char *text = std::getenv("ZRT_TEST_DELAY_COLLECTIVE");
    long long sequence = 0, milliseconds = 0;
    if (!text || std::sscanf(text, "%lld:%lld", &sequence, &milliseconds) != 2)
      return std::make_pair<int64_t, int64_t>(0, 0);
    return std::make_pair<int64_t, int64_t>(sequence, milliseconds);
  }();
  if (delay.first > 0 && isStepCollective(info) &&
      info.sequence == delay.first)
    std::this_thread::sleep_for(std::chrono::milliseconds(delay.second));
}

} // namespace zrt

//===- PredictSchedule.cpp - the plan of every collective, declared -------===//
//
// Writes SchedulePrediction.h's prediction into the program, one
// zrt.declare_collective_plan per collective of the step, so that the
// runtime's --check-schedule can hold the run to it.
//
//===----------------------------------------------------------------------===//
#include "dialects/zrt/ZrtDialect.h"
#include "passes/Analysis/Passes.h"
#include "passes/Analysis/SchedulePrediction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>

namespace zero {
#define GEN_PASS_DEF_PREDICTSCHEDULE
#include "passes/Analysis/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

int64_t nanoseconds(double seconds) { return std::llround(seconds * 1e9); }

struct PredictSchedulePass
    : zero::impl::PredictScheduleBase<PredictSchedulePass> {
  friend struct zero::TimeModelOptions; // reads the time model's options

  using PredictScheduleBase::PredictScheduleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<TimeModel> model = timeModelFromOptions(
        module, getArgument(), TimeModelOptions::of(*this));
    if (failed(model))
      return signalPassFailure();
    FailureOr<SchedulePrediction> prediction =
        predictSchedule(module, *model, getArgument());
    if (failed(prediction))
      return signalPassFailure();
    auto describe = module.lookupSymbol<func::FuncOp>("zero_program_describe");
    // Running the pass again replaces the plan.
    describe.walk([](zrt::DeclareCollectivePlanOp old) { old.erase(); });
    OpBuilder b(describe.getBody().front().getTerminator());
    for (const PlannedCollective &planned : prediction->collectives)
      zrt::DeclareCollectivePlanOp::create(
          b, describe.getLoc(), planned.sequence, nanoseconds(planned.queued),
          nanoseconds(planned.transfer), nanoseconds(planned.exposed));
  }
};

} // namespace

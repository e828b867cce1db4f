//===- Passes.td - every zero-opt pass, by layer -----------*- tablegen -*-===//
//
// Only for docs/Passes.md (`ninja zero-doc`): each layer's passes are
// declared, and generated, in its own folder.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES
#define ZERO_PASSES

include "passes/Transforms/Passes.td"
include "passes/Conversion/ZeroToZrt/Passes.td"
include "passes/Conversion/ZrtToCalls/Passes.td"
include "passes/Analysis/Passes.td"

#endif // ZERO_PASSES

//===- ZeroAttrs.td - attributes of the zero dialect -------*- tablegen -*-===//
#ifndef ZERO_ZERO_ATTRS
#define ZERO_ZERO_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "dialects/zero/ZeroDialect.td"
include "dialects/zero/ZeroEnums.td"

def Zero_PlacementAttr : AttrDef<Zero_Dialect, "Placement"> {
  let mnemonic = "placement";
  let summary = "the role of a training-state tensor and how it is spread";
  let description = [{
    Attached by `zero-placement` to each argument of the training step
    (`zero.placement = #zero.placement<param, sharded>`). Which roles are
    sharded is what distinguishes the ZeRO stages: stage 1 shards `moment`
    (and `master`), stage 2 also `grad`, stage 3 also `param`. `data` is the
    batch, split by rows rather than flattened into shards.

    A sharded tensor is sharded over the data-parallel group `@dp`, or, with
    hybrid sharding, over the group `over` names: `#zero.placement<param,
    sharded over @shard>` is sharded along the mesh's shard axis and
    replicated along its replica axis (every `@shard` group holds all of
    it).
  }];
  let parameters = (ins EnumParameter<Zero_Role>:$role,
                        EnumParameter<Zero_Distribution>:$distribution,
                        OptionalParameter<"::mlir::FlatSymbolRefAttr">:$group);
  let assemblyFormat = "`<` $role `,` $distribution (`over` $group^)? `>`";
  let extraClassDeclaration = [{
    bool isSharded() const {
      return getDistribution() == ::zero::sharding::Distribution::Sharded;
    }
  }];
}

#endif // ZERO_ZERO_ATTRS

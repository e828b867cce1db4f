//===- ZeroAttrs.td - attributes of the zero dialect -------*- tablegen -*-===//
#ifndef ZERO_ZERO_ATTRS
#define ZERO_ZERO_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "dialects/zero/ZeroDialect.td"
include "dialects/zero/ZeroEnums.td"

// Optional in the assembly: absent means the device's memory.
def Zero_MemoryParameter : EnumParameter<Zero_Memory> {
  let defaultValue = "::zero::sharding::Memory::Device";
}

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

    A tensor lives in the device's memory unless the placement says `in
    host`: `zero-offload-optimizer` (`--offload=optimizer`) places the
    moments and master weights `#zero.placement<moment, sharded in host>`,
    and only ops that run on the host (`zero.host`) read them.
  }];
  let parameters = (ins EnumParameter<Zero_Role>:$role,
                        EnumParameter<Zero_Distribution>:$distribution,
                        OptionalParameter<"::mlir::FlatSymbolRefAttr">:$group,
                        Zero_MemoryParameter:$memory);
  let assemblyFormat =
      "`<` $role `,` $distribution (`over` $group^)? (`in` $memory^)? `>`";
  let builders = [
    AttrBuilder<(ins "::zero::sharding::Role":$role,
                     "::zero::sharding::Distribution":$distribution,
                     CArg<"::mlir::FlatSymbolRefAttr", "{}">:$group), [{
      return $_get($_ctxt, role, distribution, group,
                   ::zero::sharding::Memory::Device);
    }]>
  ];
  let extraClassDeclaration = [{
    bool isSharded() const {
      return getDistribution() == ::zero::sharding::Distribution::Sharded;
    }
  }];
}

#endif // ZERO_ZERO_ATTRS

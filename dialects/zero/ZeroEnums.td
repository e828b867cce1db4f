//===- ZeroEnums.td - enums of the zero dialect ------------*- tablegen -*-===//
#ifndef ZERO_ZERO_ENUMS
#define ZERO_ZERO_ENUMS

include "mlir/IR/EnumAttr.td"

def Zero_Role : I32EnumAttr<"Role", "what a training-state tensor is", [
    I32EnumAttrCase<"Data", 0, "data">,
    I32EnumAttrCase<"Param", 1, "param">,
    I32EnumAttrCase<"Grad", 2, "grad">,
    I32EnumAttrCase<"Master", 3, "master">,
    I32EnumAttrCase<"Moment", 4, "moment">,
    I32EnumAttrCase<"Hyper", 5, "hyper">]> {
  let cppNamespace = "::zero::sharding";
  let genSpecializedAttr = 0;
}

def Zero_Distribution : I32EnumAttr<"Distribution",
    "how a tensor is spread over the data-parallel group", [
    I32EnumAttrCase<"Replicated", 0, "replicated">,
    I32EnumAttrCase<"Sharded", 1, "sharded">]> {
  let cppNamespace = "::zero::sharding";
  let genSpecializedAttr = 0;
}

// Where a tensor lives: the device's memory, or host memory (the optimizer
// state of --offload=optimizer).
def Zero_Memory : I32EnumAttr<"Memory", "the memory a tensor lives in", [
    I32EnumAttrCase<"Device", 0, "device">,
    I32EnumAttrCase<"Host", 1, "host">]> {
  let cppNamespace = "::zero::sharding";
  let genSpecializedAttr = 0;
}

// The two axes of a hybrid-sharding mesh (--shard-group-size): a zero.group
// with an axis is a subgroup of the data-parallel group.
def Zero_MeshAxis : I32EnumAttr<"MeshAxis",
    "the axis of the data-parallel mesh a subgroup spans", [
    I32EnumAttrCase<"Shard", 0, "shard">,
    I32EnumAttrCase<"Replica", 1, "replica">]> {
  let cppNamespace = "::zero::sharding";
}

#endif // ZERO_ZERO_ENUMS

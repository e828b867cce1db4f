//===- ZrtEnums.td - enums of the zrt dialect --------------*- tablegen -*-===//
//
// Each enum is one of include/zero/zrt.h, value for value (ZrtDialect.cpp
// checks them with static_asserts).
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_ZRT_ENUMS
#define ZERO_ZRT_ENUMS

include "mlir/IR/EnumAttr.td"
include "dialects/zrt/ZrtDialect.td"

// zrt_mem_category: the ledger column a buffer is charged to.
def Zrt_MemCategory : I32EnumAttr<"MemCategory",
    "the runtime ledger's memory category of a buffer", [
    I32EnumAttrCase<"Param", 0, "param">,
    I32EnumAttrCase<"Grad", 1, "grad">,
    I32EnumAttrCase<"Optimizer", 2, "optimizer">,
    I32EnumAttrCase<"Activation", 3, "activation">,
    I32EnumAttrCase<"Comm", 4, "comm">,
    I32EnumAttrCase<"Data", 5, "data">,
    I32EnumAttrCase<"HostOptimizer", 6, "host_optimizer">,
    I32EnumAttrCase<"HostStaging", 7, "host_staging">]> {
  let cppNamespace = "::zero::zrt";
}

// zrt_role: what a program argument is.
def Zrt_Role : I32EnumAttr<"Role", "what a program argument is", [
    I32EnumAttrCase<"Features", 0, "features">,
    I32EnumAttrCase<"Labels", 1, "labels">,
    I32EnumAttrCase<"Param", 2, "param">,
    I32EnumAttrCase<"AdamM", 3, "adam_m">,
    I32EnumAttrCase<"AdamV", 4, "adam_v">,
    I32EnumAttrCase<"Lr", 5, "lr">,
    I32EnumAttrCase<"Step", 6, "step">,
    I32EnumAttrCase<"Tokens", 7, "tokens">,
    I32EnumAttrCase<"Targets", 8, "targets">,
    I32EnumAttrCase<"Positions", 9, "positions">,
    I32EnumAttrCase<"Master", 10, "master">,
    I32EnumAttrCase<"MaxNorm", 11, "max_norm">,
    I32EnumAttrCase<"GradAccum", 12, "grad_accum">,
    I32EnumAttrCase<"Beta1", 13, "beta1">,
    I32EnumAttrCase<"Beta2", 14, "beta2">,
    I32EnumAttrCase<"Eps", 15, "eps">,
    I32EnumAttrCase<"WeightDecay", 16, "weight_decay">]> {
  let cppNamespace = "::zero::zrt";
}

// zrt_init: how a parameter (and its master copy) starts.
def Zrt_Init : I32EnumAttr<"Init", "how a parameter starts", [
    I32EnumAttrCase<"Zeros", 0, "zeros">,
    I32EnumAttrCase<"Uniform", 1, "uniform">,
    I32EnumAttrCase<"Normal", 2, "normal">,
    I32EnumAttrCase<"Ones", 3, "ones">]> {
  let cppNamespace = "::zero::zrt";
}

// zrt_task: what the program trains on.
def Zrt_Task : I32EnumAttr<"Task", "what the program trains on", [
    I32EnumAttrCase<"Classify", 0, "classify">,
    I32EnumAttrCase<"LM", 1, "lm">]> {
  let cppNamespace = "::zero::zrt";
}

// zrt_epilogue: what zrt_matmul_bias does after the product.
def Zrt_Epilogue : I32EnumAttr<"Epilogue", "what follows a fused GEMM", [
    I32EnumAttrCase<"Bias", 0, "bias">,
    I32EnumAttrCase<"BiasGelu", 1, "bias_gelu">]> {
  let cppNamespace = "::zero::zrt";
}

// zrt_group: the ranks a collective runs over (hybrid sharding's shard
// and replica groups, or every rank).
def Zrt_Group : I32EnumAttr<"Group", "the ranks a collective runs over", [
    I32EnumAttrCase<"World", 0, "world">,
    I32EnumAttrCase<"Shard", 1, "shard">,
    I32EnumAttrCase<"Replica", 2, "replica">]> {
  let cppNamespace = "::zero::zrt";
}

#endif // ZERO_ZRT_ENUMS

// RUN: zero-opt %s --split-input-file --verify-diagnostics
// One case per labelled constraint of each zero op (see docs/ZeroDialect.md).

// expected-error @+1 {{'zero.group' op (C1) world_size must be at least 1, got 0}}
zero.group @dp world_size(0)

// -----

// expected-error @+1 {{'zero.group' op (C2) stage must be 0, 1, 2 or 3, got 4}}
zero.group @dp world_size(2) stage(4)

// -----

func.func @group_in_function() {
  // expected-error @+1 {{'zero.group' op expects parent op 'builtin.module'}}
  zero.group @dp world_size(2)
  return
}

// -----

func.func @all_gather_c1(%s: tensor<4xf32>) {
  // expected-error @+1 {{'zero.all_gather' op (C1) 'dp' does not name a zero.group of the module}}
  %f = zero.all_gather %s over @dp : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

zero.group @dp world_size(4)

func.func @all_gather_c2(%s: tensor<96xf32>) {
  // expected-error @+1 {{'zero.all_gather' op (C2) a shard of 380 elements over 4 ranks has 95 elements, got 'tensor<96xf32>'}}
  %f = zero.all_gather %s over @dp : tensor<96xf32> -> tensor<19x20xf32>
  return
}

// -----

zero.group @dp world_size(4)

func.func @all_gather_shard_rank(%s: tensor<5x19xf32>) {
  // expected-error @+1 {{operand #0 must be 1D tensor of 32-bit float or bfloat16 type or 128-bit signless integer values}}
  %f = zero.all_gather %s over @dp : tensor<5x19xf32> -> tensor<19x20xf32>
  return
}

// -----

func.func @reduce_scatter_c1(%g: tensor<8xf32>) {
  // A symbol that is not a group does not do either.
  // expected-error @+1 {{'zero.reduce_scatter' op (C1) 'reduce_scatter_c1' does not name a zero.group of the module}}
  %s = zero.reduce_scatter %g over @reduce_scatter_c1 : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

zero.group @dp world_size(3)

func.func @reduce_scatter_c2(%g: tensor<19x20xf32>) {
  // expected-error @+1 {{'zero.reduce_scatter' op (C2) a shard of 380 elements over 3 ranks has 127 elements, got 'tensor<126xf32>'}}
  %s = zero.reduce_scatter %g over @dp : tensor<19x20xf32> -> tensor<126xf32>
  return
}

// -----

zero.group @dp world_size(4)

func.func @local_shard_c2(%p: tensor<10xf32>) {
  // expected-error @+1 {{'zero.local_shard' op (C2) a shard of 10 elements over 4 ranks has 3 elements, got 'tensor<2xf32>'}}
  %s = zero.local_shard %p over @dp : tensor<10xf32> -> tensor<2xf32>
  return
}

// -----

zero.group @tp world_size(2)

func.func @all_reduce_c1(%x: tensor<f32>) {
  // expected-error @+1 {{'zero.all_reduce' op (C1) 'dp' does not name a zero.group of the module}}
  %y = zero.all_reduce %x over @dp : tensor<f32>
  return
}

// -----

zero.group @dp world_size(2)

func.func @release_c1(%s: tensor<3xf32>) -> tensor<5xf32> {
  %f = zero.all_gather %s over @dp : tensor<3xf32> -> tensor<5xf32>
  // expected-error @+1 {{'zero.release' op (C1) the released tensor is used after the release, by 'nn.relu'}}
  zero.release %f : tensor<5xf32>
  %r = nn.relu %f : tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

// expected-error @+2 {{expected ::zero::sharding::Role to be one of: data, param, grad, master, moment, hyper}}
// expected-error @+1 {{failed to parse Zero_PlacementAttr parameter 'role'}}
func.func @placement_role(%x: tensor<4xf32> {zero.placement = #zero.placement<weights, sharded>}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'zero.placement' must be a #zero.placement, got "sharded"}}
func.func @placement_kind(%x: tensor<4xf32> {zero.placement = "sharded"}) {
  return
}

// -----

zero.group @dp world_size(4)

// A sharded argument must hold exactly its shard of the whole tensor.
// expected-error @+1 {{argument #0 holds a shard of 'tensor<19x20xf32>' over 4 ranks, so it must be tensor<95xf32>, got 'tensor<96xf32>'}}
func.func @unsharded_type(%w: tensor<96xf32> {zero.unsharded_type = tensor<19x20xf32>}) {
  return
}

// -----

zero.group @dp world_size(2)

// A crash of the mlir fuzz target: the shard of INT64_MAX elements overflowed
// while rounding up.
// expected-error @+1 {{argument #0 holds a shard of 'tensor<9223372036854775807xf32>' over 2 ranks, so it must be tensor<4611686018427387904xf32>, got 'tensor<5xf32>'}}
func.func @unsharded_type_huge(%w: tensor<5xf32> {zero.unsharded_type = tensor<9223372036854775807xf32>}) {
  return
}

// -----

zero.group @dp world_size(2)

func.func @local_shard_huge(%a: tensor<9223372036854775807xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'zero.local_shard' op (C2) a shard of 9223372036854775807 elements over 2 ranks has 4611686018427387904 elements, got 'tensor<5xf32>'}}
  %s = zero.local_shard %a over @dp : tensor<9223372036854775807xf32> -> tensor<5xf32>
  return %s : tensor<5xf32>
}

// -----

// The world size of a sharded argument comes from the module's group.
// expected-error @+1 {{argument #0: 'zero.unsharded_type' needs a function in a module with a zero.group @dp}}
func.func @unsharded_type_no_group(%w: tensor<95xf32> {zero.unsharded_type = tensor<19x20xf32>}) {
  return
}

// -----

zero.group @dp world_size(4)

func.func @all_gather_start_c2(%s: tensor<96xf32>) -> tensor<19x20xf32> {
  // expected-error @+1 {{'zero.all_gather_start' op (C2) a shard of 380 elements over 4 ranks has 95 elements, got 'tensor<96xf32>'}}
  %f = zero.all_gather_start %s over @dp : tensor<96xf32> -> !zero.future<tensor<19x20xf32>>
  %w = zero.wait %f : !zero.future<tensor<19x20xf32>>
  return %w : tensor<19x20xf32>
}

// -----

zero.group @dp world_size(4)

func.func @start_c3(%s: tensor<95xf32>) {
  // expected-error @+1 {{'zero.all_gather_start' op (C3) the future must have exactly one use, a zero.wait}}
  %f = zero.all_gather_start %s over @dp : tensor<95xf32> -> !zero.future<tensor<19x20xf32>>
  return
}

// -----

zero.group @dp world_size(2)

func.func @all_reduce_start_c2(%x: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'zero.all_reduce_start' op (C2) the future's tensor must have the input's type 'tensor<4xf32>', got 'tensor<5xf32>'}}
  %f = zero.all_reduce_start %x over @dp : tensor<4xf32> -> !zero.future<tensor<5xf32>>
  %y = zero.wait %f : !zero.future<tensor<5xf32>>
  return %y : tensor<5xf32>
}

// -----

func.func @pack_c1(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'zero.pack' op (C1) chunks must be at least 1, got 0}}
  %p = zero.pack %x chunks(0) : tensor<4xf32> -> tensor<4xf32>
  return %p : tensor<4xf32>
}

// -----

func.func @pack_c2(%x: tensor<4xf32>, %y: tensor<2xbf16>) -> tensor<6xf32> {
  // expected-error @+1 {{'zero.pack' op (C2) every packed tensor must have element type 'f32', got 'tensor<2xbf16>'}}
  %p = zero.pack %x, %y chunks(1) : tensor<4xf32>, tensor<2xbf16> -> tensor<6xf32>
  return %p : tensor<6xf32>
}

// -----

func.func @pack_c3(%x: tensor<5xf32>, %y: tensor<3xf32>) -> tensor<8xf32> {
  // Each tensor is padded to whole chunks: 2 * (3 + 2) = 10 elements.
  // expected-error @+1 {{'zero.pack' op (C3) 2 tensors in 2 chunks pack into 10 elements, got 'tensor<8xf32>'}}
  %p = zero.pack %x, %y chunks(2) : tensor<5xf32>, tensor<3xf32> -> tensor<8xf32>
  return %p : tensor<8xf32>
}

// -----

// A crash of the mlir fuzz target: the padded sizes overflowed.
func.func @pack_c3_huge_chunks(%a: tensor<4x5xf32>, %b: tensor<3xf32>) -> tensor<24xf32> {
  // expected-error @+1 {{'zero.pack' op (C3) 2 tensors in 4611686018427387904 chunks pack into more than 9223372036854775807 elements}}
  %p = zero.pack %a, %b chunks(4611686018427387904) : tensor<4x5xf32>, tensor<3xf32> -> tensor<24xf32>
  return %p : tensor<24xf32>
}

// -----

func.func @unpack_c3(%flat: tensor<9xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'zero.unpack' op (C3) 1 tensors in 2 chunks pack into 6 elements, got 'tensor<9xf32>'}}
  %u = zero.unpack %flat chunks(2) : tensor<9xf32> -> tensor<5xf32>
  return %u : tensor<5xf32>
}

// -----

// Hybrid sharding: a subgroup names its axis and its parent together.
// expected-error @+1 {{'zero.group' op (C3) a subgroup names its axis and the group it is one 'of'; a group without an axis has no 'of'}}
zero.group @shard world_size(2) axis(shard)

// -----

zero.group @dp world_size(4)
// expected-error @+1 {{'zero.group' op (C3) a subgroup of 3 ranks does not divide @dp's 4}}
zero.group @shard world_size(3) axis(shard) of @dp

// -----

zero.group @dp world_size(4)
zero.group @shard world_size(2) axis(shard) of @dp
// expected-error @+1 {{'zero.group' op (C3) 'shard' does not name a zero.group without an axis}}
zero.group @replica world_size(2) axis(replica) of @shard

// -----

zero.group @dp world_size(4)
zero.group @shard world_size(2) axis(shard) of @dp

// A state sharded over @shard holds 1/2 of the tensor, not 1/4.
// expected-error @+1 {{argument #0 holds a shard of 'tensor<19x20xf32>' over 2 ranks, so it must be tensor<190xf32>, got 'tensor<95xf32>'}}
func.func @unsharded_type_over_shard(%w: tensor<95xf32> {zero.placement = #zero.placement<param, sharded over @shard>, zero.unsharded_type = tensor<19x20xf32>}) {
  return
}

// -----

zero.group @dp world_size(4)

// expected-error @+1 {{argument #0: 'zero.unsharded_type' needs a function in a module with a zero.group @shard}}
func.func @unsharded_type_no_shard_group(%w: tensor<190xf32> {zero.placement = #zero.placement<param, sharded over @shard>, zero.unsharded_type = tensor<19x20xf32>}) {
  return
}

// -----

func.func @to_host_of_host(%m: tensor<8xf32> {zero.placement = #zero.placement<moment, sharded in host>}) {
  // expected-error @+1 {{'zero.to_host' op (C1) the input is in host memory already}}
  %h = zero.to_host %m : tensor<8xf32>
  return
}

// -----

func.func @to_device_of_device(%g: tensor<8xf32>) {
  // expected-error @+1 {{'zero.to_device' op (C1) the input is in device memory already}}
  %d = zero.to_device %g : tensor<8xf32>
  return
}

// -----

func.func @host_op_reads_device(%g: tensor<8xf32>) {
  // expected-error @+1 {{'nn.cast' op runs on the host ('zero.host') but operand #0 is in device memory; copy it with zero.to_host}}
  %c = nn.cast %g {zero.host} : tensor<8xf32> -> tensor<8xbf16>
  return
}

// -----

func.func @host_attr_on_other_op(%g: tensor<8xf32> {zero.placement = #zero.placement<moment, sharded in host>}) {
  // expected-error @+1 {{'nn.relu' op runs on the host ('zero.host'), which only nn.adamw and nn.cast can}}
  %r = nn.relu %g {zero.host} : tensor<8xf32>
  return
}

// -----

// expected-error @+2 {{expected ::zero::sharding::Memory to be one of: device, host}}
// expected-error @+1 {{failed to parse Zero_PlacementAttr parameter 'memory'}}
func.func @bad_memory(%m: tensor<8xf32> {zero.placement = #zero.placement<moment, sharded in gpu>}) {
  return
}

zero.group @dp3 world_size(3)
zero.group @dp4 world_size(4) stage(3)

func.func @collectives(%w_shard: tensor<95xf32> {zero.placement = #zero.placement<param, sharded>},
                       %m: tensor<19x20xf32> {zero.placement = #zero.placement<moment, replicated>},
                       %loss: tensor<f32>) -> (tensor<95xf32>, tensor<f32>, tensor<95xf32>) {
  %w = zero.all_gather %w_shard over @dp4 : tensor<95xf32> -> tensor<19x20xf32>
  %g = zero.reduce_scatter %w over @dp4 : tensor<19x20xf32> -> tensor<95xf32>
  %s = zero.local_shard %m over @dp4 : tensor<19x20xf32> -> tensor<95xf32>
  zero.release %w : tensor<19x20xf32>
  %l = zero.all_reduce %loss over @dp4 : tensor<f32>
  return %g, %l, %s : tensor<95xf32>, tensor<f32>, tensor<95xf32>
}

func.func @tiny(%b: tensor<1xf32>) -> tensor<2xf32> {
  %full = zero.all_gather %b over @dp3 : tensor<1xf32> -> tensor<2xf32>
  return %full : tensor<2xf32>
}

func.func @async(%w_shard: tensor<95xf32>, %g: tensor<19x20xbf16>, %l: tensor<f32>)
    -> (tensor<19x20xf32>, tensor<95xbf16>, tensor<f32>) {
  %f = zero.all_gather_start %w_shard over @dp4 : tensor<95xf32> -> !zero.future<tensor<19x20xf32>>
  %r = zero.reduce_scatter_start %g over @dp4 : tensor<19x20xbf16> -> !zero.future<tensor<95xbf16>>
  %a = zero.all_reduce_start %l over @dp4 : tensor<f32> -> !zero.future<tensor<f32>>
  %w = zero.wait %f : !zero.future<tensor<19x20xf32>>
  %gs = zero.wait %r : !zero.future<tensor<95xbf16>>
  %ls = zero.wait %a : !zero.future<tensor<f32>>
  return %w, %gs, %ls : tensor<19x20xf32>, tensor<95xbf16>, tensor<f32>
}

func.func @buckets(%g1: tensor<4x5xf32>, %g2: tensor<3xf32>, %s: tensor<12xf32>) -> (tensor<24xf32>, tensor<10xf32>, tensor<2xf32>) {
  %b = zero.pack %g1, %g2 chunks(2) : tensor<4x5xf32>, tensor<3xf32> -> tensor<24xf32>
  %u:2 = zero.unpack %s chunks(1) : tensor<12xf32> -> tensor<10xf32>, tensor<2xf32>
  return %b, %u#0, %u#1 : tensor<24xf32>, tensor<10xf32>, tensor<2xf32>
}

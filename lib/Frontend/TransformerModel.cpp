//===- TransformerModel.cpp - GPT-2 and Llama in the nn dialect -----------===//
//
// Activations are [tokens, width] matrices (tokens = batch * seq_len, whole
// sequences contiguous). GPT-2 stores its Conv1D weights [in, out] and so
// multiplies them directly; Llama's nn.Linear weights are [out, in] and are
// multiplied transposed. Names and layouts are Hugging Face's.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/TransformerModel.h"

#include "dialects/nn/NNDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>

using namespace mlir;

namespace zero {
namespace {

/// Builds the function while adding each parameter as an argument.
class ModelBuilder {
public:
  ModelBuilder(MLIRContext *ctx, const TransformerConfig &config,
               const LMTrainShape &shape)
      : ctx(ctx), b(ctx), config(config), shape(shape),
        floatType(shape.bf16 ? Type(b.getBF16Type()) : b.getF32Type()),
        tokens(shape.batch * shape.seqLen) {}

  OwningOpRef<ModuleOp> build(Location loc);

private:
  MLIRContext *ctx;
  OpBuilder b;
  const TransformerConfig &config;
  const LMTrainShape &shape;
  Type floatType;
  int64_t tokens;
  Block *body = nullptr;
  func::FuncOp func;

  Location at(const Twine &name) {
    return NameLoc::get(b.getStringAttr(name));
  }
  RankedTensorType type(ArrayRef<int64_t> dims) {
    return RankedTensorType::get(dims, floatType);
  }

  /// A new argument of @forward: a parameter with its initialiser.
  Value param(StringRef name, ArrayRef<int64_t> dims, StringRef init,
              float scale = 0.0f) {
    unsigned index = func.getNumArguments();
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr(nn::kParamAttrName, b.getStringAttr(name)),
        b.getNamedAttr("nn.init", b.getStringAttr(init))};
    if (init == "normal")
      attrs.push_back(b.getNamedAttr("nn.init_scale", b.getF32FloatAttr(scale)));
    (void)func.insertArgument(index, type(dims), b.getDictionaryAttr(attrs),
                              at(name));
    return func.getArgument(index);
  }
  Value data(StringRef kind) {
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(
        index, RankedTensorType::get({tokens}, b.getI32Type()),
        b.getDictionaryAttr(
            b.getNamedAttr("nn.data", b.getStringAttr(kind))),
        at(kind));
    return func.getArgument(index);
  }

  Value linear(Location loc, Value x, Value w, bool transposed,
               Value bias = nullptr) {
    Value y = nn::MatmulOp::create(b, loc, x, w, false, transposed);
    return bias ? nn::BiasAddOp::create(b, loc, y.getType(), y, bias) : y;
  }
  Value layerNorm(const Twine &prefix, Value x) {
    int64_t c = config.hidden;
    Value gamma = param((prefix + ".weight").str(), {c}, "ones");
    Value beta = param((prefix + ".bias").str(), {c}, "zeros");
    // (Two statements: the gain must become an argument first.)
    return nn::LayerNormOp::create(b, at(prefix), x.getType(), x, gamma, beta,
                                   b.getF32FloatAttr(config.normEps));
  }
  Value rmsNorm(const Twine &name, Value x) {
    Value gamma = param(name.str(), {config.hidden}, "ones");
    return nn::RmsNormOp::create(b, at(name), x.getType(), x, gamma,
                                 b.getF32FloatAttr(config.normEps));
  }
  /// nn.rope with the config's base and scaling.
  Value rope(Location loc, Value v, int64_t heads) {
    const RopeScaling &scaling = config.ropeScaling;
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr("num_heads", b.getI64IntegerAttr(heads)),
        b.getNamedAttr("seq_len", b.getI64IntegerAttr(shape.seqLen)),
        b.getNamedAttr("theta", b.getF32FloatAttr(config.ropeTheta))};
    auto add = [&](StringRef name, Attribute value) {
      attrs.push_back(b.getNamedAttr(name, value));
    };
    if (scaling.kind == RopeScaling::Kind::Linear) {
      add("scaling", b.getStringAttr("linear"));
      add("factor", b.getF32FloatAttr(scaling.factor));
    } else if (scaling.kind == RopeScaling::Kind::Llama3) {
      add("scaling", b.getStringAttr("llama3"));
      add("factor", b.getF32FloatAttr(scaling.factor));
      add("low_freq_factor", b.getF32FloatAttr(scaling.lowFreqFactor));
      add("high_freq_factor", b.getF32FloatAttr(scaling.highFreqFactor));
      add("original_max_positions",
          b.getI64IntegerAttr(scaling.originalMaxPositions));
    }
    return nn::RopeOp::create(b, loc, v.getType(), v, attrs);
  }
  Value attention(Location loc, Value q, Value k, Value v) {
    return nn::AttentionOp::create(
        b, loc, q.getType(), q, k, v, b.getI64IntegerAttr(config.heads),
        b.getI64IntegerAttr(config.kvHeads),
        b.getI64IntegerAttr(shape.seqLen));
  }

  Value gpt2(Value tokenIds, Value positions);
  Value gpt2Block(int64_t layer, Value x);
  Value llama(Value tokenIds);
  Value llamaBlock(int64_t layer, Value x);
};

// Parameters become arguments in the order they are created, so each is
// created in a statement of its own: C++ leaves the order of function
// arguments unspecified.
Value ModelBuilder::gpt2Block(int64_t layer, Value x) {
  std::string p = "h." + std::to_string(layer);
  int64_t c = config.hidden, f = config.intermediate;
  float std = config.initStd;
  // GPT-2 scales the residual projections by 1/sqrt(2 * layers).
  float projStd = std / std::sqrt(2.0f * config.layers);
  auto conv1d = [&](Location loc, const std::string &name, Value input,
                    int64_t in, int64_t out, float initStd) {
    Value w = param(name + ".weight", {in, out}, "normal", initStd);
    Value bias = param(name + ".bias", {out}, "zeros");
    return linear(loc, input, w, /*transposed=*/false, bias);
  };

  Location attnLoc = at(p + ".attn");
  Value h = layerNorm(p + ".ln_1", x);
  Value qkv = conv1d(attnLoc, p + ".attn.c_attn", h, c, 3 * c, std);
  SmallVector<Value> parts;
  for (int64_t i = 0; i < 3; ++i)
    parts.push_back(nn::SliceColsOp::create(b, attnLoc, type({tokens, c}), qkv,
                                            b.getI64IntegerAttr(i * c)));
  Value a = attention(attnLoc, parts[0], parts[1], parts[2]);
  Value o = conv1d(attnLoc, p + ".attn.c_proj", a, c, c, projStd);
  x = nn::AddOp::create(b, attnLoc, x, o);

  Location mlpLoc = at(p + ".mlp");
  h = layerNorm(p + ".ln_2", x);
  Value up = conv1d(mlpLoc, p + ".mlp.c_fc", h, c, f, std);
  Value act = nn::GeluOp::create(b, mlpLoc, up);
  Value down = conv1d(mlpLoc, p + ".mlp.c_proj", act, f, c, projStd);
  return nn::AddOp::create(b, mlpLoc, x, down);
}

Value ModelBuilder::gpt2(Value tokenIds, Value positions) {
  int64_t c = config.hidden;
  Value wte = param("wte.weight", {config.vocabSize, c}, "normal",
                    config.initStd);
  Value wpe = param("wpe.weight", {config.maxPositions, c}, "normal",
                    config.initStd);
  Location embedLoc = at("embeddings");
  Value tok =
      nn::EmbeddingOp::create(b, embedLoc, type({tokens, c}), tokenIds, wte);
  Value pos =
      nn::EmbeddingOp::create(b, embedLoc, type({tokens, c}), positions, wpe);
  Value x = nn::AddOp::create(b, embedLoc, tok, pos);
  for (int64_t layer = 0; layer < config.layers; ++layer)
    x = gpt2Block(layer, x);
  x = layerNorm("ln_f", x);
  // The output head is the token embedding unless the config unties it.
  Value head = config.tieEmbeddings
                   ? wte
                   : param("lm_head.weight", {config.vocabSize, c}, "normal",
                           config.initStd);
  return linear(at("lm_head"), x, head, /*transposed=*/true);
}

Value ModelBuilder::llamaBlock(int64_t layer, Value x) {
  std::string p = "model.layers." + std::to_string(layer);
  int64_t c = config.hidden, f = config.intermediate;
  int64_t q = config.heads * config.headDim, kv = config.kvHeads * config.headDim;
  float std = config.initStd;
  Location attnLoc = at(p + ".self_attn");
  Value h = rmsNorm(p + ".input_layernorm.weight", x);
  // nn.Linear: weight [out, in], then the bias when the family has one.
  auto projection = [&](Location loc, const std::string &name, int64_t out,
                        int64_t in, Value input, bool hasBias) {
    Value w = param(name + ".weight", {out, in}, "normal", std);
    Value bias = hasBias ? param(name + ".bias", {out}, "zeros") : Value();
    return linear(loc, input, w, /*transposed=*/true, bias);
  };
  auto proj = [&](StringRef name, int64_t out, int64_t in, Value input,
                  bool hasBias) {
    return projection(attnLoc, p + ".self_attn." + name.str(), out, in, input,
                      hasBias);
  };
  Value qv = rope(attnLoc, proj("q_proj", q, c, h, config.qkvBias),
                  config.heads);
  Value kvk = rope(attnLoc, proj("k_proj", kv, c, h, config.qkvBias),
                   config.kvHeads);
  Value vv = proj("v_proj", kv, c, h, config.qkvBias);
  Value a = attention(attnLoc, qv, kvk, vv);
  x = nn::AddOp::create(b, attnLoc, x,
                        proj("o_proj", c, q, a, config.outputBias));

  Location mlpLoc = at(p + ".mlp");
  h = rmsNorm(p + ".post_attention_layernorm.weight", x);
  auto mlp = [&](StringRef name, int64_t out, int64_t in, Value input) {
    return projection(mlpLoc, p + ".mlp." + name.str(), out, in, input,
                      config.mlpBias);
  };
  Value gate = mlp("gate_proj", f, c, h);
  Value up = mlp("up_proj", f, c, h);
  Value act = nn::SwigluOp::create(b, mlpLoc, gate, up);
  return nn::AddOp::create(b, mlpLoc, x, mlp("down_proj", c, f, act));
}

Value ModelBuilder::llama(Value tokenIds) {
  int64_t c = config.hidden;
  Value embed = param("model.embed_tokens.weight", {config.vocabSize, c},
                      "normal", config.initStd);
  Value x = nn::EmbeddingOp::create(b, at("model.embed_tokens"),
                                    type({tokens, c}), tokenIds, embed);
  for (int64_t layer = 0; layer < config.layers; ++layer)
    x = llamaBlock(layer, x);
  x = rmsNorm("model.norm.weight", x);
  Value head = config.tieEmbeddings
                   ? embed
                   : param("lm_head.weight", {config.vocabSize, c}, "normal",
                           config.initStd);
  return linear(at("lm_head"), x, head, /*transposed=*/true);
}

OwningOpRef<ModuleOp> ModelBuilder::build(Location loc) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto lossType = RankedTensorType::get({}, b.getF32Type());
  func = func::FuncOp::create(b, loc, "forward",
                              b.getFunctionType({}, {lossType}));
  func->setAttr("nn.seq_len", b.getI64IntegerAttr(shape.seqLen));
  body = func.addEntryBlock();
  b.setInsertionPointToStart(body);

  bool isGPT2 = config.family == TransformerConfig::Family::GPT2;
  Value tokenIds = data("tokens");
  Value targets = data("targets");
  Value positions = isGPT2 ? data("positions") : Value();
  Value logits = isGPT2 ? gpt2(tokenIds, positions) : llama(tokenIds);
  Value loss = nn::SoftmaxCrossEntropyOp::create(b, at("loss"), lossType,
                                                 logits, targets, IntegerAttr());
  func::ReturnOp::create(b, loc, loss);
  return module;
}

} // namespace

OwningOpRef<ModuleOp> buildTransformer(MLIRContext *ctx,
                                       const TransformerConfig &config,
                                       const LMTrainShape &shape,
                                       Location loc) {
  ctx->loadDialect<nn::NNDialect, func::FuncDialect>();
  if (shape.batch < 1 || shape.seqLen < 1) {
    emitError(loc) << "--batch and --seq-len must be positive, got "
                   << shape.batch << " and " << shape.seqLen;
    return nullptr;
  }
  if (shape.seqLen > config.maxPositions) {
    emitError(loc) << "--seq-len=" << shape.seqLen << " exceeds the model's "
                   << config.maxPositions << " positions";
    return nullptr;
  }
  // A window at least as long as the sequence masks nothing that the causal
  // mask leaves: token i sees i - window < j <= i.
  if (config.slidingWindow && *config.slidingWindow < shape.seqLen) {
    emitError(loc) << "field 'sliding_window' = " << *config.slidingWindow
                   << " is shorter than --seq-len=" << shape.seqLen
                   << ", and sliding-window attention is not implemented; "
                      "train with --seq-len <= "
                   << *config.slidingWindow;
    return nullptr;
  }
  OwningOpRef<ModuleOp> module = ModelBuilder(ctx, config, shape).build(loc);
  // What the runtime's --export-hf writes as config.json.
  if (module)
    (*module)->setAttr("nn.hf_config",
                       StringAttr::get(ctx, exportHFConfig(config)));
  return module;
}

} // namespace zero

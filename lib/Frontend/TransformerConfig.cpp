//===- TransformerConfig.cpp - GPT-2 and Llama configurations -------------===//
#include "lib/Frontend/TransformerConfig.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace zero {

int64_t TransformerConfig::numParameters() const {
  int64_t c = hidden, q = heads * headDim, kv = kvHeads * headDim;
  if (family == Family::GPT2) {
    int64_t block = 2 * 2 * c                 // ln_1, ln_2
                    + c * 3 * c + 3 * c       // c_attn
                    + c * c + c               // attn.c_proj
                    + c * intermediate + intermediate  // mlp.c_fc
                    + intermediate * c + c;   // mlp.c_proj
    return vocabSize * c + maxPositions * c + layers * block + 2 * c;
  }
  int64_t block = 2 * c + c * q + 2 * c * kv + q * c + 3 * c * intermediate;
  return vocabSize * c * (tieEmbeddings ? 1 : 2) + layers * block + c;
}

static TransformerConfig gpt2(int64_t vocab, int64_t positions, int64_t hidden,
                              int64_t layers, int64_t heads) {
  TransformerConfig c;
  c.family = TransformerConfig::Family::GPT2;
  c.vocabSize = vocab;
  c.maxPositions = positions;
  c.hidden = hidden;
  c.layers = layers;
  c.heads = c.kvHeads = heads;
  c.headDim = heads > 0 ? hidden / heads : 0; // Validated later.
  c.intermediate = 4 * hidden;
  c.normEps = 1e-5f;
  c.tieEmbeddings = true;
  return c;
}

static TransformerConfig llama(int64_t vocab, int64_t positions,
                               int64_t hidden, int64_t layers, int64_t heads,
                               int64_t kvHeads, int64_t intermediate,
                               float theta, bool tied) {
  TransformerConfig c;
  c.family = TransformerConfig::Family::Llama;
  c.vocabSize = vocab;
  c.maxPositions = positions;
  c.hidden = hidden;
  c.layers = layers;
  c.heads = heads;
  c.kvHeads = kvHeads;
  c.headDim = heads > 0 ? hidden / heads : 0; // Validated later.
  c.intermediate = intermediate;
  c.normEps = 1e-5f;
  c.ropeTheta = theta;
  c.tieEmbeddings = tied;
  return c;
}

StringRef presetNames() {
  return "mlp, gpt2-tiny, gpt2, gpt2-medium, gpt2-large, gpt2-xl, "
         "llama-tiny, llama-1b";
}

std::optional<TransformerConfig> getPresetConfig(StringRef name) {
  // Byte-level vocabulary for the tiny models: they train on the shipped text.
  if (name == "gpt2-tiny")
    return gpt2(256, 64, 64, 2, 4);
  if (name == "gpt2")
    return gpt2(50257, 1024, 768, 12, 12);
  if (name == "gpt2-medium")
    return gpt2(50257, 1024, 1024, 24, 16);
  if (name == "gpt2-large")
    return gpt2(50257, 1024, 1280, 36, 20);
  if (name == "gpt2-xl")
    return gpt2(50257, 1024, 1600, 48, 25);
  if (name == "llama-tiny")
    return llama(256, 64, 64, 2, 4, 2, 176, 10000.0f, false);
  if (name == "llama-1b") // The shape of Llama 3.2 1B.
    return llama(128256, 131072, 2048, 16, 32, 8, 8192, 500000.0f, true);
  return std::nullopt;
}

namespace {
/// Reads fields of one JSON object, remembering the first error.
class FieldReader {
public:
  FieldReader(const json::Object &object, StringRef path, StringRef schema)
      : object(object), path(path), schema(schema) {}

  int64_t integer(StringRef key, std::optional<int64_t> fallback = {}) {
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null) {
      if (!fallback)
        fail("missing field '" + key + "'");
      return fallback.value_or(0);
    }
    if (std::optional<int64_t> v = value->getAsInteger())
      return *v;
    fail("field '" + key + "' must be an integer");
    return 0;
  }

  double number(StringRef key, std::optional<double> fallback = {}) {
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null) {
      if (!fallback)
        fail("missing field '" + key + "'");
      return fallback.value_or(0);
    }
    if (std::optional<double> v = value->getAsNumber())
      return *v;
    fail("field '" + key + "' must be a number");
    return 0;
  }

  bool boolean(StringRef key, bool fallback) {
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null)
      return fallback;
    if (std::optional<bool> v = value->getAsBoolean())
      return *v;
    fail("field '" + key + "' must be true or false");
    return fallback;
  }

  std::string string(StringRef key, StringRef fallback) {
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null)
      return fallback.str();
    if (std::optional<StringRef> v = value->getAsString())
      return v->str();
    fail("field '" + key + "' must be a string");
    return fallback.str();
  }

  bool isNull(StringRef key) {
    const json::Value *value = object.get(key);
    return !value || value->kind() == json::Value::Null;
  }

  void fail(const Twine &message) {
    if (error.empty())
      error = (path + ": " + message + " (" + schema + ")").str();
  }

  Error takeError() {
    return error.empty() ? Error::success()
                         : createStringError(inconvertibleErrorCode(), error);
  }

private:
  const json::Object &object;
  StringRef path, schema;
  std::string error;
};
} // namespace

// Fields are read one statement at a time, in the file's usual order, so
// that the first problem reported is the first one a reader meets.
static TransformerConfig readGPT2(FieldReader &f) {
  int64_t vocab = f.integer("vocab_size");
  int64_t positions = f.integer("n_positions");
  int64_t hidden = f.integer("n_embd");
  int64_t layers = f.integer("n_layer");
  int64_t heads = f.integer("n_head");
  TransformerConfig c = gpt2(vocab, positions, hidden, layers, heads);
  c.intermediate = f.integer("n_inner", 4 * c.hidden);
  c.normEps = f.number("layer_norm_epsilon", 1e-5);
  c.initStd = f.number("initializer_range", 0.02);
  c.tieEmbeddings = f.boolean("tie_word_embeddings", true);
  std::string act = f.string("activation_function", "gelu_new");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh")
    f.fail("activation_function '" + act +
           "' is not supported; zero-opt's GELU is the tanh form (gelu_new)");
  if (!c.tieEmbeddings)
    f.fail("tie_word_embeddings=false is not supported for GPT-2");
  return c;
}

static TransformerConfig readLlama(FieldReader &f) {
  int64_t vocab = f.integer("vocab_size");
  int64_t positions = f.integer("max_position_embeddings", 2048);
  int64_t hidden = f.integer("hidden_size");
  int64_t intermediate = f.integer("intermediate_size");
  int64_t layers = f.integer("num_hidden_layers");
  int64_t heads = f.integer("num_attention_heads");
  int64_t kvHeads = f.integer("num_key_value_heads", heads);
  double theta = f.number("rope_theta", 10000.0);
  bool tied = f.boolean("tie_word_embeddings", false);
  TransformerConfig c = llama(vocab, positions, hidden, layers, heads, kvHeads,
                              intermediate, theta, tied);
  c.normEps = f.number("rms_norm_eps", 1e-6);
  c.initStd = f.number("initializer_range", 0.02);
  if (heads > 0)
    c.headDim = f.integer("head_dim", c.hidden / heads);
  if (f.string("hidden_act", "silu") != "silu")
    f.fail("hidden_act must be silu");
  if (f.boolean("attention_bias", false) || f.boolean("mlp_bias", false))
    f.fail("attention_bias and mlp_bias are not supported");
  if (!f.isNull("rope_scaling"))
    f.fail("rope_scaling is not supported");
  return c;
}

Expected<TransformerConfig> parseHFConfig(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
  if (!file)
    return createStringError(file.getError(),
                             "cannot read " + path + ": " +
                                 file.getError().message());
  Expected<json::Value> parsed = json::parse((*file)->getBuffer());
  if (!parsed)
    return createStringError(inconvertibleErrorCode(),
                             path + ": not valid JSON: " +
                                 toString(parsed.takeError()));
  const json::Object *object = parsed->getAsObject();
  if (!object)
    return createStringError(inconvertibleErrorCode(),
                             path + ": expected a JSON object");
  std::optional<StringRef> modelType = object->getString("model_type");
  if (!modelType)
    return createStringError(inconvertibleErrorCode(),
                             path + ": missing field 'model_type'");
  TransformerConfig config;
  if (*modelType == "gpt2") {
    FieldReader f(*object, path, "GPT2Config");
    config = readGPT2(f);
    if (Error error = f.takeError())
      return std::move(error);
  } else if (*modelType == "llama") {
    FieldReader f(*object, path, "LlamaConfig");
    config = readLlama(f);
    if (Error error = f.takeError())
      return std::move(error);
  } else {
    return createStringError(inconvertibleErrorCode(),
                             path + ": model_type '" + *modelType +
                                 "' is not supported; zero-opt builds gpt2 "
                                 "and llama models");
  }
  if (Error error = validateConfig(config, path))
    return std::move(error);
  return config;
}

Error validateConfig(const TransformerConfig &c, StringRef source) {
  auto fail = [&](const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             source + ": " + message);
  };
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"vocabulary size", c.vocabSize},
        {"positions", c.maxPositions},
        {"hidden size", c.hidden},
        {"layers", c.layers},
        {"heads", c.heads},
        {"kv heads", c.kvHeads},
        {"head dim", c.headDim},
        {"intermediate size", c.intermediate}})
    if (value < 1)
      return fail(name + " must be positive, got " + Twine(value));
  if (c.family == TransformerConfig::Family::GPT2 &&
      c.hidden % c.heads != 0)
    return fail(Twine(c.heads) + " heads do not divide the hidden size " +
                Twine(c.hidden));
  if (c.heads % c.kvHeads != 0)
    return fail(Twine(c.kvHeads) + " kv heads do not divide " +
                Twine(c.heads) + " heads");
  if (c.family == TransformerConfig::Family::Llama && c.headDim % 2 != 0)
    return fail("rotary embeddings need an even head dim, got " +
                Twine(c.headDim));
  return Error::success();
}

} // namespace zero

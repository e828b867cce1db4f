//===- TransformerConfig.cpp - Hugging Face transformer configs -----------===//
//
// No field of a config.json is read silently. Each family has one table
// (kGPT2Fields, kLlamaFields, ...) that lists, for every field zero-opt knows:
//   Read     - built into the model (the readers below read exactly these);
//   NoEffect - ignored on purpose: it cannot change the computation
//              (token ids, generation settings, the saved dtype, ...);
//   Neutral  - it changes the math in a way zero-opt does not implement, so
//              only its neutral value is accepted, and any other value is
//              refused in one line naming the file, the field and the value.
// A field that no table lists is ignored with a warning.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/TransformerConfig.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace llvm;

namespace zero {

//===--- The field tables -------------------------------------------------===//

namespace {

enum class Use { Read, NoEffect, Neutral };

/// Whether a value leaves the math as zero-opt computes it (Neutral fields).
using NeutralTest = bool (*)(const json::Value &);

bool isNull(const json::Value &v) { return v.kind() == json::Value::Null; }
bool isFalse(const json::Value &v) {
  return isNull(v) || v.getAsBoolean() == std::optional<bool>(false);
}
bool isTrue(const json::Value &v) {
  return isNull(v) || v.getAsBoolean() == std::optional<bool>(true);
}
bool isZero(const json::Value &v) {
  return isNull(v) || v.getAsNumber() == std::optional<double>(0.0);
}
bool isOne(const json::Value &v) {
  return isNull(v) || v.getAsNumber() == std::optional<double>(1.0);
}
bool isEmpty(const json::Value &v) {
  if (isNull(v))
    return true;
  if (const json::Object *o = v.getAsObject())
    return o->empty();
  if (const json::Array *a = v.getAsArray())
    return a->empty();
  return false;
}

struct FieldRule {
  StringLiteral name;
  Use use;
  /// Read: what it sets. NoEffect: why it cannot matter. Neutral: why any
  /// other value is refused.
  StringLiteral note;
  NeutralTest neutral = nullptr;
};

constexpr FieldRule read(StringLiteral name, StringLiteral note) {
  return {name, Use::Read, note};
}
constexpr FieldRule noEffect(StringLiteral name, StringLiteral why) {
  return {name, Use::NoEffect, why};
}
constexpr FieldRule neutral(StringLiteral name, NeutralTest test,
                            StringLiteral why) {
  return {name, Use::Neutral, why, test};
}

constexpr StringLiteral kDropout =
    "dropout is not implemented (zero-opt trains without it); set it to 0.0 "
    "to train this model without dropout";

/// Fields of every PretrainedConfig.
const FieldRule kCommonFields[] = {
    read("model_type", "the family"),
    noEffect("_name_or_path", "where the file came from"),
    noEffect("architectures", "the class that saved it; model_type decides"),
    noEffect("auto_map", "remote-code class names"),
    noEffect("bos_token_id", "token ids matter to generation only"),
    noEffect("eos_token_id", "token ids matter to generation only"),
    noEffect("pad_token_id", "token ids matter to generation only"),
    noEffect("sep_token_id", "token ids matter to generation only"),
    noEffect("decoder_start_token_id", "token ids matter to generation only"),
    noEffect("torch_dtype", "the saved weights' dtype; --precision decides"),
    noEffect("dtype", "the saved weights' dtype; --precision decides"),
    noEffect("transformers_version", "bookkeeping"),
    noEffect("use_cache", "a KV cache serves generation only"),
    noEffect("output_attentions", "what the Python forward returns"),
    noEffect("output_hidden_states", "what the Python forward returns"),
    noEffect("return_dict", "what the Python forward returns"),
    noEffect("torchscript", "how PyTorch exports the model"),
    noEffect("use_bfloat16", "a TensorFlow loading option"),
    noEffect("tf_legacy_loss", "a TensorFlow loss option"),
    noEffect("id2label", "the classification heads' labels"),
    noEffect("label2id", "the classification heads' labels"),
    noEffect("num_labels", "the classification heads' labels"),
    noEffect("problem_type", "the classification heads' loss"),
    noEffect("finetuning_task", "bookkeeping"),
    noEffect("task_specific_params", "pipeline settings"),
    noEffect("prefix", "a generation prompt prefix"),
    noEffect("tokenizer_class", "the tokenizer"),
    noEffect("is_decoder", "a causal LM is always a decoder"),
    noEffect("chunk_size_feed_forward",
             "chunks the MLP over tokens: the same products"),
    noEffect("attn_implementation",
             "eager, sdpa or flash kernels compute the same attention"),
    noEffect("_attn_implementation",
             "eager, sdpa or flash kernels compute the same attention"),
    noEffect("max_length", "a generation setting"),
    noEffect("min_length", "a generation setting"),
    noEffect("do_sample", "a generation setting"),
    noEffect("early_stopping", "a generation setting"),
    noEffect("num_beams", "a generation setting"),
    noEffect("num_beam_groups", "a generation setting"),
    noEffect("diversity_penalty", "a generation setting"),
    noEffect("temperature", "a generation setting"),
    noEffect("top_k", "a generation setting"),
    noEffect("top_p", "a generation setting"),
    noEffect("typical_p", "a generation setting"),
    noEffect("repetition_penalty", "a generation setting"),
    noEffect("length_penalty", "a generation setting"),
    noEffect("no_repeat_ngram_size", "a generation setting"),
    noEffect("encoder_no_repeat_ngram_size", "a generation setting"),
    noEffect("bad_words_ids", "a generation setting"),
    noEffect("num_return_sequences", "a generation setting"),
    noEffect("output_scores", "a generation setting"),
    noEffect("return_dict_in_generate", "a generation setting"),
    noEffect("forced_bos_token_id", "a generation setting"),
    noEffect("forced_eos_token_id", "a generation setting"),
    noEffect("remove_invalid_values", "a generation setting"),
    noEffect("exponential_decay_length_penalty", "a generation setting"),
    noEffect("suppress_tokens", "a generation setting"),
    noEffect("begin_suppress_tokens", "a generation setting"),
    noEffect("tie_encoder_decoder", "encoder-decoder models only"),
    noEffect("cross_attention_hidden_size", "encoder-decoder models only"),
    neutral("is_encoder_decoder", isFalse,
            "zero-opt builds decoder-only causal language models"),
    neutral("add_cross_attention", isFalse,
            "cross-attention is not implemented"),
    neutral("pruned_heads", isEmpty, "pruned attention heads are not "
                                     "implemented"),
    neutral("quantization_config", isNull,
            "quantized weights are not implemented"),
};

const FieldRule kGPT2Fields[] = {
    read("vocab_size", "vocabulary (wte rows)"),
    read("n_positions", "positions (wpe rows)"),
    read("n_embd", "hidden size"),
    read("n_layer", "blocks"),
    read("n_head", "attention heads"),
    read("n_inner", "MLP width (null: 4 * n_embd)"),
    read("layer_norm_epsilon", "LayerNorm epsilon"),
    read("initializer_range", "standard deviation of the initial weights"),
    read("activation_function", "gelu_new or gelu_pytorch_tanh (tanh GELU)"),
    read("tie_word_embeddings", "lm_head shares wte (false: lm_head.weight)"),
    noEffect("n_ctx", "an old alias of n_positions that GPT2Config ignores"),
    noEffect("summary_type", "the sequence-summary head (not in the LM)"),
    noEffect("summary_use_proj", "the sequence-summary head (not in the LM)"),
    noEffect("summary_activation",
             "the sequence-summary head (not in the LM)"),
    noEffect("summary_proj_to_labels",
             "the sequence-summary head (not in the LM)"),
    noEffect("summary_first_dropout",
             "the sequence-summary head (not in the LM)"),
    noEffect("reorder_and_upcast_attn",
             "zero-opt's attention already forms scores and softmax in "
             "float32, which is what it asks for"),
    neutral("scale_attn_weights", isTrue,
            "zero-opt always scales attention scores by 1/sqrt(head_dim)"),
    neutral("scale_attn_by_inverse_layer_idx", isFalse,
            "scaling scores by 1/(layer + 1) is not implemented"),
    neutral("resid_pdrop", isZero, kDropout),
    neutral("embd_pdrop", isZero, kDropout),
    neutral("attn_pdrop", isZero, kDropout),
};

/// The fields the Llama-shaped families share.
const FieldRule kLlamaShapedFields[] = {
    read("vocab_size", "vocabulary (embed_tokens rows)"),
    read("max_position_embeddings", "positions (the longest --seq-len)"),
    read("hidden_size", "hidden size"),
    read("intermediate_size", "MLP width"),
    read("num_hidden_layers", "blocks"),
    read("num_attention_heads", "query heads"),
    read("num_key_value_heads", "key/value heads (grouped-query attention)"),
    read("head_dim", "head size (null: hidden_size / num_attention_heads)"),
    read("rms_norm_eps", "RMSNorm epsilon"),
    read("initializer_range", "standard deviation of the initial weights"),
    read("tie_word_embeddings", "lm_head shares embed_tokens"),
    read("hidden_act", "silu (SwiGLU)"),
    read("rope_theta", "rotary base (transformers 4)"),
    read("rope_scaling", "rotary scaling: default, linear, llama3 "
                         "(transformers 4)"),
    read("rope_parameters", "rotary base and scaling (transformers 5)"),
    neutral("attention_dropout", isZero, kDropout),
    neutral("partial_rotary_factor", isOne,
            "rotating only part of each head is not implemented"),
    neutral("qk_layernorm", isFalse, "normalising q and k is not implemented"),
    neutral("qk_norm", isFalse, "normalising q and k is not implemented"),
    neutral("use_qk_norm", isFalse, "normalising q and k is not implemented"),
    neutral("rope_interleaved", isFalse,
            "interleaved rotary pairs are not implemented (zero-opt pairs i "
            "with i + head_dim/2, as transformers does)"),
};

const FieldRule kLlamaFields[] = {
    read("attention_bias", "bias on q_proj, k_proj, v_proj and o_proj"),
    read("mlp_bias", "bias on gate_proj, up_proj and down_proj"),
    noEffect("pretraining_tp", "splits each projection into slices whose "
                               "results are summed: the same product"),
    noEffect("is_llama_config", "a marker of nanotron's conversion"),
    noEffect("sliding_window", "LlamaForCausalLM does not read it"),
};

const FieldRule kMistralFields[] = {
    read("sliding_window", "each token attends to this many latest tokens"),
    neutral("attention_bias", isFalse, "MistralForCausalLM has no biases"),
    neutral("mlp_bias", isFalse, "MistralForCausalLM has no biases"),
};

const FieldRule kQwen2Fields[] = {
    read("sliding_window", "window of the sliding layers"),
    read("use_sliding_window", "whether layers past max_window_layers slide"),
    read("max_window_layers", "layers before it attend in full"),
    read("layer_types", "full_attention or sliding_attention per layer "
                        "(transformers 5)"),
    neutral("use_mrope", isFalse, "multimodal rotary embeddings are not "
                                  "implemented"),
    neutral("attention_bias", isFalse,
            "Qwen2 has biases on q, k and v only, always"),
    neutral("mlp_bias", isFalse, "Qwen2's MLP has no biases"),
};

/// Keys inside rope_scaling / rope_parameters.
const FieldRule kRopeFields[] = {
    read("rope_type", "default, linear or llama3"),
    read("type", "the old spelling of rope_type"),
    read("rope_theta", "rotary base"),
    read("factor", "linear and llama3: frequency divisor"),
    read("low_freq_factor", "llama3"),
    read("high_freq_factor", "llama3"),
    read("original_max_position_embeddings", "llama3"),
    noEffect("attention_factor",
             "transformers does not use it for default, linear or llama3"),
    neutral("partial_rotary_factor", isOne,
            "rotating only part of each head is not implemented"),
};

/// The tables of a family, most specific first.
SmallVector<ArrayRef<FieldRule>> familyTables(StringRef modelType) {
  if (modelType == "gpt2")
    return {kGPT2Fields, kCommonFields};
  if (modelType == "mistral")
    return {kMistralFields, kLlamaShapedFields, kCommonFields};
  if (modelType == "qwen2")
    return {kQwen2Fields, kLlamaShapedFields, kCommonFields};
  return {kLlamaFields, kLlamaShapedFields, kCommonFields};
}

const FieldRule *findRule(ArrayRef<ArrayRef<FieldRule>> tables,
                          StringRef name) {
  for (ArrayRef<FieldRule> table : tables)
    for (const FieldRule &rule : table)
      if (rule.name == name)
        return &rule;
  return nullptr;
}

/// A value as the file would show it: numbers in their shortest form that
/// reads back the same (0.1, not 0.10000000000000001).
std::string render(const json::Value &value) {
  if (value.kind() == json::Value::Number && !value.getAsInteger()) {
    double d = *value.getAsNumber();
    for (int digits = 1; digits <= 17; ++digits) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.*g", digits, d);
      if (std::strtod(text, nullptr) == d)
        return text;
    }
  }
  std::string text;
  raw_string_ostream os(text);
  os << value;
  return text;
}

/// The neutral value a NeutralTest accepts, for the generated docs.
StringRef neutralText(NeutralTest test) {
  if (test == isFalse)
    return "false";
  if (test == isTrue)
    return "true";
  if (test == isZero)
    return "0";
  if (test == isOne)
    return "1";
  if (test == isEmpty)
    return "empty";
  return "null";
}

void printTable(raw_ostream &os, StringRef title, ArrayRef<FieldRule> rules) {
  os << "\n### " << title << "\n\n| field | zero-opt | why |\n|---|---|---|\n";
  for (const FieldRule &rule : rules) {
    os << "| `" << rule.name << "` | ";
    switch (rule.use) {
    case Use::Read:
      os << "read";
      break;
    case Use::NoEffect:
      os << "ignored";
      break;
    case Use::Neutral:
      os << "refused unless " << neutralText(rule.neutral) << " or absent";
      break;
    }
    os << " | " << rule.note << " |\n";
  }
}

//===--- Reading fields ---------------------------------------------------===//

/// Reads the fields of one JSON object (the config, or its rope dictionary:
/// `prefix` then names keys as "rope_parameters.factor"), remembering the
/// first error and which keys were read.
class FieldReader {
public:
  FieldReader(const json::Object &object, StringRef path, StringRef schema)
      : object(object), path(path), schema(schema) {}
  /// A reader of a nested object whose errors are `parent`'s.
  FieldReader(const json::Object &object, FieldReader &parent,
              std::string prefix)
      : object(object), path(parent.path), schema(parent.schema),
        prefix(std::move(prefix)), error(parent.error) {}

  const json::Value *get(StringRef key) {
    readKeys.insert(key);
    const json::Value *value = object.get(key);
    return value && !isNull(*value) ? value : nullptr;
  }

  int64_t integer(StringRef key, std::optional<int64_t> fallback = {}) {
    const json::Value *value = get(key);
    if (!value) {
      if (!fallback)
        fail("missing field '" + name(key) + "'");
      return fallback.value_or(0);
    }
    if (std::optional<int64_t> v = value->getAsInteger())
      return *v;
    fail("field '" + name(key) + "' must be an integer, got " +
         render(*value));
    return 0;
  }

  double number(StringRef key, std::optional<double> fallback = {}) {
    const json::Value *value = get(key);
    if (!value) {
      if (!fallback)
        fail("missing field '" + name(key) + "'");
      return fallback.value_or(0);
    }
    if (std::optional<double> v = value->getAsNumber())
      return *v;
    fail("field '" + name(key) + "' must be a number, got " + render(*value));
    return 0;
  }

  bool boolean(StringRef key, bool fallback) {
    const json::Value *value = get(key);
    if (!value)
      return fallback;
    if (std::optional<bool> v = value->getAsBoolean())
      return *v;
    fail("field '" + name(key) + "' must be true or false, got " +
         render(*value));
    return fallback;
  }

  std::string string(StringRef key, StringRef fallback) {
    const json::Value *value = get(key);
    if (!value)
      return fallback.str();
    if (std::optional<StringRef> v = value->getAsString())
      return v->str();
    fail("field '" + name(key) + "' must be a string, got " + render(*value));
    return fallback.str();
  }

  /// A refusal of the value the file gives `key`.
  void refuse(StringRef key, const Twine &why) {
    const json::Value *value = object.get(key);
    fail("field '" + name(key) + "' = " +
         (value ? render(*value) : std::string("(absent)")) +
         " is not supported: " + why);
  }

  /// Checks every key of the object against `tables`: Neutral fields at
  /// another value are refused, unlisted ones become warnings.
  void checkAgainst(ArrayRef<ArrayRef<FieldRule>> tables,
                    std::vector<std::string> &warnings) {
    // Keys in file order would be nicer, but json::Object is unordered:
    // sort them so the first refusal does not depend on hashing.
    SmallVector<StringRef> keys;
    for (const auto &entry : object)
      keys.push_back(entry.first);
    llvm::sort(keys);
    for (StringRef key : keys) {
      const FieldRule *rule = findRule(tables, key);
      if (!rule)
        warnings.push_back((path + ": field '" + name(key) +
                            "' is not in zero-opt's " + schema +
                            " table; it is ignored (if it changes the model, "
                            "the result will differ from transformers')")
                               .str());
      else if (rule->use == Use::Read && !readKeys.contains(key) &&
               !isNull(*object.get(key)))
        warnings.push_back((path + ": field '" + name(key) +
                            "' is not used with the other settings; ignored")
                               .str());
      else if (rule->use == Use::Neutral && !rule->neutral(*object.get(key)))
        refuse(key, rule->note);
    }
#ifndef NDEBUG
    for (const auto &key : readKeys) {
      const FieldRule *rule = findRule(tables, key.getKey());
      assert(rule && rule->use == Use::Read &&
             "a field read but not listed as Read in its table");
    }
#endif
  }

  void fail(const Twine &message) {
    if (error.empty())
      error = (path + ": " + message + " (" + schema + ")").str();
  }
  bool failed() const { return !error.empty(); }

  Error takeError() {
    return error.empty() ? Error::success()
                         : createStringError(inconvertibleErrorCode(), error);
  }

  std::string name(StringRef key) const { return prefix + key.str(); }

private:
  const json::Object &object;
  StringRef path, schema;
  std::string prefix;
  StringSet<> readKeys;
  std::string ownError;
  std::string &error = ownError; // the outermost reader's
};
} // namespace

void printConfigFieldTables(raw_ostream &os) {
  os << "# Hugging Face config fields\n\n"
        "<!-- Generated by `zero-opt --print-config-fields` from the tables "
        "in lib/Frontend/TransformerConfig.cpp (`ninja zero-doc`); do not "
        "edit. -->\n\n"
        "How `zero-opt --model-config` treats each field of a config.json: "
        "**read** into the model; **ignored** because it cannot change the "
        "computation; or **refused** (one error naming the file, the field "
        "and its value) unless it has the value that leaves the math as "
        "zero-opt computes it. A field that no table lists is ignored with "
        "a warning. A family's fields are its own table's, then the shared "
        "ones below it.\n";
  os << "\n## gpt2 (GPT2Config)\n";
  printTable(os, "GPT-2", kGPT2Fields);
  os << "\n## llama, mistral, qwen2 (LlamaConfig, MistralConfig, "
        "Qwen2Config)\n";
  printTable(os, "llama", kLlamaFields);
  printTable(os, "mistral", kMistralFields);
  printTable(os, "qwen2", kQwen2Fields);
  printTable(os, "Shared by llama, mistral and qwen2", kLlamaShapedFields);
  printTable(os, "Inside rope_scaling (transformers 4) or rope_parameters "
                 "(transformers 5)",
             kRopeFields);
  os << "\n## Every family\n";
  printTable(os, "Fields of every PretrainedConfig", kCommonFields);
}

//===--- GPT-2 ------------------------------------------------------------===//

static TransformerConfig gpt2(int64_t vocab, int64_t positions, int64_t hidden,
                              int64_t layers, int64_t heads) {
  TransformerConfig c;
  c.family = TransformerConfig::Family::GPT2;
  c.modelType = "gpt2";
  c.vocabSize = vocab;
  c.maxPositions = positions;
  c.hidden = hidden;
  c.layers = layers;
  c.heads = c.kvHeads = heads;
  c.headDim = heads > 0 ? hidden / heads : 0; // Validated later.
  // GPT-2's MLP is 4x wide; a hidden size out of range (too large, or
  // negative) keeps its sign, saturates, and is refused by validateConfig.
  if (hidden > INT64_MAX / 4)
    c.intermediate = INT64_MAX;
  else if (hidden < INT64_MIN / 4)
    c.intermediate = INT64_MIN;
  else
    c.intermediate = 4 * hidden;
  c.normEps = 1e-5f;
  c.tieEmbeddings = true;
  return c;
}

// Fields are read one statement at a time, in the file's usual order, so
// that the first problem reported is the first one a reader meets.
static TransformerConfig readGPT2(FieldReader &f) {
  int64_t vocab = f.integer("vocab_size");
  int64_t positions = f.integer("n_positions");
  int64_t hidden = f.integer("n_embd");
  int64_t layers = f.integer("n_layer");
  int64_t heads = f.integer("n_head");
  TransformerConfig c = gpt2(vocab, positions, hidden, layers, heads);
  c.intermediate = f.integer("n_inner", c.intermediate);
  c.normEps = f.number("layer_norm_epsilon", 1e-5);
  c.initStd = f.number("initializer_range", 0.02);
  c.tieEmbeddings = f.boolean("tie_word_embeddings", true);
  std::string act = f.string("activation_function", "gelu_new");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh")
    f.refuse("activation_function",
             "zero-opt's GELU is the tanh form (gelu_new, gelu_pytorch_tanh)");
  return c;
}

//===--- Rotary embeddings ------------------------------------------------===//

/// Reads the rotary base and scaling of a Llama-shaped config from either
/// spelling: transformers 4's top-level rope_theta and rope_scaling, or
/// transformers 5's rope_parameters (which holds both).
static void readRope(FieldReader &f, TransformerConfig &c,
                     std::vector<std::string> &warnings) {
  std::optional<double> topTheta;
  if (f.get("rope_theta"))
    topTheta = f.number("rope_theta");
  const json::Value *scaling = f.get("rope_scaling");
  const json::Value *parameters = f.get("rope_parameters");
  if (scaling && parameters && *scaling != *parameters) {
    f.fail("fields 'rope_scaling' and 'rope_parameters' disagree (" +
           render(*scaling) + " vs " + render(*parameters) +
           "); give one of them");
    return;
  }
  const json::Value *dictValue = parameters ? parameters : scaling;
  c.ropeTheta = topTheta.value_or(10000.0);
  if (!dictValue)
    return;
  StringRef dictName = parameters ? "rope_parameters" : "rope_scaling";
  const json::Object *dict = dictValue->getAsObject();
  if (!dict) {
    f.fail("field '" + dictName + "' must be an object, got " +
           render(*dictValue));
    return;
  }
  FieldReader r(*dict, f, (dictName + ".").str());
  if (r.get("rope_theta")) {
    double theta = r.number("rope_theta");
    if (topTheta && *topTheta != theta)
      r.fail("field '" + r.name("rope_theta") + "' = " +
             render(json::Value(theta)) +
             " disagrees with field 'rope_theta' = " +
             render(json::Value(*topTheta)));
    c.ropeTheta = theta;
  }
  std::string type = r.string("rope_type", r.string("type", "default"));
  RopeScaling &s = c.ropeScaling;
  if (type == "default") {
    s.kind = RopeScaling::Kind::None;
  } else if (type == "linear") {
    s.kind = RopeScaling::Kind::Linear;
    s.factor = r.number("factor");
    if (!r.failed() && !(s.factor > 0))
      r.refuse("factor", "the linear scaling factor must be positive");
  } else if (type == "llama3") {
    s.kind = RopeScaling::Kind::Llama3;
    s.factor = r.number("factor");
    s.lowFreqFactor = r.number("low_freq_factor");
    s.highFreqFactor = r.number("high_freq_factor");
    s.originalMaxPositions = r.integer("original_max_position_embeddings");
    if (!r.failed() && !(s.factor > 0))
      r.refuse("factor", "the llama3 scaling factor must be positive");
    else if (!r.failed() && !(s.lowFreqFactor > 0 &&
                              s.highFreqFactor > s.lowFreqFactor))
      r.refuse("high_freq_factor",
               "llama3 scaling needs 0 < low_freq_factor < high_freq_factor");
    else if (!r.failed() && s.originalMaxPositions < 1)
      r.refuse("original_max_position_embeddings", "it must be positive");
  } else {
    r.refuse(r.get("rope_type") ? "rope_type" : "type",
             "zero-opt implements the default, linear and llama3 rotary "
             "embeddings");
  }
  if (!r.failed())
    r.checkAgainst({kRopeFields}, warnings);
}

//===--- The Llama-shaped family ------------------------------------------===//

static void readSlidingWindow(FieldReader &f, TransformerConfig &c) {
  if (c.modelType == "mistral") {
    if (f.get("sliding_window"))
      c.slidingWindow = f.integer("sliding_window");
    return;
  }
  // qwen2: transformers 5 lists each layer's kind in layer_types; 4 derives
  // them: layers from max_window_layers on slide when use_sliding_window.
  bool use = f.boolean("use_sliding_window", false);
  int64_t window = f.integer("sliding_window", 0);
  int64_t fullLayers = f.integer("max_window_layers", 28);
  bool anySliding = use && window > 0 && fullLayers < c.layers;
  if (const json::Value *types = f.get("layer_types")) {
    const json::Array *list = types->getAsArray();
    if (!list || (int64_t)list->size() != c.layers) {
      f.refuse("layer_types", "it must list 'full_attention' or "
                              "'sliding_attention' for each of the " +
                                  Twine(c.layers) + " layers");
      return;
    }
    anySliding = false;
    for (const json::Value &kind : *list) {
      std::optional<StringRef> text = kind.getAsString();
      if (text != "full_attention" && text != "sliding_attention") {
        f.refuse("layer_types", "layer kinds are full_attention or "
                                "sliding_attention");
        return;
      }
      // transformers 5 drops the window unless use_sliding_window.
      anySliding |= *text == "sliding_attention" && use && window > 0;
    }
  }
  if (anySliding)
    c.slidingWindow = window;
}

static TransformerConfig readLlamaShaped(FieldReader &f, StringRef modelType,
                                         std::vector<std::string> &warnings) {
  bool isLlama = modelType == "llama", isQwen2 = modelType == "qwen2";
  TransformerConfig c;
  c.family = TransformerConfig::Family::Llama;
  c.modelType = modelType.str();
  c.vocabSize = f.integer("vocab_size");
  // The defaults are each config class's own, for fields a file may omit.
  c.maxPositions = f.integer("max_position_embeddings",
                             isLlama ? 2048 : isQwen2 ? 32768 : 131072);
  c.hidden = f.integer("hidden_size");
  c.intermediate = f.integer("intermediate_size");
  c.layers = f.integer("num_hidden_layers");
  c.heads = f.integer("num_attention_heads");
  c.kvHeads = f.integer("num_key_value_heads",
                        isLlama ? c.heads : isQwen2 ? 32 : 8);
  c.headDim = f.integer("head_dim", c.heads > 0 ? c.hidden / c.heads : 0);
  c.normEps = f.number("rms_norm_eps", 1e-6);
  c.initStd = f.number("initializer_range", 0.02);
  c.tieEmbeddings = f.boolean("tie_word_embeddings", false);
  if (f.string("hidden_act", "silu") != "silu")
    f.refuse("hidden_act", "zero-opt's gated MLP is SwiGLU (silu)");
  readRope(f, c, warnings);
  if (isLlama) {
    c.qkvBias = c.outputBias = f.boolean("attention_bias", false);
    c.mlpBias = f.boolean("mlp_bias", false);
  } else {
    c.qkvBias = isQwen2;
    readSlidingWindow(f, c);
  }
  return c;
}

//===--- Parsing ----------------------------------------------------------===//

Expected<TransformerConfig> parseHFConfigText(StringRef text,
                                              StringRef source) {
  auto error = [&](const Twine &message) {
    return createStringError(inconvertibleErrorCode(), source + ": " + message);
  };
  Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return error("not valid JSON: " + toString(parsed.takeError()));
  const json::Object *object = parsed->getAsObject();
  if (!object)
    return error("expected a JSON object");
  std::optional<StringRef> modelType = object->getString("model_type");
  if (!modelType)
    return error("missing field 'model_type'");
  static const StringMap<StringRef> schemas = {{"gpt2", "GPT2Config"},
                                               {"llama", "LlamaConfig"},
                                               {"mistral", "MistralConfig"},
                                               {"qwen2", "Qwen2Config"}};
  auto schema = schemas.find(*modelType);
  if (schema == schemas.end())
    return error("model_type '" + *modelType +
                 "' is not supported; zero-opt builds gpt2, llama, mistral "
                 "and qwen2 models");
  FieldReader f(*object, source, schema->second);
  std::vector<std::string> warnings;
  f.get("model_type");
  TransformerConfig config = *modelType == "gpt2"
                                 ? readGPT2(f)
                                 : readLlamaShaped(f, *modelType, warnings);
  if (!f.failed())
    f.checkAgainst(familyTables(*modelType), warnings);
  if (Error err = f.takeError())
    return std::move(err);
  if (Error err = validateConfig(config, source))
    return std::move(err);
  config.warnings = std::move(warnings);
  return config;
}

Expected<TransformerConfig> parseHFConfig(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
  if (!file)
    return createStringError(file.getError(),
                             "cannot read " + path + ": " +
                                 file.getError().message());
  return parseHFConfigText((*file)->getBuffer(), path);
}

/// The largest size a config may give one dimension: 2^31 - 1.
static constexpr int64_t kMaxConfigDimension = (int64_t(1) << 31) - 1;

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
        {"intermediate size", c.intermediate}}) {
    if (value < 1)
      return fail(name + " must be positive, got " + Twine(value));
    // No real model comes near, and the products of larger sizes (tensor
    // sizes, FLOP counts) would overflow int64.
    if (value > kMaxConfigDimension)
      return fail(name + " " + Twine(value) + " is too large (at most " +
                  Twine(kMaxConfigDimension) + ")");
  }
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
  if (c.family == TransformerConfig::Family::Llama && !(c.ropeTheta > 1.0f))
    return fail("the rotary base rope_theta must exceed 1, got " +
                render(json::Value(c.ropeTheta)));
  if (c.slidingWindow && *c.slidingWindow < 1)
    return fail("sliding_window must be positive, got " +
                Twine(*c.slidingWindow));
  return Error::success();
}

//===--- Presets ----------------------------------------------------------===//

namespace {
/// The published config.json of each preset model, embedded at build time
/// from lib/Frontend/presets/NAME.json (see CMakeLists.txt).
struct PublishedConfig {
  const char *name;
  const char *json;
};
const PublishedConfig kPublishedConfigs[] = {
#include "PresetConfigs.inc"
};
} // namespace

static TransformerConfig llamaTiny() {
  TransformerConfig c;
  c.family = TransformerConfig::Family::Llama;
  c.modelType = "llama";
  c.vocabSize = 256;
  c.maxPositions = 64;
  c.hidden = 64;
  c.layers = 2;
  c.heads = 4;
  c.kvHeads = 2;
  c.headDim = 16;
  c.intermediate = 176;
  c.normEps = 1e-5f;
  c.ropeTheta = 10000.0f;
  c.tieEmbeddings = false;
  return c;
}

StringRef presetNames() {
  static const std::string names = [] {
    std::string text = "mlp, gpt2-tiny, gpt2, gpt2-medium, gpt2-large, "
                       "gpt2-xl, llama-tiny";
    for (const PublishedConfig &config : kPublishedConfigs)
      text += std::string(", ") + config.name;
    return text;
  }();
  return names;
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
    return llamaTiny();
  for (const PublishedConfig &config : kPublishedConfigs) {
    if (name != config.name)
      continue;
    Expected<TransformerConfig> parsed =
        parseHFConfigText(config.json, ("--model=" + name).str());
    // The build embeds files that the tests parse: a failure is a bug here.
    if (!parsed)
      report_fatal_error(parsed.takeError());
    return *parsed;
  }
  return std::nullopt;
}

} // namespace zero

//===- zero-opt.cpp - the zero-opt compiler driver ------------------------===//
//
// An mlir-opt-style tool: every standard MLIR flag works, every pass is
// registered, and `--stage=N` picks the pipeline of one ZeRO stage. Beyond
// mlir-opt it builds models from presets (`--model=mlp`) and carries the
// result on to LLVM IR, an object file or a linked executable (`--emit`).
//
//===----------------------------------------------------------------------===//
#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"
#include "lib/Codegen/Codegen.h"
#include "lib/Frontend/MLPModel.h"
#include "lib/Frontend/TransformerModel.h"
#include "lib/Pipelines/Pipelines.h"
#include "lib/Pipelines/Planner.h"
#include "passes/Analysis/MemoryPrediction.h"
#include "passes/Analysis/SchedulePrediction.h"
#include "tools/zero-opt/NestingDepth.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <array>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class EmitKind { Auto, MLIR, LLVM, Object, Executable, Report };

cl::OptionCategory zeroCategory("zero-opt options");

cl::opt<std::string> modelName(
    "model",
    cl::desc("Build a built-in model instead of reading an input file: mlp, "
             "gpt2-tiny, gpt2, gpt2-medium, gpt2-large, gpt2-xl, llama-tiny, "
             "or the published config of llama3.2-1b, llama3.1-8b, "
             "qwen2.5-0.5b, smollm2-135m, mistral-7b (v0.3), "
             "mistral-7b-v0.1"),
    cl::value_desc("name"), cl::cat(zeroCategory));
cl::opt<std::string> modelConfig(
    "model-config",
    cl::desc("Build the model of a Hugging Face config.json (GPT2Config, "
             "LlamaConfig, MistralConfig or Qwen2Config)"),
    cl::value_desc("config.json"), cl::cat(zeroCategory));
cl::opt<int64_t> seqLen("seq-len",
                        cl::desc("Language models: tokens per sequence"),
                        cl::init(64), cl::cat(zeroCategory));
cl::opt<std::string> precision(
    "precision",
    cl::desc("Language models: fp32, or bf16 (bfloat16 parameters, "
             "activations and gradients with float32 master weights)"),
    cl::init("fp32"), cl::cat(zeroCategory));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to write (default: exe when --stage and -o FILE "
                     "are given, else mlir; also inferred from -o's suffix)"),
    cl::values(clEnumValN(EmitKind::MLIR, "mlir", "MLIR after the passes"),
               clEnumValN(EmitKind::LLVM, "llvm", "LLVM IR"),
               clEnumValN(EmitKind::Object, "obj", "an object file"),
               clEnumValN(EmitKind::Executable, "exe",
                          "an executable linked with libzrt")),
    cl::init(EmitKind::Auto), cl::cat(zeroCategory));
cl::opt<std::string> report(
    "report",
    cl::desc("Print the predicted peak memory and traffic per rank next to "
             "the ZeRO formulas instead of compiling (--report=json for "
             "JSON); needs --stage"),
    cl::value_desc("table|json"), cl::ValueOptional, cl::cat(zeroCategory));
cl::opt<bool> printPipeline(
    "print-pipeline",
    cl::desc("With --stage: print the pass pipeline it runs, as the text "
             "--pass-pipeline= takes, and exit"),
    cl::cat(zeroCategory));
cl::opt<bool> plan(
    "plan",
    cl::desc("Search the stage, the units kept gathered, the recomputed "
             "units, the prefetch distance, the bucket size (and with "
             "--grad-accum the accumulation) for the fastest configuration "
             "whose predicted peak fits --memory-limit, print the ranking "
             "and exit; flags given fix their value. --stage=auto compiles "
             "the choice"),
    cl::cat(zeroCategory));
cl::opt<bool> printConfigFields(
    "print-config-fields",
    cl::desc("Print how --model-config treats every Hugging Face config "
             "field (docs/HFConfigFields.md) and exit"),
    cl::cat(zeroCategory));
cl::opt<std::string> runtimeDir(
    "runtime-dir",
    cl::desc("Directory of libzrt.so and libzrt_main.a for linking"),
    cl::value_desc("dir"), cl::cat(zeroCategory));

cl::opt<int64_t> mlpHiddenLayers("mlp-hidden-layers",
                                 cl::desc("MLP: number of hidden layers"),
                                 cl::init(2), cl::cat(zeroCategory));
cl::opt<int64_t> mlpWidth("mlp-width", cl::desc("MLP: units per hidden layer"),
                          cl::init(50), cl::cat(zeroCategory));
cl::opt<int64_t> mlpFeatures("mlp-features",
                             cl::desc("MLP: input features per example"),
                             cl::init(20), cl::cat(zeroCategory));
cl::opt<int64_t> mlpClasses("mlp-classes", cl::desc("MLP: number of classes"),
                            cl::init(10), cl::cat(zeroCategory));
cl::opt<std::string> mlpActivation("mlp-activation",
                                   cl::desc("MLP: relu or gelu"),
                                   cl::init("relu"), cl::cat(zeroCategory));
cl::opt<int64_t> batch("batch",
                       cl::desc("Global batch: examples (mlp) or sequences "
                                "(language models) per step over all ranks; "
                                "24 and 8 by default"),
                       cl::cat(zeroCategory));

cl::opt<int64_t> chunkRows(
    "chunk-rows",
    cl::desc("With --deterministic and --model/--model-config: rows "
             "(examples or sequences) each rank computes per micro-batch, 1 "
             "by default; --batch stays the optimizer step's rows and "
             "--grad-accum is derived (--batch / (--world-size x this)), so "
             "the same flags give the same bits at every world size"),
    cl::init(0), cl::cat(zeroCategory));

int fail(const llvm::Twine &message) {
  llvm::errs() << "zero-opt: error: " << message << "\n";
  return 1;
}

/// zero-opt's flags for the stage pipeline: one per StageOptions option,
/// with its name and help, so that the options are declared once
/// (lib/Pipelines/Pipelines.h). A flag given is passed on as `name=value` in
/// the pipeline's text, and StageOptions parses it.
class StageFlags {
public:
  StageFlags() {
    options.forEachOption([&](const cl::Option &option) {
      bool isList = option.getNumOccurrencesFlag() == cl::ZeroOrMore;
      auto flag = std::make_unique<Flag>();
      flag->values = std::make_unique<cl::list<std::string>>(
          option.ArgStr, cl::desc(option.HelpStr),
          cl::value_desc(option.ValueStr.empty() ? "value" : option.ValueStr),
          cl::cat(zeroCategory),
          isList ? cl::CommaSeparated : cl::MiscFlags(0));
      // A bare boolean flag (--fuse-epilogues) means true.
      if (option.getValueExpectedFlag() == cl::ValueOptional)
        flag->values->setValueExpectedFlag(cl::ValueOptional);
      flag->isList = isList;
      flags.push_back(std::move(flag));
    });
  }

  /// The last value given to the flag of option `name`, else `otherwise`.
  std::string value(StringRef name, StringRef otherwise = "") const {
    for (const auto &flag : flags)
      if (flag->values->ArgStr == name && !flag->values->empty())
        return (*flag->values)[flag->values->size() - 1];
    return otherwise.str();
  }

  /// Every value given to the flag of option `name`, comma-joined (a
  /// list's values), else the last one; "" when not given.
  std::string joinedValue(StringRef name) const {
    for (const auto &flag : flags)
      if (flag->values->ArgStr == name && !flag->values->empty())
        return flag->isList ? llvm::join(*flag->values, ",")
                            : (*flag->values)[flag->values->size() - 1];
    return "";
  }

  /// Whether the flag of option `name` was given.
  bool given(StringRef name) const {
    for (const auto &flag : flags)
      if (flag->values->ArgStr == name)
        return flag->values->getNumOccurrences() > 0;
    return false;
  }

  /// Sets option `name` to `value` in place of its flag (what zero-opt
  /// derives itself, such as --deterministic's --grad-accum).
  void setDerived(StringRef name, std::string value) {
    derived[name.str()] = std::move(value);
  }

  /// The options the flags set, as the `name=value ...` text StageOptions
  /// parses; unchecked.
  std::string optionsText() const {
    std::string given;
    llvm::raw_string_ostream text(given);
    for (const auto &[name, value] : derived)
      text << " " << name << "=" << value;
    for (const auto &flag : flags) {
      const cl::list<std::string> &values = *flag->values;
      if (!values.getNumOccurrences() ||
          derived.count(values.ArgStr.str()))
        continue;
      // The last occurrence wins, as for a plain cl::opt; a list keeps all.
      std::string last = values.empty() ? "" : values[values.size() - 1];
      std::string value = flag->isList   ? llvm::join(values, ",")
                          : last.empty() ? std::string("true")
                                         : last;
      text << " " << values.ArgStr << "="
           << (flag->isList ? "{" + value + "}" : value);
    }
    return given;
  }

  /// The options the flags set, checked, as `zero-stage-pipeline{...}` with
  /// every option's value; with `stopAtZrt` the pipeline stops at the zrt
  /// program.
  FailureOr<std::string> pipelineText(bool stopAtZrt) {
    std::string given = optionsText();
    zero::StageOptions parsed;
    FailureOr<std::string> problem = zero::parseStageOptions(given, parsed);
    if (failed(problem)) {
      fail("cannot read the pipeline flags:" + given);
      return failure();
    }
    if (!problem->empty()) {
      fail(*problem);
      return failure();
    }
    parsed.stopAtZrt = parsed.stopAtZrt || stopAtZrt;
    std::string pipeline;
    llvm::raw_string_ostream os(pipeline);
    os << "zero-stage-pipeline";
    parsed.print(os);
    return pipeline;
  }

private:
  struct Flag {
    std::unique_ptr<cl::list<std::string>> values;
    bool isList = false;
  };
  /// Owns the option names and help the flags point into.
  zero::StageOptions options;
  std::vector<std::unique_ptr<Flag>> flags;
  std::map<std::string, std::string> derived;
};

/// The pipeline that --stage and its flags ask for, checked, as the text of
/// the passes to run inside builtin.module: zero-stage-pipeline{...} with
/// every StageOptions value, then zero-report{...} with --report.
/// The stage flags, registered on first use (before the command line is
/// parsed).
StageFlags &stageFlags() {
  static StageFlags flags;
  return flags;
}

FailureOr<std::string> stagePipelineText(const zero::PlanCandidate *baseline) {
  bool reporting = report.getNumOccurrences() > 0;
  std::string format = report.empty() ? "table" : report.getValue();
  if (reporting && format != "table" && format != "json") {
    fail("--report=" + format + " is not a format; use table or json");
    return failure();
  }
  FailureOr<std::string> text = stageFlags().pipelineText(reporting);
  if (failed(text) || !reporting)
    return text;
  zero::StageOptions parsed; // checked by pipelineText
  (void)zero::parseStageOptions(stageFlags().optionsText(), parsed);
  std::string reportOptions =
      "format=" + format + " " + parsed.timeModel().text();
  if (baseline)
    reportOptions +=
        llvm::formatv(" baseline-activation-peak={0} baseline-peak={1}",
                      baseline->activationPeakBytes, baseline->peakBytes);
  return *text + ",zero-report{" + reportOptions + "}";
}

/// Whether --report asks for the program without recomputation too.
bool reportsRecompute() {
  std::string recompute = stageFlags().joinedValue("recompute");
  return report.getNumOccurrences() && !recompute.empty() &&
         recompute != "none";
}

/// Whether the stage options leave the planner something to decide before
/// the pipeline runs (decideBeforePipeline).
bool needsPlannerDecision() {
  zero::StageOptions parsed;
  FailureOr<std::string> problem =
      zero::parseStageOptions(stageFlags().optionsText(), parsed);
  // Options that do not parse are refused by name when the pipeline's text
  // is built.
  if (failed(problem) || !problem->empty())
    return false;
  return parsed.accumulationUndecided() || reportsRecompute();
}

/// What the pipeline's passes cannot decide alone, since it takes a compile
/// of its own, decided by the planner and handed to them as options:
/// `--accumulate=auto` under `--memory-limit` (the stage option
/// `accumulate`), and for `--report` with `--recompute` the program without
/// recomputation (returned, for zero-report's options).
std::optional<zero::PlanCandidate>
decideBeforePipeline(StringRef input, DialectRegistry &registry) {
  if (std::optional<std::string> accumulate =
          zero::decideAccumulation(input, registry, stageFlags().optionsText()))
    stageFlags().setDerived("accumulate", *accumulate);
  if (!reportsRecompute())
    return std::nullopt;
  return zero::predictWithoutRecompute(input, registry,
                                       stageFlags().optionsText());
}

/// The emit kind, from --emit or else from the output name.
EmitKind resolveEmitKind(StringRef outputFilename) {
  if (emitKind != EmitKind::Auto)
    return emitKind;
  StringRef ext = llvm::sys::path::extension(outputFilename);
  if (ext == ".ll")
    return EmitKind::LLVM;
  if (ext == ".o")
    return EmitKind::Object;
  // A device such as /dev/null is never linked over.
  bool isDevice = llvm::sys::fs::exists(outputFilename) &&
                  !llvm::sys::fs::is_regular_file(outputFilename);
  // Without --stage, or with --stop-at-zrt, the result is MLIR.
  if (ext == ".mlir" || outputFilename == "-" || isDevice ||
      !stageFlags().given("stage") || stageFlags().given("stop-at-zrt"))
    return EmitKind::MLIR;
  return EmitKind::Executable;
}

/// Refuses input nested too deep for MLIR's parser with a message instead of
/// crashing (NestingDepth.h).
bool checkNestingDepth(const llvm::MemoryBuffer &buffer) {
  std::optional<int> line = zero::findTooDeepNesting(buffer.getBuffer());
  if (!line)
    return true;
  fail(buffer.getBufferIdentifier() + ":" + llvm::Twine(*line) +
       ": input nests deeper than " + llvm::Twine(zero::kMaxNestingDepth) +
       " levels; zero-opt refuses it rather than overflow the parser's "
       "stack");
  return false;
}

/// The transformer configuration of --model or --model-config, if any; the
/// fields the config's table does not know are reported as warnings.
std::optional<llvm::Expected<zero::TransformerConfig>> transformerConfig() {
  if (!modelConfig.empty()) {
    llvm::Expected<zero::TransformerConfig> config =
        zero::parseHFConfig(modelConfig);
    if (config)
      for (const std::string &warning : config->warnings)
        llvm::errs() << "zero-opt: warning: " << warning << "\n";
    return config;
  }
  if (std::optional<zero::TransformerConfig> preset =
          zero::getPresetConfig(modelName))
    return llvm::Expected<zero::TransformerConfig>(*preset);
  return std::nullopt;
}

/// The model's batch when --deterministic cuts --batch into chunks (0: the
/// --batch flag, or the model's default).
int64_t deterministicModelBatch = 0;

/// --batch, or the default of the model (24 examples for the MLP, 8
/// sequences for a transformer).
int64_t stepBatch() {
  if (batch.getNumOccurrences())
    return batch;
  return modelName == "mlp" ? 24 : 8;
}

/// --deterministic with a built model: each rank computes chunks of
/// --chunk-rows rows per micro-batch, so the model is built with a batch of
/// world size x chunk rows and --grad-accum is the number of micro-batches
/// that make --batch. Fails (with the message) when they do not divide.
LogicalResult deriveDeterministicChunks() {
  std::string deterministic = stageFlags().value("deterministic", "false");
  bool on = stageFlags().given("deterministic") &&
            (deterministic.empty() || deterministic == "true" ||
             deterministic == "1");
  bool builtModel = !modelName.empty() || !modelConfig.empty();
  if (chunkRows.getNumOccurrences() && !(on && builtModel)) {
    fail(on ? "--chunk-rows applies to --model/--model-config; a "
              "hand-written model's chunk is its micro-batch per rank"
            : "--chunk-rows sets the chunk of --deterministic; give "
              "--deterministic too");
    return failure();
  }
  if (!on || !builtModel)
    return success();
  if (stageFlags().given("grad-accum")) {
    fail("--deterministic derives --grad-accum from --batch, --world-size "
         "and --chunk-rows (micro-batches = batch / (world size x chunk "
         "rows)); do not give it");
    return failure();
  }
  int64_t rows = chunkRows.getNumOccurrences() ? chunkRows.getValue() : 1;
  int64_t worldSize = 1;
  if (StringRef(stageFlags().value("world-size", "1"))
          .getAsInteger(10, worldSize) ||
      worldSize < 1)
    return success(); // StageOptions::check names it.
  int64_t total = stepBatch();
  if (rows < 1 || total % (worldSize * rows) != 0) {
    fail("--deterministic: --batch=" + Twine(total) +
         " does not divide into chunks of --chunk-rows=" + Twine(rows) +
         " for each of --world-size=" + Twine(worldSize) + " ranks");
    return failure();
  }
  deterministicModelBatch = worldSize * rows;
  stageFlags().setDerived("grad-accum",
                          std::to_string(total / (worldSize * rows)));
  return success();
}

/// Builds the module of --model / --model-config, or reports why not.
OwningOpRef<ModuleOp> buildModel(MLIRContext &ctx) {
  Location loc = NameLoc::get(StringAttr::get(&ctx, "model"));
  if (auto config = transformerConfig()) {
    if (!*config) {
      fail(llvm::toString(config->takeError()));
      return nullptr;
    }
    if (precision != "fp32" && precision != "bf16") {
      fail("--precision=" + precision + " is not known; use fp32 or bf16");
      return nullptr;
    }
    zero::LMTrainShape shape;
    shape.batch = deterministicModelBatch ? deterministicModelBatch
                                          : stepBatch();
    shape.seqLen = seqLen;
    shape.bf16 = precision == "bf16";
    return zero::buildTransformer(&ctx, **config, shape, loc);
  }
  if (modelName != "mlp") {
    fail("--model=" + modelName + " is not a known model; known: " +
         zero::presetNames());
    return nullptr;
  }
  zero::MLPOptions options{mlpHiddenLayers, mlpWidth, mlpFeatures,
                           mlpClasses,
                           deterministicModelBatch ? deterministicModelBatch
                                                   : stepBatch(),
                           mlpActivation};
  return zero::buildMLP(&ctx, options);
}

/// The input: a built model printed as MLIR, or the input file.
std::unique_ptr<llvm::MemoryBuffer> loadInput(StringRef inputFilename,
                                              DialectRegistry &registry) {
  bool fromModel = !modelName.empty() || !modelConfig.empty();
  if (!fromModel) {
    std::string error;
    auto file = openInputFile(inputFilename, &error);
    if (!file)
      fail(error);
    else if (!checkNestingDepth(*file))
      return nullptr;
    return file;
  }
  if (inputFilename != "-") {
    fail("give either --model/--model-config or an input file, not both");
    return nullptr;
  }
  if (!modelName.empty() && !modelConfig.empty()) {
    fail("give either --model or --model-config, not both");
    return nullptr;
  }
  MLIRContext ctx(registry);
  std::string source = modelConfig.empty() ? "--model=" + modelName
                                           : "--model-config=" + modelConfig;
  ScopedDiagnosticHandler reportOptionErrors(&ctx, [&](Diagnostic &diag) {
    fail(source + ": " + diag.str());
    return success();
  });
  OwningOpRef<ModuleOp> module = buildModel(ctx);
  if (!module)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo(false));
  return llvm::MemoryBuffer::getMemBufferCopy(text, "<" + source + ">");
}

/// The predicted peak memory per rank of `input` compiled by the stage
/// pipeline with `options` (StageOptions text), or nullopt when that
/// configuration does not compile (a world size that does not divide the
/// batch, say).
std::optional<int64_t> predictedPeak(StringRef input, StringRef options,
                                     DialectRegistry &registry) {
  zero::PlanCandidate prediction;
  if (!zero::predictConfiguration(input, registry, options, prediction))
    return std::nullopt;
  return prediction.peakBytes;
}

/// After --memory-limit refused the configuration: the smallest world size,
/// and at it the smallest stage, whose predicted peak fits, as a note.
void suggestFittingConfiguration(StringRef input, DialectRegistry &registry) {
  std::optional<int64_t> limit =
      zero::parseByteSize(stageFlags().value("memory-limit"));
  // The flags the search sets itself are dropped from the given ones;
  // --keep-gathered applies to stage 3 only.
  std::string given = stageFlags().optionsText(), others, keepGathered;
  for (StringRef option : llvm::split(given, ' ')) {
    StringRef name = option.split('=').first;
    if (name == "keep-gathered")
      keepGathered = " " + option.str();
    else if (!option.empty() && name != "stage" && name != "world-size" &&
             name != "memory-limit")
      others += " " + option.str();
  }
  auto candidate = [&](int64_t stage, int64_t worldSize) {
    return predictedPeak(input,
                         llvm::formatv("stage={0} world-size={1}{2}{3}",
                                       stage, worldSize, others,
                                       stage == 3 ? keepGathered : "")
                             .str(),
                         registry);
  };
  int64_t stage0 = 0, world0 = 1;
  if (StringRef(stageFlags().value("stage", "0")).getAsInteger(10, stage0) ||
      StringRef(stageFlags().value("world-size", "1"))
          .getAsInteger(10, world0))
    return;
  std::optional<int64_t> now = candidate(stage0, world0);
  if (!limit || !now || *now <= *limit)
    return; // Refused for another reason.
  constexpr int64_t kLargestWorldSize = 1024;
  for (int64_t world = world0; world <= kLargestWorldSize; ++world) {
    for (int64_t stage = world == world0 ? stage0 + 1 : stage0; stage <= 3;
         ++stage) {
      std::optional<int64_t> peak = candidate(stage, world);
      if (!peak)
        break; // This world size does not compile at any stage.
      if (*peak > *limit)
        continue;
      llvm::errs() << llvm::formatv(
          "zero-opt: note: the smallest configuration that fits: "
          "--stage={0} --world-size={1} (predicted peak {2} bytes per "
          "rank)\n",
          stage, world, *peak);
      return;
    }
  }
  llvm::errs() << "zero-opt: note: "
               << (stage0 == 3 ? std::string("stage 3 does not fit")
                               : llvm::formatv("no stage from {0} to 3 fits",
                                               stage0)
                                     .str())
               << " on up to " << kLargestWorldSize
               << " ranks with this batch; a smaller --batch or --seq-len "
                  "lowers the activations\n";
}

/// The options --plan and --stage=auto search.
constexpr std::array<StringLiteral, 8> kPlannedOptions = {
    "stage",    "shard-group-size", "keep-gathered", "recompute",
    "prefetch", "bucket-bytes",     "accumulate",    "offload"};

/// --plan / --stage=auto: searches the configurations of `input` (the flags
/// given fix theirs), prints the ranking (--plan) or a note of the choice
/// (--stage=auto, which then compiles it), and returns the choice, or
/// failure with a message when none fits.
FailureOr<zero::PlanCandidate> planConfiguration(StringRef input,
                                                 DialectRegistry &registry,
                                                 bool autoStage) {
  // The other options, as given, with no limit (the planner applies it).
  std::string given = stageFlags().optionsText(), base;
  for (StringRef option : llvm::split(given, ' ')) {
    StringRef name = option.split('=').first;
    if (!option.empty() && name != "memory-limit" &&
        name != "host-memory-limit" &&
        !llvm::is_contained(kPlannedOptions, name))
      base += " " + option.str();
  }
  zero::StageOptions parsed;
  if (failed(zero::parseStageOptions(base, parsed))) {
    fail("cannot read the pipeline flags:" + base);
    return failure();
  }
  std::vector<std::pair<std::string, std::string>> fixed;
  for (StringRef name : kPlannedOptions)
    if (stageFlags().given(name) && !(name == "stage" && autoStage))
      fixed.emplace_back(name.str(), stageFlags().joinedValue(name));
  if (parsed.deterministic)
    fixed.emplace_back("accumulate", "local");
  std::optional<zero::ModelUnits> units = zero::readModelUnits(input, registry);
  if (!units) {
    fail("--plan needs an nn model with a @forward function");
    return failure();
  }
  zero::PlanLimits limits;
  for (auto [flag, limit] :
       {std::pair<StringRef, std::optional<int64_t> *>{"memory-limit",
                                                       &limits.device},
        {"host-memory-limit", &limits.host}}) {
    if (!stageFlags().given(flag))
      continue;
    *limit = zero::parseByteSize(stageFlags().value(flag));
    if (!*limit) {
      fail("--" + flag.str() + "=" + stageFlags().value(flag) +
           " is not a byte count; give bytes, with a unit if you like "
           "(80GiB, 40GB, 512MiB, 1.5e9)");
      return failure();
    }
  }
  std::vector<zero::PlanAxis> axes = zero::planAxes(
      *units, {0, 1, 2, 3}, parsed.worldSize, parsed.gradAccum,
      /*searchOffload=*/limits.device.has_value(), fixed);
  zero::PlanResult result =
      zero::searchPlans(input, registry, base, axes, limits);
  std::string header = llvm::formatv(
      "zero-opt plan: world size {0}, {1} micro-batch(es) a step; time "
      "model {2}",
      parsed.worldSize, parsed.gradAccum, parsed.timeModel().text());
  if (!autoStage)
    zero::printPlan(llvm::outs(), result, header, limits);
  const zero::PlanCandidate *chosen = result.chosen();
  if (!chosen) {
    std::string smallest;
    if (!result.candidates.empty()) {
      const zero::PlanCandidate *least = &result.candidates.front();
      for (const zero::PlanCandidate &c : result.candidates)
        if (c.peakBytes < least->peakBytes)
          least = &c;
      smallest = llvm::formatv("; the smallest predicted peak is {0} bytes "
                               "({1})",
                               least->peakBytes, least->flags());
    }
    fail(llvm::formatv("no configuration of the {0} searched fits{1}{2}",
                       result.candidates.size() + result.failed,
                       (limits.device ? " --memory-limit=" +
                                            stageFlags().value("memory-limit")
                                      : std::string()) +
                           (limits.host
                                ? " --host-memory-limit=" +
                                      stageFlags().value("host-memory-limit")
                                : std::string()),
                       smallest)
             .str());
    return failure();
  }
  if (autoStage)
    llvm::errs() << llvm::formatv(
        "zero-opt: --stage=auto chose {0} (predicted peak {1} bytes a rank, "
        "step {2}; --plan ranks all {3})\n",
        chosen->flags(), chosen->peakBytes,
        zero::formatSeconds(chosen->stepSeconds),
        result.candidates.size());
  return *chosen;
}

/// Runs the configured passes on the input, then translates, compiles or
/// links it: the part of the work MlirOptMain does not do.
LogicalResult compileBeyondMLIR(std::unique_ptr<llvm::MemoryBuffer> input,
                                DialectRegistry &registry,
                                const MlirOptMainConfig &config,
                                EmitKind kind, StringRef outputFilename) {
  MLIRContext ctx(registry);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!module)
    return failure();

  PassManager pm(&ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  if (failed(config.setupPassPipeline(pm)) || failed(pm.run(*module)))
    return failure();

  Location loc = module->getLoc();
  if (kind == EmitKind::Report)
    return success(); // The report pass printed it.
  if (kind == EmitKind::LLVM) {
    std::string error;
    auto out = openOutputFile(outputFilename, &error);
    if (!out)
      return emitError(loc) << error;
    if (failed(zero::emitLLVMIR(*module, out->os())))
      return failure();
    out->keep();
    return success();
  }
  if (kind == EmitKind::Object)
    return zero::emitObjectFile(*module, outputFilename);

  SmallString<128> objectPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "zero-program", "o", objectPath))
    return emitError(loc) << "cannot create a temporary object file: "
                          << ec.message();
  llvm::FileRemover removeObject(objectPath);
  if (failed(zero::emitObjectFile(*module, objectPath)))
    return failure();
  return zero::linkExecutable(loc, objectPath, outputFilename, runtimeDir);
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DialectRegistry registry;
  registry.insert<zero::nn::NNDialect, zero::sharding::ZeroDialect,
                  zero::zrt::ZrtDialect, func::FuncDialect, arith::ArithDialect, LLVM::LLVMDialect>();
  zero::registerCodegenTranslations(registry);
  zero::registerAllZeroPasses();
  stageFlags(); // Registers --stage, --world-size, ... before parsing.

  // Diagnostics name the op and its location; the whole enclosing function
  // printed after each one buries that line, so it is off unless asked for.
  SmallVector<char *> args(argv, argv + argc);
  std::string quietOps = "--mlir-print-op-on-diagnostic=false";
  if (llvm::none_of(args, [](StringRef arg) {
        return arg.starts_with("--mlir-print-op-on-diagnostic");
      }))
    args.insert(args.begin() + 1, quietOps.data());
  argc = args.size();
  argv = args.data();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "zero-opt: compiles models into ZeRO-sharded training "
                  "programs",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (printConfigFields) {
    zero::printConfigFieldTables(llvm::outs());
    return 0;
  }

  // --plan and --stage=auto search before anything is compiled, so they
  // load the input first.
  std::unique_ptr<llvm::MemoryBuffer> input;
  bool autoStage = stageFlags().value("stage") == "auto";
  if (plan || autoStage) {
    if (plan && (printPipeline || report.getNumOccurrences()))
      return fail("--plan prints its ranking and exits; give it without "
                  "--print-pipeline and --report (--stage=auto takes them)");
    if (failed(deriveDeterministicChunks()))
      return 1;
    input = loadInput(inputFilename, registry);
    if (!input)
      return 1;
    FailureOr<zero::PlanCandidate> chosen =
        planConfiguration(input->getBuffer(), registry, autoStage);
    if (failed(chosen))
      return 1;
    if (plan)
      return 0;
    for (const auto &[name, value] : chosen->choice)
      if (!value.empty())
        stageFlags().setDerived(name, name == "keep-gathered" ||
                                              name == "recompute"
                                          ? "{" + value + "}"
                                          : value);
  }

  if (stageFlags().given("stage")) {
    if (!autoStage && failed(deriveDeterministicChunks()))
      return 1;
    std::optional<zero::PlanCandidate> baseline;
    if (needsPlannerDecision()) {
      if (!input)
        input = loadInput(inputFilename, registry);
      if (!input)
        return 1;
      baseline = decideBeforePipeline(input->getBuffer(), registry);
    }
    FailureOr<std::string> pipeline =
        stagePipelineText(baseline ? &*baseline : nullptr);
    if (failed(pipeline))
      return 1;
    if (printPipeline) {
      llvm::outs() << "builtin.module(" << *pipeline << ")\n";
      return 0;
    }
    // Through the text, so that --stage runs exactly what --print-pipeline
    // shows.
    config.setPassPipelineSetupFn([pipeline = *pipeline](PassManager &pm) {
      return parsePassPipeline(pipeline, pm);
    });
  } else if (report.getNumOccurrences()) {
    return fail("--report needs --stage=N (and --world-size=N)");
  } else if (printPipeline) {
    return fail("--print-pipeline prints the pipeline of --stage=N; give "
                "--stage");
  } else if (stageFlags().given("world-size")) {
    return fail("--world-size applies to --stage=N; to run single passes, "
                "give the passes their world-size option instead");
  }

  if (!input)
    input = loadInput(inputFilename, registry);
  if (!input)
    return 1;
  // What --memory-limit's search compiles again when the limit refuses.
  std::string inputText =
      stageFlags().given("memory-limit") ? input->getBuffer().str() : "";
  auto refused = [&] {
    if (!inputText.empty())
      suggestFittingConfiguration(inputText, registry);
    return 1;
  };

  EmitKind kind = report.getNumOccurrences() ? EmitKind::Report
                                             : resolveEmitKind(outputFilename);
  // Said before compiling, not as the linker's or the writer's failure
  // after it.
  if (kind != EmitKind::Report && outputFilename != "-") {
    StringRef directory = llvm::sys::path::parent_path(outputFilename);
    if (!directory.empty() && !llvm::sys::fs::is_directory(directory))
      return fail("-o " + outputFilename + ": the directory '" + directory +
                  "' does not exist (create it first)");
  }
  if (kind == EmitKind::MLIR) {
    std::string error;
    auto output = openOutputFile(outputFilename, &error);
    if (!output)
      return fail(error);
    if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
      return refused();
    output->keep();
    return 0;
  }
  if (config.shouldVerifyDiagnostics() ||
      !config.inputSplitMarker().empty())
    return fail("--verify-diagnostics and --split-input-file work with "
                "--emit=mlir only");
  if (kind != EmitKind::LLVM && kind != EmitKind::Report &&
      outputFilename == "-")
    return fail("--emit=obj and --emit=exe need an output file (-o NAME)");
  return failed(compileBeyondMLIR(std::move(input), registry, config, kind,
                                  outputFilename))
             ? refused()
             : 0;
}

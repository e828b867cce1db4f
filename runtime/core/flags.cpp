//===- flags.cpp - Command-line flags of a compiled program ---------------===//

#include "core/flags.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace zrt {

/// `names` as "a", "a<last>b", "a, b<last>c", ...
static std::string listOf(const std::vector<std::string> &names,
                          const char *last) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return list;
}

std::string usage(const char *program) {
  return std::string("usage: ") + program +
         " [flags]\n"
         "Trains the model zero-opt compiled into this program: a classifier\n"
         "on synthetic data, or a language model on a token file (--data).\n"
         "Start it with mpirun -np <world size it was compiled for>.\n"
         "\n"
         "flags:\n"
         "  --steps=N            training steps to run (default 20); 0 only\n"
         "                       allocates and initialises, then prints the\n"
         "                       memory ledger\n"
         "  --lr=F               AdamW learning rate (default 0.001)\n"
         "  --adam-beta1=F       AdamW beta1, in [0, 1) (default 0.9)\n"
         "  --adam-beta2=F       AdamW beta2, in [0, 1) (default 0.999)\n"
         "  --adam-eps=F         AdamW epsilon (default 1e-08)\n"
         "  --weight-decay=F     decoupled weight decay (default 0.01)\n"
         "  --seed=N             seed for parameter init and data (default "
         "1234)\n"
         "  --clip-grad-norm=F   clip the global gradient norm to F (default 0:"
         "\n"
         "                       off)\n"
         "  --data=PATH          token files (llm.c's uint16 or uint32\n"
         "                       format) of a language model, required to\n"
         "                       train one: a file, a directory of *.bin\n"
         "                       or a glob ('corpus_train_*.bin'), read in\n"
         "                       name order as one stream\n"
         "  --init-from=PATH     load parameters from a .safetensors file, a\n"
         "                       model.safetensors.index.json (sharded), or\n"
         "                       a directory holding either (F32/BF16/F16)\n"
         "  --save=FILE          write parameters to a .safetensors file "
         "after\n"
         "                       the last step\n"
         "  --export-hf=DIR      after the last step, write model.safetensors\n"
         "                       and config.json there: a Hugging Face model\n"
         "                       that transformers' from_pretrained loads\n"
         "  --checkpoint-dir=DIR write the whole training state (parameters,\n"
         "                       masters, Adam moments, step) there, each\n"
         "                       rank its own shard, after the last step\n"
         "  --checkpoint-every=K also after every K steps\n"
         "  --keep=N             keep only the newest N checkpoints\n"
         "  --resume[=DIR]       continue from a checkpoint (DIR, or DIR's\n"
         "                       newest; bare or =latest: --checkpoint-dir's\n"
         "                       newest), at any stage and world size;\n"
         "                       --steps counts from the start of the run\n"
         "  --lr-schedule=S      constant (default), cosine or linear decay\n"
         "                       of the learning rate from --lr to --min-lr\n"
         "                       at the last step, after --warmup-steps\n"
         "  --warmup-steps=N     linear warm-up from --lr/N over N steps\n"
         "  --min-lr=F           the rate the decay ends at (default 0)\n"
         "  --log-every=N        a progress line (loss, gradient norm,\n"
         "                       learning rate, ms/step, tokens/s, peak\n"
         "                       memory) every N steps, after that step's\n"
         "                       'step k loss x' line (without it: every\n"
         "                       step's line, no progress lines)\n"
         "  --log-every-step     with --log-every: every step's line too\n"
         "  --log-json=FILE      the same per step, one JSON object a line\n"
         "  --eval-every=K       every K steps and after the last, a\n"
         "                       validation loss: forward only, no update,\n"
         "                       the mean over --eval-steps batches\n"
         "  --eval-steps=M       validation batches (default 8), the same\n"
         "                       ones each time: the first M of --val-data\n"
         "                       (language models), or synthetic data of\n"
         "                       another seed (classifiers)\n"
         "  --val-data=PATH      token files of the validation text (as\n"
         "                       --data)\n"
         "  SIGINT/SIGTERM       every rank finishes its step, writes a\n"
         "                       checkpoint (with --checkpoint-dir) and exits\n"
         "  --trace=FILE         write a Chrome/Perfetto trace of every "
         "rank's\n"
         "                       kernels and collectives (ui.perfetto.dev) "
         "and\n"
         "                       print how much collective time was exposed\n"
         "  --check-finite       when the gradient norm is not finite, name\n"
         "                       the first parameter whose gradient is not\n"
         "                       (debugging: a synchronisation a parameter)\n"
         "  --check-collectives  before each collective, check that every\n"
         "                       rank runs the same one (debugging; CPU)\n"
         "  --check-schedule     measure when each collective began and how\n"
         "                       long its wait blocked, and at exit name\n"
         "                       every one later than the compiler's plan\n"
         "                       (zero-opt --report lists it; CPU)\n"
         "  --calibrate=FILE     measure GEMM FLOP/s, memory and link\n"
         "                       bandwidth and latency on these ranks, write\n"
         "                       them for zero-opt --calibration=FILE, exit\n"
         "  --schedule-tolerance=MS  how much later than planned is late\n"
         "                       (default 5)\n"
         "  --collective-timeout=S  seconds a rank waits for a collective\n"
         "                       before it stops the job, naming it (default\n"
         "                       300, or ZRT_COLLECTIVE_TIMEOUT_S)\n"
         "  --device=D           where the kernels run: auto (default),\n"
         "                       cpu or cuda (one GPU per rank); auto is\n"
         "                       cuda when libzrt has the CUDA backend and\n"
         "                       every rank has a GPU of its own\n" +
         (otherBackendNames().empty()
              ? std::string()
              : std::string("                       (this program also "
                            "has ") +
                    listOf(otherBackendNames(), ", ") + ")\n") +
         "  --quiet-memory       do not print the memory and traffic ledger\n"
         "  --help               print this text and exit\n";
}

static bool parseInt(const std::string &text, int64_t min, int64_t &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || value < min)
    return false;
  out = value;
  return true;
}

static bool parseSeed(const std::string &text, uint64_t &out) {
  if (text.empty() || text[0] == '-')
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = value;
  return true;
}

/// A finite float >= 0 (--lr, --clip-grad-norm).
static bool parseNonNegative(const std::string &text, float &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  float value = std::strtof(text.c_str(), &end);
  if (errno || *end || !std::isfinite(value) || value < 0)
    return false;
  out = value;
  return true;
}

static bool isPathFlag(const std::string &flag) {
  return flag == "--data" || flag == "--val-data" || flag == "--init-from" ||
         flag == "--save" ||
         flag == "--trace" || flag == "--checkpoint-dir" ||
         flag == "--log-json" || flag == "--export-hf" ||
         flag == "--calibrate";
}

static bool isValueFlag(const std::string &flag) {
  return flag == "--steps" || flag == "--lr" || flag == "--seed" ||
         flag == "--clip-grad-norm" || flag == "--device" ||
         flag == "--collective-timeout" || flag == "--checkpoint-every" ||
         flag == "--schedule-tolerance" ||
         flag == "--keep" || flag == "--lr-schedule" ||
         flag == "--warmup-steps" || flag == "--min-lr" ||
         flag == "--log-every" || flag == "--eval-every" ||
         flag == "--eval-steps" || flag == "--adam-beta1" ||
         flag == "--adam-beta2" || flag == "--adam-eps" ||
         flag == "--weight-decay" || isPathFlag(flag);
}

static bool parseDevice(const std::string &text, std::string &out) {
  if (!isDeviceName(text))
    return false;
  out = text;
  return true;
}

/// Applies one flag that takes a value; false with `error` set otherwise.
static bool applyValue(const std::string &flag, const std::string &value,
                       Options &options, std::string &error) {
  if (isPathFlag(flag)) {
    if (value.empty()) {
      error = flag + " expects a file name";
      return false;
    }
    (flag == "--data"             ? options.data
     : flag == "--val-data"       ? options.valData
     : flag == "--init-from"      ? options.initFrom
     : flag == "--save"           ? options.save
     : flag == "--checkpoint-dir" ? options.checkpointDir
     : flag == "--log-json"       ? options.logJson
     : flag == "--export-hf"      ? options.exportHf
     : flag == "--calibrate"      ? options.calibrate
                                  : options.trace) = value;
    return true;
  }
  bool ok;
  std::string expected;
  if (flag == "--clip-grad-norm") {
    ok = parseNonNegative(value, options.clipGradNorm);
    expected = "a non-negative number";
  } else if (flag == "--checkpoint-every" || flag == "--keep") {
    ok = parseInt(value, 1,
                  flag == "--keep" ? options.keep : options.checkpointEvery);
    expected = "a positive integer";
  } else if (flag == "--warmup-steps") {
    ok = parseInt(value, 0, options.warmupSteps);
    expected = "a non-negative integer";
  } else if (flag == "--log-every" || flag == "--eval-every" ||
             flag == "--eval-steps") {
    ok = parseInt(value, 1,
                  flag == "--log-every"    ? options.logEvery
                  : flag == "--eval-every" ? options.evalEvery
                                           : options.evalSteps);
    expected = "a positive integer";
  } else if (flag == "--adam-beta1" || flag == "--adam-beta2") {
    float &beta = flag == "--adam-beta1" ? options.beta1 : options.beta2;
    ok = parseNonNegative(value, beta) && beta < 1.0f;
    expected = "a number in [0, 1)";
  } else if (flag == "--adam-eps" || flag == "--weight-decay") {
    ok = parseNonNegative(value,
                          flag == "--adam-eps" ? options.eps
                                               : options.weightDecay);
    expected = "a non-negative number";
  } else if (flag == "--min-lr") {
    ok = parseNonNegative(value, options.minLr);
    expected = "a non-negative number";
  } else if (flag == "--lr-schedule") {
    ok = value == "constant" || value == "cosine" || value == "linear";
    options.lrSchedule = value == "cosine"   ? Options::Schedule::Cosine
                         : value == "linear" ? Options::Schedule::Linear
                                             : Options::Schedule::Constant;
    expected = "constant, cosine or linear";
  } else if (flag == "--steps") {
    ok = parseInt(value, 0, options.steps);
    expected = "a non-negative integer";
  } else if (flag == "--device") {
    ok = parseDevice(value, options.device);
    std::vector<std::string> names = {"auto", "cpu", "cuda"};
    for (const std::string &name : otherBackendNames())
      names.push_back(name);
    expected = listOf(names, " or ");
  } else if (flag == "--lr") {
    ok = parseNonNegative(value, options.lr);
    expected = "a non-negative number";
  } else if (flag == "--schedule-tolerance") {
    float milliseconds = 0;
    ok = parseNonNegative(value, milliseconds);
    options.scheduleToleranceMs = milliseconds;
    expected = "a non-negative number of milliseconds";
  } else if (flag == "--collective-timeout") {
    float seconds = 0;
    ok = parseNonNegative(value, seconds) && seconds > 0;
    options.collectiveTimeout = seconds;
    expected = "a positive number of seconds";
  } else {
    ok = parseSeed(value, options.seed);
    expected = "a non-negative integer";
  }
  if (!ok)
    error = flag + " expects " + expected + ", got '" + value + "'";
  return ok;
}

float learningRate(const Options &options, int64_t step) {
  double lr = options.lr, minLr = options.minLr;
  int64_t warmup = options.warmupSteps;
  if (step < warmup)
    return (float)(lr * (step + 1) / warmup);
  if (options.lrSchedule == Options::Schedule::Constant)
    return options.lr;
  // Decay over the steps after warm-up: from lr right after it to minLr at
  // the last step.
  int64_t span = std::max<int64_t>(1, options.steps - 1 - warmup);
  double progress = std::min(1.0, (double)(step - warmup) / span);
  double decayed =
      options.lrSchedule == Options::Schedule::Cosine
          ? minLr + 0.5 * (lr - minLr) * (1.0 + std::cos(M_PI * progress))
          : lr - (lr - minLr) * progress;
  return (float)decayed;
}

bool parseFlags(int argc, char **argv, Options &options, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    bool hasValue = eq != std::string::npos;
    if (flag == "--help" || flag == "-h" || flag == "--quiet-memory" ||
        flag == "--log-every-step" ||
        flag == "--dump-batch" || flag == "--check-collectives" ||
        flag == "--check-finite" || flag == "--check-schedule") {
      if (hasValue) {
        error = flag + " takes no value";
        return false;
      }
      (flag == "--quiet-memory"         ? options.quietMemory
       : flag == "--dump-batch"         ? options.dumpBatch
       : flag == "--check-collectives" ? options.checkCollectives
       : flag == "--check-finite"       ? options.checkFinite
       : flag == "--check-schedule"     ? options.checkSchedule
       : flag == "--log-every-step"     ? options.logEveryStep
                                        : options.help) = true;
      continue;
    }
    if (flag == "--resume") {
      // Its value only with '=': a bare --resume is the newest checkpoint.
      options.resume = hasValue ? arg.substr(eq + 1) : "latest";
      if (options.resume.empty()) {
        error = "--resume= expects a checkpoint directory or 'latest'";
        return false;
      }
      continue;
    }
    if (!isValueFlag(flag)) {
      error = (arg[0] == '-' ? "unknown flag '" + flag
                             : "unexpected argument '" + arg) +
              "' (see --help)";
      return false;
    }
    std::string value;
    if (hasValue) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      error = flag + " needs a value";
      return false;
    }
    if (!applyValue(flag, value, options, error))
      return false;
  }
  if (options.checkpointDir.empty() &&
      (options.checkpointEvery || options.keep)) {
    error = std::string(options.keep ? "--keep" : "--checkpoint-every") +
            " needs --checkpoint-dir=DIR";
    return false;
  }
  if (options.resume == "latest" && options.checkpointDir.empty()) {
    error = "--resume without a directory resumes from --checkpoint-dir's "
            "newest checkpoint; give --checkpoint-dir=DIR or --resume=DIR";
    return false;
  }
  if (options.minLr > options.lr) {
    error = "--min-lr must not exceed --lr";
    return false;
  }
  if (!options.resume.empty() && !options.initFrom.empty()) {
    error = "--resume and --init-from both set the parameters; give one";
    return false;
  }
  return true;
}

} // namespace zrt

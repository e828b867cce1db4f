//===- flags.cpp - Command-line flags of a compiled program ---------------===//
//
// Every flag is one row of the table below (its name, its value's name, its
// help, and how its value is read and checked); parsing, --help and the
// README's table of flags (--help=markdown, test/docs) all come from it.
// Defaults are written once, in Options (flags.h); the table prints them.
//
//===----------------------------------------------------------------------===//

#include "driver/flags.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace zrt {

namespace {

/// `names` as "a", "a<last>b", "a, b<last>c", ...
std::string listOf(const std::vector<std::string> &names, const char *last) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return list;
}

bool parseInt(const std::string &text, int64_t min, int64_t &out) {
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

bool parseSeed(const std::string &text, uint64_t &out) {
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

/// A finite number >= 0.
bool parseNonNegative(const std::string &text, double &out) {
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

std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// One flag. `apply` reads the value into the options and returns "", or
/// what the flag expects ("a positive integer"); a switch's gets "".
struct Flag {
  std::string name;  // "--steps"
  std::string value; // "N"; empty: a switch
  std::string help;  // one paragraph, wrapped by usage()
  std::function<std::string(const std::string &, Options &)> apply;
  /// The default as --help prints it ("" for none), from a fresh Options.
  std::string defaultText;
  bool hidden = false;        // not in --help (for tests)
  bool optionalValue = false; // --resume: a value only after '='
  bool isPath = false;        // a file or directory: never empty
};

Flag toggle(const char *name, bool Options::*field, const char *help) {
  return {name, "", help,
          [field](const std::string &, Options &o) {
            o.*field = true;
            return std::string();
          },
          ""};
}

Flag count(const char *name, const char *value, int64_t Options::*field,
           int64_t min, const char *help) {
  Options defaults;
  return {name, value, help,
          [field, min](const std::string &text, Options &o) {
            return parseInt(text, min, o.*field)
                       ? std::string()
                       : std::string(min > 0 ? "a positive integer"
                                             : "a non-negative integer");
          },
          defaults.*field > 0 || min == 0 ? std::to_string(defaults.*field)
                                          : ""};
}

/// A float flag: >= 0, and below 1 with `belowOne` (a beta).
Flag number(const char *name, const char *value, float Options::*field,
            bool belowOne, const char *help) {
  Options defaults;
  return {name, value, help,
          [field, belowOne](const std::string &text, Options &o) {
            double parsed = 0;
            bool ok =
                parseNonNegative(text, parsed) && (!belowOne || parsed < 1.0);
            if (ok)
              o.*field = (float)parsed;
            return ok ? std::string()
                      : std::string(belowOne ? "a number in [0, 1)"
                                             : "a non-negative number");
          },
          formatNumber(defaults.*field)};
}

Flag path(const char *name, const char *value, std::string Options::*field,
          const char *help) {
  Flag flag = {name, value, help,
               [field](const std::string &text, Options &o) {
                 o.*field = text;
                 return std::string(); // an empty value is refused before
               },
               ""};
  flag.isPath = true;
  return flag;
}

const char *scheduleName(Options::Schedule schedule) {
  switch (schedule) {
  case Options::Schedule::Cosine:
    return "cosine";
  case Options::Schedule::Linear:
    return "linear";
  case Options::Schedule::Constant:
    break;
  }
  return "constant";
}

std::vector<std::string> deviceNames() {
  std::vector<std::string> names = {"auto", "cpu", "cuda"};
  for (const std::string &name : otherBackendNames())
    names.push_back(name);
  return names;
}

/// The table, in --help's order.
const std::vector<Flag> &flags() {
  static const std::vector<Flag> table = [] {
    Options defaults;
    std::vector<Flag> t;
    t.push_back(count("--steps", "N", &Options::steps, 0,
                      "training steps to run; 0 only allocates and "
                      "initialises, then prints the memory ledger"));
    t.push_back(
        number("--lr", "F", &Options::lr, false, "AdamW learning rate"));
    t.push_back(number("--adam-beta1", "F", &Options::beta1, true,
                       "AdamW beta1, in [0, 1)"));
    t.push_back(number("--adam-beta2", "F", &Options::beta2, true,
                       "AdamW beta2, in [0, 1)"));
    t.push_back(
        number("--adam-eps", "F", &Options::eps, false, "AdamW epsilon"));
    t.push_back(number("--weight-decay", "F", &Options::weightDecay, false,
                       "decoupled weight decay"));
    t.push_back({"--seed", "N", "seed for parameter init and data",
                 [](const std::string &text, Options &o) {
                   return parseSeed(text, o.seed)
                              ? std::string()
                              : std::string("a non-negative integer");
                 },
                 std::to_string(defaults.seed)});
    t.push_back(number("--clip-grad-norm", "F", &Options::clipGradNorm, false,
                       "clip the global norm of the gradients (correct over "
                       "sharded ones) to F; 0: off"));
    t.push_back(path("--data", "PATH", &Options::data,
                     "token files (llm.c's uint16 or uint32 format) of a "
                     "language model, required to train one: a file, a "
                     "directory of *.bin or a glob ('corpus_train_*.bin'), "
                     "read in name order as one stream"));
    t.push_back(path("--init-from", "PATH", &Options::initFrom,
                     "load parameters from a .safetensors file, a "
                     "model.safetensors.index.json (sharded), or a directory "
                     "holding either (F32/BF16/F16)"));
    t.push_back(path("--save", "FILE", &Options::save,
                     "write parameters to a .safetensors file after the last "
                     "step"));
    t.push_back(path("--export-hf", "DIR", &Options::exportHf,
                     "after the last step, write model.safetensors and "
                     "config.json there: a Hugging Face model that "
                     "transformers' from_pretrained loads"));
    t.push_back(path("--checkpoint-dir", "DIR", &Options::checkpointDir,
                     "write the whole training state (parameters, masters, "
                     "Adam moments, step, data position) there, each rank its "
                     "own shard, after the last step; the directory is this "
                     "job's while it runs, and partial checkpoints a crashed "
                     "job left are removed at start"));
    t.push_back(count("--checkpoint-every", "K", &Options::checkpointEvery, 1,
                      "also after every K steps"));
    t.push_back(count("--keep", "N", &Options::keep, 1,
                      "keep only the newest N complete checkpoints"));
    Flag resume = {
        "--resume", "DIR",
        "continue from a checkpoint (DIR, or DIR's newest; bare or =latest: "
        "--checkpoint-dir's newest), at any stage and world size, from the "
        "token it stopped at; --steps counts from the start of the run",
        [](const std::string &text, Options &o) {
          o.resume = text;
          return std::string();
        },
        ""};
    resume.optionalValue = true;
    t.push_back(resume);
    t.push_back({"--lr-schedule", "S",
                 "constant, cosine or linear decay of the learning rate from "
                 "--lr to --min-lr at the last step, after --warmup-steps",
                 [](const std::string &text, Options &o) {
                   for (auto s :
                        {Options::Schedule::Constant, Options::Schedule::Cosine,
                         Options::Schedule::Linear})
                     if (text == scheduleName(s)) {
                       o.lrSchedule = s;
                       return std::string();
                     }
                   return std::string("constant, cosine or linear");
                 },
                 scheduleName(defaults.lrSchedule)});
    t.push_back(count("--warmup-steps", "N", &Options::warmupSteps, 0,
                      "linear warm-up from --lr/N over N steps"));
    t.push_back(number("--min-lr", "F", &Options::minLr, false,
                       "the rate the decay ends at"));
    t.push_back(count("--log-every", "N", &Options::logEvery, 1,
                      "a progress line (loss, gradient norm, learning rate, "
                      "ms/step, tokens/s, peak memory) every N steps, after "
                      "that step's 'step k loss x' line (without it: every "
                      "step's line, no progress lines)"));
    t.push_back(toggle("--log-every-step", &Options::logEveryStep,
                       "with --log-every: every step's line too"));
    t.push_back(path("--log-json", "FILE", &Options::logJson,
                     "the same per step, one JSON object a line"));
    t.push_back(count("--eval-every", "K", &Options::evalEvery, 1,
                      "every K steps and after the last, a validation loss: "
                      "forward only, no update, the mean over --eval-steps "
                      "batches"));
    t.push_back(count("--eval-steps", "M", &Options::evalSteps, 1,
                      "validation batches, the same ones each time: the "
                      "first M of --val-data (language models), or synthetic "
                      "data of another seed (classifiers)"));
    t.push_back(path("--val-data", "PATH", &Options::valData,
                     "token files of the validation text (as --data)"));
    t.push_back(path("--trace", "FILE", &Options::trace,
                     "write a Chrome/Perfetto trace of every rank's kernels, "
                     "collectives and data (ui.perfetto.dev) and print how "
                     "much collective time was exposed"));
    t.push_back(toggle("--check-finite", &Options::checkFinite,
                       "when the gradient norm is not finite, name the first "
                       "parameter whose gradient is not (debugging: a "
                       "synchronisation a parameter)"));
    t.push_back(toggle("--check-collectives", &Options::checkCollectives,
                       "before each collective, check that every rank runs "
                       "the same one (debugging; CPU)"));
    t.push_back(toggle("--check-schedule", &Options::checkSchedule,
                       "measure when each collective began and how long its "
                       "wait blocked, and at exit name every one later than "
                       "the compiler's plan (zero-opt --report lists it; "
                       "CPU)"));
    t.push_back(path("--calibrate", "FILE", &Options::calibrate,
                     "measure GEMM FLOP/s, memory and link bandwidth and "
                     "latency on these ranks, write them for zero-opt "
                     "--calibration=FILE, exit"));
    t.push_back(
        {"--schedule-tolerance", "MS", "how much later than planned is late",
         [](const std::string &text, Options &o) {
           return parseNonNegative(text, o.scheduleToleranceMs)
                      ? std::string()
                      : std::string("a non-negative number of milliseconds");
         },
         formatNumber(defaults.scheduleToleranceMs)});
    t.push_back({"--collective-timeout", "S",
                 "seconds a rank waits for a collective before it stops the "
                 "job, naming it (default 300, or ZRT_COLLECTIVE_TIMEOUT_S)",
                 [](const std::string &text, Options &o) {
                   double seconds = 0;
                   if (!parseNonNegative(text, seconds) || seconds <= 0)
                     return std::string("a positive number of seconds");
                   o.collectiveTimeout = seconds;
                   return std::string();
                 },
                 ""});
    t.push_back({"--device", "D",
                 "where the kernels run: auto, cpu or cuda (one GPU per "
                 "rank); auto is cuda when libzrt has the CUDA backend and "
                 "every rank has a GPU of its own",
                 [](const std::string &text, Options &o) {
                   if (!isDeviceName(text))
                     return listOf(deviceNames(), " or ");
                   o.device = text;
                   return std::string();
                 },
                 defaults.device});
    t.push_back(toggle("--quiet-memory", &Options::quietMemory,
                       "do not print the memory and traffic ledger"));
    t.push_back(toggle("--help", &Options::help,
                       "print this text and exit (--help=markdown: the "
                       "README's table of these flags)"));
    Flag dump = toggle("--dump-batch", &Options::dumpBatch,
                       "print the batches of the first --steps steps");
    dump.hidden = true;
    t.push_back(dump);
    return t;
  }();
  return table;
}

const Flag *findFlag(const std::string &name) {
  for (const Flag &flag : flags())
    if (flag.name == name)
      return &flag;
  return nullptr;
}

/// "--steps=N", "--resume[=DIR]", "--quiet-memory".
std::string spelling(const Flag &flag) {
  if (flag.value.empty())
    return flag.name;
  return flag.name +
         (flag.optionalValue ? "[=" + flag.value + "]" : "=" + flag.value);
}

std::string helpWithDefault(const Flag &flag) {
  return flag.defaultText.empty()
             ? flag.help
             : flag.help + " (default " + flag.defaultText + ")";
}

/// `text` in lines of at most `width` characters, each after `indent`.
std::string wrap(const std::string &text, size_t width,
                 const std::string &indent) {
  std::string out, line;
  size_t at = 0;
  while (at < text.size()) {
    size_t space = text.find(' ', at);
    std::string word = text.substr(
        at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

} // namespace

std::string usage(const char *program) {
  const size_t column = 23, width = 46;
  std::string text =
      std::string("usage: ") + program +
      " [flags]\n"
      "Trains the model zero-opt compiled into this program: a classifier\n"
      "on synthetic data, or a language model on token files (--data).\n"
      "Start it with mpirun -np <world size it was compiled for>.\n"
      "\n"
      "flags:\n";
  for (const Flag &flag : flags()) {
    if (flag.hidden)
      continue;
    std::string head = "  " + spelling(flag);
    text += head.size() + 1 > column
                ? head + "\n" + std::string(column, ' ')
                : head + std::string(column - head.size(), ' ');
    text += wrap(helpWithDefault(flag), width, std::string(column, ' '));
    // On a line of its own, so that it reads (and greps) whole.
    if (flag.name == "--device" && !otherBackendNames().empty())
      text += std::string(column, ' ') + "(this program also has " +
              listOf(otherBackendNames(), ", ") + ")\n";
  }
  text += "SIGINT/SIGTERM to any rank: every rank finishes its step, writes a\n"
          "checkpoint (with --checkpoint-dir) and exits.\n";
  return text;
}

std::string flagsMarkdown() {
  std::string text = "| flag | meaning |\n|---|---|\n";
  for (const Flag &flag : flags())
    if (!flag.hidden)
      text += "| `" + spelling(flag) + "` | " + helpWithDefault(flag) + " |\n";
  return text;
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

/// Checks between flags, after all are read.
static std::string checkTogether(const Options &options) {
  if (options.checkpointDir.empty() &&
      (options.checkpointEvery || options.keep))
    return std::string(options.keep ? "--keep" : "--checkpoint-every") +
           " needs --checkpoint-dir=DIR";
  if (options.resume == "latest" && options.checkpointDir.empty())
    return "--resume without a directory resumes from --checkpoint-dir's "
           "newest checkpoint; give --checkpoint-dir=DIR or --resume=DIR";
  if (options.minLr > options.lr)
    return "--min-lr must not exceed --lr";
  if (!options.resume.empty() && !options.initFrom.empty())
    return "--resume and --init-from both set the parameters; give one";
  return "";
}

bool parseFlags(int argc, char **argv, Options &options, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    bool hasValue = eq != std::string::npos;
    if (name == "-h")
      name = "--help";
    if (name == "--help" && hasValue && arg.substr(eq + 1) == "markdown") {
      options.help = true;
      options.helpMarkdown = true;
      continue;
    }
    const Flag *flag = findFlag(name);
    if (!flag) {
      error = (arg[0] == '-' ? "unknown flag '" + name
                             : "unexpected argument '" + arg) +
              "' (see --help)";
      return false;
    }
    std::string value;
    if (flag->value.empty()) {
      if (hasValue) {
        error = name + " takes no value";
        return false;
      }
    } else if (flag->optionalValue) {
      // Its value only with '=': a bare --resume is the newest checkpoint.
      value = hasValue ? arg.substr(eq + 1) : "latest";
      if (value.empty()) {
        error = name + "= expects a checkpoint directory or 'latest'";
        return false;
      }
    } else if (hasValue) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      error = name + " needs a value";
      return false;
    }
    if (flag->isPath && value.empty()) {
      error = name + " expects a file name";
      return false;
    }
    std::string expected = flag->apply(value, options);
    if (!expected.empty()) {
      error = name + " expects " + expected + ", got '" + value + "'";
      return false;
    }
  }
  error = checkTogether(options);
  return error.empty();
}

} // namespace zrt

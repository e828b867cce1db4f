//===- train_state_index.cpp - The index of a training-state checkpoint ---===//

#include "driver/train_state_index.h"
#include "driver/json.h"

namespace zrt {

static std::string str(int64_t value) { return std::to_string(value); }

std::string parseTrainStateIndex(const std::string &text,
                                 const std::string &where,
                                 TrainStateIndex &index) {
  JsonValue root;
  std::string error = parseJson(text, root);
  if (!error.empty())
    return "'" + where + "' is not valid JSON: " + error;
  auto bad = [&](const std::string &what) {
    return "'" + where + "': " + what;
  };
  const JsonValue *format = root.find("format");
  if (root.kind != JsonValue::Object || !format ||
      format->text != kTrainStateFormat)
    return bad("not a zero-opt training-state index (no \"format\": \"" +
               std::string(kTrainStateFormat) + "\")");
  int64_t version = 0, step = 0, seed = 0;
  const JsonValue *v = root.find("version");
  if (!v || !v->asCount(version) || version != kTrainStateFormatVersion)
    return bad("unsupported version (this runtime reads version " +
               str(kTrainStateFormatVersion) + ")");
  const JsonValue *model = root.find("model");
  const JsonValue *stage = root.find("stage");
  const JsonValue *world = root.find("world_size");
  const JsonValue *stepValue = root.find("step");
  const JsonValue *seedValue = root.find("seed");
  const JsonValue *tensors = root.find("tensors");
  const JsonValue *files = root.find("files");
  if (!model || model->kind != JsonValue::String || !stage ||
      !stage->asCount(index.stage) || !world ||
      !world->asCount(index.worldSize) || index.worldSize < 1 || !stepValue ||
      !stepValue->asCount(step) || !seedValue || !seedValue->asCount(seed) ||
      !tensors || tensors->kind != JsonValue::Object || !files ||
      files->kind != JsonValue::Object)
    return bad("missing or malformed model, stage, world_size, step, seed, "
               "tensors or files");
  // Absent from checkpoints written before hybrid sharding: sharded over
  // every rank. Else it divides the world size.
  index.shardGroupSize = index.worldSize;
  if (const JsonValue *groups = root.find("shard_group_size"))
    if (!groups->asCount(index.shardGroupSize) || index.shardGroupSize < 1 ||
        index.shardGroupSize > index.worldSize ||
        index.worldSize % index.shardGroupSize != 0)
      return bad("malformed shard_group_size (a divisor of the world size " +
                 str(index.worldSize) + ")");
  index.model = model->text;
  index.position.step = step;
  index.position.seed = (uint64_t)seed;
  // Absent from a classifier's checkpoints and from those written before
  // the data position was recorded.
  if (const JsonValue *data = root.find("data")) {
    const JsonValue *tokens = data->find("tokens");
    const JsonValue *next = data->find("next_token");
    if (!tokens || !tokens->asCount(index.position.dataTokens) || !next ||
        !next->asCount(index.position.dataNextToken) ||
        index.position.dataNextToken >= index.position.dataTokens)
      return bad("malformed data position (\"data\": {\"tokens\": N, "
                 "\"next_token\": K}, K < N)");
  }
  for (const auto &[key, value] : tensors->members) {
    IndexTensor tensor;
    const JsonValue *dtype = value.find("dtype");
    const JsonValue *shape = value.find("shape");
    const JsonValue *sharded = value.find("sharded");
    if (!dtype || !shape || shape->kind != JsonValue::Array || !sharded ||
        sharded->kind != JsonValue::Bool)
      return bad("tensor '" + key + "' lacks dtype, shape or sharded");
    tensor.dtype = dtype->text;
    for (const JsonValue &dim : shape->items) {
      int64_t d = 0;
      if (!dim.asCount(d))
        return bad("tensor '" + key + "' has a malformed shape");
      tensor.shape.push_back(d);
    }
    tensor.sharded = sharded->boolean;
    index.tensors[key] = tensor;
  }
  for (const auto &[name, value] : files->members) {
    TrainStateIndex::File file;
    const JsonValue *bytes = value.find("bytes");
    const JsonValue *sha = value.find("sha256");
    const JsonValue *digests = value.find("tensors");
    if (!bytes || !bytes->asCount(file.bytes) || !sha ||
        sha->kind != JsonValue::String || !digests ||
        digests->kind != JsonValue::Object ||
        name.find('/') != std::string::npos)
      return bad("file entry '" + name + "' is malformed");
    file.sha256 = sha->text;
    for (const auto &[tensor, digest] : digests->members)
      file.tensorSha256[tensor] = digest.text;
    index.files[name] = file;
  }
  // Before the loop below: a forged world size must not make it spin.
  if (index.worldSize > (int64_t)index.files.size())
    return bad("names " + str(index.files.size()) +
               " files for a world "
               "size of " +
               str(index.worldSize));
  for (int r = 0; r < index.worldSize; ++r)
    if (!index.files.count(rankFileName(r)))
      return bad("names no file for rank " + str(r) + " of " +
                 str(index.worldSize));
  return "";
}

} // namespace zrt

//===- weight_files.cpp - The safetensors files of --init-from ------------===//

#include "driver/weight_files.h"
#include "driver/files.h"
#include "driver/json.h"

#include <sys/stat.h>

#include <algorithm>

namespace zrt {

WeightFiles::Located WeightFiles::find(const std::string &name) const {
  auto it = byName.find(name);
  return it == byName.end() ? Located() : it->second;
}

static bool isDirectory(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

static std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// Reads a sharded-checkpoint index: the tensor -> file map, each file
/// named relative to the index and never outside its directory.
static std::string readIndex(const std::string &path,
                             std::map<std::string, std::string> &weightMap) {
  std::string text;
  std::string error = readFile(path, text);
  if (!error.empty())
    return error;
  JsonValue root;
  error = parseJson(text, root);
  if (!error.empty())
    return "'" + path + "' is not a valid safetensors index: " + error;
  const JsonValue *map =
      root.kind == JsonValue::Object ? root.find("weight_map") : nullptr;
  if (!map || map->kind != JsonValue::Object)
    return "'" + path + "' is not a safetensors index: it has no " +
           "\"weight_map\" object";
  for (const auto &entry : map->members) {
    const std::string &file = entry.second.text;
    if (entry.second.kind != JsonValue::String || file.empty() ||
        file[0] == '/' || file.find("..") != std::string::npos)
      return "'" + path + "': weight_map[\"" + entry.first +
             "\"] must name a file beside the index";
    weightMap[entry.first] = directoryOf(path) + "/" + file;
  }
  if (weightMap.empty())
    return "'" + path + "': its weight_map is empty";
  return "";
}

std::string openWeightFiles(const std::string &path, WeightFiles &out) {
  out = WeightFiles();
  out.source = path;
  std::string indexPath, singleFile;
  if (isDirectory(path)) {
    if (pathExists(path + "/model.safetensors.index.json"))
      indexPath = path + "/model.safetensors.index.json";
    else if (pathExists(path + "/model.safetensors"))
      singleFile = path + "/model.safetensors";
    else
      return "'" + path + "' is a directory without model.safetensors or " +
             "model.safetensors.index.json";
  } else if (endsWith(path, ".json")) {
    indexPath = path;
  } else {
    singleFile = path;
  }

  std::map<std::string, std::string> weightMap; // tensor -> file
  std::vector<std::string> paths;
  if (!indexPath.empty()) {
    std::string error = readIndex(indexPath, weightMap);
    if (!error.empty())
      return error;
    for (const auto &entry : weightMap)
      if (std::find(paths.begin(), paths.end(), entry.second) == paths.end())
        paths.push_back(entry.second);
  } else {
    paths.push_back(singleFile);
  }

  out.files.resize(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string error = readSafeTensorsHeader(paths[i], out.files[i]);
    if (!error.empty())
      return error;
  }
  // out.files no longer grows: pointers into it stay valid.
  for (const SafeTensorsFile &file : out.files) {
    for (const SafeTensor &tensor : file.tensors) {
      if (!weightMap.empty()) {
        auto assigned = weightMap.find(tensor.name);
        // The index decides: a tensor it assigns elsewhere, or not at all,
        // is not read from this file.
        if (assigned == weightMap.end() || assigned->second != file.path)
          continue;
      }
      out.byName[tensor.name] = {&file, &tensor};
    }
  }
  for (const auto &entry : weightMap)
    if (!out.byName.count(entry.first))
      return "'" + indexPath + "' maps tensor '" + entry.first + "' to '" +
             entry.second + "', which has no such tensor";
  return "";
}

} // namespace zrt

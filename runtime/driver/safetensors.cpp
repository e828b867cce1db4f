//===- safetensors.cpp - The safetensors file format ----------------------===//

#include "driver/safetensors.h"
#include "driver/json.h"
#include "driver/tokens.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zrt {

int64_t SafeTensor::numel() const {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

const SafeTensor *SafeTensorsFile::find(const std::string &name) const {
  for (const SafeTensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

int64_t safeDtypeBytes(const std::string &dtype) {
  static const struct {
    const char *name;
    int64_t bytes;
  } known[] = {{"F64", 8},  {"F32", 4},     {"F16", 2},    {"BF16", 2},
               {"I64", 8},  {"I32", 4},     {"I16", 2},    {"I8", 1},
               {"U64", 8},  {"U32", 4},     {"U16", 2},    {"U8", 1},
               {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  for (const auto &entry : known)
    if (dtype == entry.name)
      return entry.bytes;
  return 0;
}

// Size limit of the reference implementation: a bigger header is corrupt.
static constexpr int64_t kMaxHeaderBytes = 100 << 20;

static std::string readTensor(const std::string &name, const JsonValue &value,
                              int64_t dataBytes, SafeTensor &out) {
  std::string what = "tensor '" + name + "'";
  if (value.kind != JsonValue::Object)
    return what + " is not described by a JSON object";
  for (const auto &member : value.members)
    if (member.first != "dtype" && member.first != "shape" &&
        member.first != "data_offsets")
      return what + " has an unknown field \"" + member.first + "\"";
  const JsonValue *dtype = value.find("dtype"), *shape = value.find("shape"),
                  *offsets = value.find("data_offsets");
  if (!dtype || dtype->kind != JsonValue::String)
    return what + " has no \"dtype\" string";
  if (!shape || shape->kind != JsonValue::Array)
    return what + " has no \"shape\" array";
  if (!offsets || offsets->kind != JsonValue::Array ||
      offsets->items.size() != 2 || !offsets->items[0].asCount(out.begin) ||
      !offsets->items[1].asCount(out.end))
    return what + " has no \"data_offsets\" pair of non-negative integers";
  out.name = name;
  out.dtype = dtype->text;
  int64_t numel = 1;
  for (const JsonValue &dim : shape->items) {
    int64_t size;
    if (!dim.asCount(size) || __builtin_mul_overflow(numel, size, &numel))
      return what + " has a shape that is not a list of non-negative integers";
    out.shape.push_back(size);
  }
  if (out.begin > out.end || out.end > dataBytes)
    return what + " has data_offsets [" + std::to_string(out.begin) + ", " +
           std::to_string(out.end) + "] beyond the " +
           std::to_string(dataBytes) + " bytes of data in the file";
  int64_t bytes = safeDtypeBytes(out.dtype);
  if (bytes && (__builtin_mul_overflow(numel, bytes, &bytes) ||
                bytes != out.end - out.begin))
    return what + " has " + std::to_string(out.end - out.begin) +
           " bytes of data but its dtype and shape need " +
           std::to_string(numel) + " x " +
           std::to_string(safeDtypeBytes(out.dtype));
  return "";
}

static std::string readHeaderText(const std::string &path, int64_t &fileSize,
                                  std::string &json) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd < 0 || fstat(fd, &info) != 0) {
    std::string error = std::strerror(errno);
    if (fd >= 0)
      close(fd);
    return "cannot open '" + path + "': " + error;
  }
  fileSize = info.st_size;
  unsigned char prefix[8];
  std::string error;
  if (S_ISDIR(info.st_mode) || fileSize < 8 || !readAt(fd, 0, prefix, 8)) {
    error = "'" + path + "' is not a safetensors file: shorter than the " +
            "8-byte header length";
  } else {
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i)
      length = length << 8 | prefix[i];
    if (length > (uint64_t)kMaxHeaderBytes || (int64_t)length > fileSize - 8) {
      error = "'" + path + "' is not a safetensors file: its header length " +
              std::to_string(length) + " exceeds the " +
              std::to_string(fileSize - 8) + " bytes after it";
    } else {
      json.resize(length);
      if (!readAt(fd, 8, json.data(), length))
        error = "cannot read the header of '" + path + "'";
    }
  }
  close(fd);
  return error;
}

std::string readSafeTensorsHeader(const std::string &path,
                                  SafeTensorsFile &out) {
  out = SafeTensorsFile();
  out.path = path;
  int64_t fileSize = 0;
  std::string json;
  std::string error = readHeaderText(path, fileSize, json);
  if (!error.empty())
    return error;
  out.dataStart = 8 + (int64_t)json.size();
  JsonValue root;
  error = parseJson(json, root);
  if (!error.empty())
    return "'" + path + "' has a bad safetensors header: " + error;
  if (root.kind != JsonValue::Object)
    return "'" + path + "' has a bad safetensors header: not a JSON object";
  for (const auto &member : root.members) {
    if (member.first == "__metadata__") {
      bool strings = member.second.kind == JsonValue::Object;
      for (const auto &entry : member.second.members)
        strings &= entry.second.kind == JsonValue::String;
      if (!strings)
        return "'" + path + "' has a bad safetensors header: __metadata__ " +
               "is not an object of strings";
      continue;
    }
    out.tensors.emplace_back();
    error = readTensor(member.first, member.second, fileSize - out.dataStart,
                       out.tensors.back());
    if (!error.empty())
      return "'" + path + "': " + error;
  }
  return "";
}

std::string safeTensorsHeader(const std::vector<SafeTensor> &tensors) {
  std::string json = "{\"__metadata__\":{\"format\":\"pt\"}";
  for (const SafeTensor &tensor : tensors) {
    json += "," + jsonQuote(tensor.name) + ":{\"dtype\":\"" + tensor.dtype +
            "\",\"shape\":[";
    for (size_t d = 0; d < tensor.shape.size(); ++d)
      json += (d ? "," : "") + std::to_string(tensor.shape[d]);
    json += "],\"data_offsets\":[" + std::to_string(tensor.begin) + "," +
            std::to_string(tensor.end) + "]}";
  }
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i)
    prefix[i] = (char)((uint64_t)json.size() >> (8 * i) & 0xff);
  return prefix + json;
}

} // namespace zrt

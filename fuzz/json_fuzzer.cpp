//===- json_fuzzer.cpp - libzrt's strict JSON reader on any bytes ---------===//
//
// The reader of safetensors headers and checkpoint indexes
// (runtime/driver/json.cpp): any input gives a value or an error message,
// never a crash, a hang or a read out of bounds; what it accepts it writes
// back as a string it accepts again.
//
//===----------------------------------------------------------------------===//
#include "driver/json.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  zrt::JsonValue value;
  std::string error = zrt::parseJson(text, value);
  if (error.empty() && value.kind == zrt::JsonValue::String) {
    zrt::JsonValue again;
    if (!zrt::parseJson(zrt::jsonQuote(value.text), again).empty() ||
        again.text != value.text)
      std::abort(); // jsonQuote wrote what parseJson refuses or changes
  }
  return 0;
}

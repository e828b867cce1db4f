//===- file_checks.h - Checks of token files, JSON, safetensors -*- C++ -*-===//
#ifndef ZRT_TESTS_FILE_CHECKS_H
#define ZRT_TESTS_FILE_CHECKS_H

#include "tests/checker.h"

namespace zrt {

/// Token file rows equal at world sizes 1-3; targets, positions; bad ids.
void checkTokenFiles(Checker &check);
/// uint32 ids, shards read as one stream (a directory, a glob), a resumed
/// origin, the sidecar, and each refusal's message.
void checkTokenStreams(Checker &check);
/// The strict JSON reader: what it accepts and what it refuses.
void checkJson(Checker &check);
void checkSha256(Checker &check);
/// safetensors headers written and read back; save then load restores
/// every parameter and master bit for bit.
void checkSafeTensors(Checker &check);

} // namespace zrt

#endif // ZRT_TESTS_FILE_CHECKS_H

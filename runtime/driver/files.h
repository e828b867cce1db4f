//===- files.h - Durable file writes and directory helpers ------*- C++ -*-===//
//
// What every writer of saved state needs (checkpoints, --save, --export-hf):
// a small file replaced atomically (temporary, fsync, rename, directory
// fsync), a directory made durable after a rename in it, and the errno text
// for messages. Errors come back as text naming the file; nothing here
// aborts, so the callers can agree on an error across ranks (agree.h).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_FILES_H
#define ZRT_DRIVER_FILES_H

#include <cstdint>
#include <string>

namespace zrt {

/// strerror(errno), or EIO's text when errno is 0 (a short write).
std::string errnoText();

/// Whether `path` exists.
bool pathExists(const std::string &path);

/// Makes `path` and its parents; "" or the error.
std::string makeDirectories(const std::string &path);

/// Appends the whole of `path`, a small file (an index, a sidecar: at
/// most 64 MiB), to `out`; "" or the error naming the file.
std::string readFile(const std::string &path, std::string &out);

/// Whether `text` ends with `suffix`.
bool endsWith(const std::string &text, const std::string &suffix);

/// Removes a directory and the files in it (a checkpoint's: it has no
/// subdirectories), best effort.
void removeTree(const std::string &dir);

/// The bytes of the files under `path` (a file's own size).
int64_t treeBytes(const std::string &path);

/// fsync of a directory, so that a rename in it is durable; best effort on
/// filesystems that cannot sync directories.
void syncDirectory(const std::string &dir);
/// syncDirectory of the directory that holds `path`.
void syncDirectoryOf(const std::string &path);

/// Writes `text` to `path` as one durable step: to `path`.tmp, fsynced,
/// renamed over `path`, the directory synced. "" or the error; on an error
/// the temporary is removed and `path` is as it was.
std::string writeFileAtomically(const std::string &path,
                                const std::string &text);

} // namespace zrt

#endif // ZRT_DRIVER_FILES_H

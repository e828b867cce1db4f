//===- files.cpp - Durable file writes and directory helpers --------------===//

#include "driver/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zrt {

std::string errnoText() { return std::strerror(errno ? errno : EIO); }

bool pathExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string makeDirectories(const std::string &path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return "cannot create directory '" + prefix + "': " + errnoText();
    if (slash == std::string::npos)
      return "";
  }
}

std::string readFile(const std::string &path, std::string &out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return "cannot open '" + path + "': " + errnoText();
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0) {
    out.append(chunk, n);
    if (out.size() > (64u << 20)) {
      std::fclose(f);
      return "'" + path + "' is larger than an index can be";
    }
  }
  std::fclose(f);
  return "";
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void removeTree(const std::string &dir) {
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *entry = readdir(d)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        unlink((dir + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

int64_t treeBytes(const std::string &path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0)
    return 0;
  if (!S_ISDIR(st.st_mode))
    return st.st_size;
  int64_t bytes = 0;
  if (DIR *d = opendir(path.c_str())) {
    while (dirent *entry = readdir(d)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        bytes += treeBytes(path + "/" + name);
    }
    closedir(d);
  }
  return bytes;
}

void syncDirectory(const std::string &dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

void syncDirectoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  syncDirectory(slash == std::string::npos ? "."
                : slash == 0               ? "/"
                                           : path.substr(0, slash));
}

std::string writeFileAtomically(const std::string &path,
                                const std::string &text) {
  std::string temporary = path + ".tmp";
  errno = 0;
  int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return "cannot create '" + temporary + "': " + errnoText();
  std::string error;
  for (size_t done = 0; done < text.size();) {
    errno = 0;
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      error = "writing '" + temporary + "' failed: " + errnoText();
      break;
    }
    done += n;
  }
  if (error.empty() && fsync(fd) != 0)
    error = "syncing '" + temporary + "' failed: " + errnoText();
  if (close(fd) != 0 && error.empty())
    error = "closing '" + temporary + "' failed: " + errnoText();
  if (error.empty() && rename(temporary.c_str(), path.c_str()) != 0)
    error = "renaming '" + temporary + "' failed: " + errnoText();
  if (!error.empty()) {
    unlink(temporary.c_str());
    return error;
  }
  syncDirectoryOf(path);
  return "";
}

} // namespace zrt

//===- checkpoint_dir.cpp - One job a checkpoint directory ----------------===//

#include "driver/checkpoint_dir.h"
#include "core/agree.h"
#include "driver/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace zrt {

namespace {

/// The lock's descriptor, open until the process exits: closing it (or
/// dying) releases the lock.
int lockFd = -1;

/// "host h1, pid 4242, 2 ranks, started 2026-12-07 17:20:16 UTC": enough to
/// find the job that holds the directory.
std::string jobIdentity(const zrt_context *ctx) {
  char host[256] = "unknown host";
  gethostname(host, sizeof(host) - 1);
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  return "host " + std::string(host) + ", pid " + std::to_string(getpid()) +
         ", " + std::to_string(ctx->worldSize) + " rank" +
         (ctx->worldSize == 1 ? "" : "s") + ", started " + when;
}

/// Rank 0: takes the lock, or names its holder.
std::string lockDirectory(const zrt_context *ctx, const std::string &dir) {
  std::string path = dir + "/.lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return "cannot open the checkpoint directory's lock '" + path +
           "': " + errnoText();
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    if (error != EWOULDBLOCK) {
      // A filesystem without locks: the directory is not guarded, which
      // is no reason to refuse the run.
      std::fprintf(stderr,
                   "warning: cannot lock '%s' (%s): another job could "
                   "write into --checkpoint-dir too\n",
                   path.c_str(), std::strerror(error));
      lockFd = fd;
      return "";
    }
    char holder[512] = {};
    ssize_t got = pread(fd, holder, sizeof(holder) - 1, 0);
    close(fd);
    std::string who = got > 0 ? std::string(holder, got) : "";
    who.erase(who.find_last_not_of(" \n\r\t") + 1);
    return "checkpoint directory '" + dir + "' is in use by another job (" +
           (who.empty() ? "its identity not yet written" : who) + "; lock '" +
           path +
           "'): two jobs writing one directory would destroy each other's "
           "checkpoints; give this run another --checkpoint-dir, or wait "
           "for that job to end";
  }
  std::string identity = jobIdentity(ctx) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, identity.data(), identity.size(),
                                      0) != (ssize_t)identity.size())
    std::fprintf(stderr,
                 "warning: cannot write this job's identity into "
                 "'%s': %s\n",
                 path.c_str(), errnoText().c_str());
  lockFd = fd;
  // Released at exit: the kernel drops the lock, and a normal exit also
  // clears the identity, so that the file names only a job that holds it.
  std::atexit([] {
    if (lockFd >= 0 && ftruncate(lockFd, 0) == 0)
      close(lockFd);
  });
  return "";
}

/// Rank 0, holding the lock: removes the partial checkpoints in `dir`; a
/// checkpoint moved aside (.old) while its replacement was being renamed
/// in goes back where it was when the replacement never arrived.
void removePartials(const std::string &dir) {
  std::vector<std::string> partial, asides;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *entry = readdir(d)) {
      std::string name = entry->d_name;
      if (name.rfind("step-", 0) == 0 && endsWith(name, ".tmp"))
        partial.push_back(name);
      else if (name == "latest.tmp")
        partial.push_back(name);
      else if (name.rfind("step-", 0) == 0 && endsWith(name, ".old"))
        asides.push_back(name);
    }
    closedir(d);
  }
  for (const std::string &name : asides) {
    std::string whole = dir + "/" + name.substr(0, name.size() - 4);
    if (pathExists(whole + "/index.json"))
      partial.push_back(name); // the replacement is complete
    else if (rename((dir + "/" + name).c_str(), whole.c_str()) == 0)
      std::printf("checkpoint: '%s' restored from '%s', which an earlier "
                  "job moved aside and did not replace\n",
                  whole.c_str(), name.c_str());
  }
  if (partial.empty())
    return;
  std::sort(partial.begin(), partial.end());
  int64_t bytes = 0;
  std::string names;
  for (const std::string &name : partial) {
    std::string path = dir + "/" + name;
    bytes += treeBytes(path);
    struct stat info;
    if (lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
      removeTree(path);
    else
      unlink(path.c_str());
    names += (names.empty() ? "" : ", ") + name;
  }
  syncDirectory(dir);
  std::printf("checkpoint: removed %zu partial checkpoint file%s an earlier "
              "job left in '%s' (%s): %.1f MB\n",
              partial.size(), partial.size() == 1 ? "" : "s", dir.c_str(),
              names.c_str(), bytes / 1e6);
  std::fflush(stdout);
}

} // namespace

std::string claimCheckpointDir(zrt_context *ctx, const std::string &dir) {
  std::string error;
  if (ctx->rank == 0) {
    error = makeDirectories(dir);
    if (error.empty() && lockFd < 0)
      error = lockDirectory(ctx, dir);
    if (error.empty())
      removePartials(dir);
  }
  return agreeOnError(ctx, error);
}

} // namespace zrt

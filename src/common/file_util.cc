// Copyright libtony authors.

#include "common/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/unique_fd.h"

namespace tony {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", strerror(errno)));
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no file ", path));
    return Errno("cannot read", path);
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no file ", path));
    return Errno("cannot read", path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("cannot stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is ", S_ISDIR(st.st_mode) ? "a directory" : "not a regular file"));
  }
  if (st.st_size > max_bytes) {
    return absl::OutOfRangeError(
        absl::StrCat(path, " has ", st.st_size, " bytes, more than ", max_bytes));
  }
  std::string data;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot read", path);
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(data.size()) > max_bytes) {  // it may have grown since fstat
      return absl::OutOfRangeError(absl::StrCat(path, " is larger than ", max_bytes, " bytes"));
    }
  }
  return data;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents, int mode) {
  std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::open(tmp.c_str(), kFlags, mode));
  if (!fd.valid() && errno == EEXIST) {
    // Left by an earlier process with this pid that died mid-write (or planted): removed, and
    // created anew, still exclusively.
    ::unlink(tmp.c_str());
    fd.Reset(::open(tmp.c_str(), kFlags, mode));
  }
  if (!fd.valid()) return Errno("cannot create", tmp);
  absl::Status status = WriteAll(fd.get(), contents, tmp);
  absl::Status closed = fd.Close(tmp);
  if (status.ok()) status = closed;
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) status = Errno("cannot rename", tmp);
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

absl::Status MakeDirectories(const std::string& path, int mode) {
  if (path.empty()) return absl::OkStatus();
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
      return Errno("cannot create directory", partial);
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InternalError(absl::StrCat(path, " is not a directory"));
  }
  return absl::OkStatus();
}

absl::Status MakePrivateDirectory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Errno("cannot create directory", path);
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return Errno("cannot stat", path);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a directory (a symlink or a file is in its place)"));
  }
  if (st.st_uid != ::geteuid()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " belongs to user ", st.st_uid, ", not to this one (", ::geteuid(),
                     "): someone else made it first; remove it or use another directory"));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is open to others (mode %o); it must be 0700: chmod 700 %s", path,
                        st.st_mode & 07777, path));
  }
  return absl::OkStatus();
}

std::string TempDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::string HomeDirectory() {
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return home;
  passwd pw;
  passwd* result = nullptr;
  char buf[4096];
  if (::getpwuid_r(::geteuid(), &pw, buf, sizeof(buf), &result) == 0 && result != nullptr &&
      result->pw_dir != nullptr && *result->pw_dir != '\0') {
    return result->pw_dir;
  }
  return "";
}

absl::Status CopyFile(const std::string& from, const std::string& to) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return Errno("cannot read", from);
  struct stat st;
  if (::fstat(in.get(), &st) != 0) return Errno("cannot stat", from);
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777));
  if (!out.valid()) return Errno("cannot create", to);
  char buf[65536];
  absl::Status status;
  while (status.ok()) {
    ssize_t n = ::read(in.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) status = Errno("cannot read", from);
    if (n <= 0) break;
    status = WriteAll(out.get(), absl::string_view(buf, static_cast<size_t>(n)), to);
  }
  absl::Status closed = out.Close(to);
  return status.ok() ? closed : status;
}

std::string BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

std::string SelfDirectory() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string self(buf, static_cast<size_t>(n));
  size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

}  // namespace tony

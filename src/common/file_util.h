// Copyright libtony authors.
//
// Small file helpers with absl::Status errors that name the path.
//
// Thread-safe: free functions without shared state.

#ifndef TONY_COMMON_FILE_UTIL_H_
#define TONY_COMMON_FILE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony {

absl::StatusOr<std::string> ReadFileToString(const std::string& path);
// Reads a regular file of at most `max_bytes` without ever blocking on a FIFO or reading an
// endless device: FailedPrecondition when `path` is not a regular file, OutOfRange when it holds
// more than `max_bytes`, NotFound when it does not exist.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes);
// Writes to a temporary file beside `path`, then renames it over `path`: readers see the old or
// the new contents, never a part. The temporary file is created new (O_EXCL) and never through a
// symlink (O_NOFOLLOW): a planted link cannot redirect the write.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 int mode = 0644);
// mkdir -p, with `mode` for the directories it creates.
absl::Status MakeDirectories(const std::string& path, int mode = 0755);
// Copies `from` to `to`, keeping the permission bits.
absl::Status CopyFile(const std::string& from, const std::string& to);
// A directory only this user may enter, for files others must not read, replace or plant: made
// (0700) if missing; otherwise it must be a real directory (not a symlink), owned by this user,
// with no group or other permission bits, else FailedPrecondition naming what is wrong (another
// user could have made it first in a shared place such as /tmp).
absl::Status MakePrivateDirectory(const std::string& path);
// The user's home directory: $HOME, else the password database's entry. Empty when neither is
// known (callers fail then, never fall back to a shared directory such as /tmp).
std::string HomeDirectory();
// Where temporary files go: $TMPDIR, else /tmp.
std::string TempDirectory();
// Last component of a path ("a/b.py" -> "b.py").
std::string BaseName(absl::string_view path);
// Directory of this program (from /proc/self/exe).
std::string SelfDirectory();

}  // namespace tony

#endif  // TONY_COMMON_FILE_UTIL_H_

// Copyright libtony authors.
//
// The packed Python env (--python_env): InspectPythonEnv reads an archive the user names, which
// may be anything (a truncated download, a zip64 from another tool, a tar with hostile names),
// without unpacking it. Whatever the bytes, it returns (no crash, no hang, no unbounded memory),
// and an archive it accepts has a content key and the format its magic says.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "fuzz_check.h"
#include "spec/python_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Nothing is remembered across runs: the inspections file would be under a HOME that does
  // not exist (and must not be the fuzzing user's).
  static const bool no_home = ::setenv("HOME", "/nonexistent/tony-fuzz", 1) == 0;
  FUZZ_CHECK(no_home);
  if (size > 256 * 1024) return 0;
  // A regular file the inspection can stat and pread, without touching the disk.
  const int fd = ::memfd_create("python-env", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(size == 0 || ::write(fd, data, size) == static_cast<ssize_t>(size));
  absl::StatusOr<tony::PythonEnvArchive> a =
      tony::InspectPythonEnv(absl::StrCat("/proc/self/fd/", fd));
  ::close(fd);
  if (!a.ok()) {
    FUZZ_CHECK(a.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  FUZZ_CHECK(a->content_key.size() == 16);
  FUZZ_CHECK(size >= 4);
  const bool gzip = data[0] == 0x1f && data[1] == 0x8b;
  FUZZ_CHECK(gzip == (a->format == tony::PythonEnvArchive::Format::kTarGz));
  return 0;
}

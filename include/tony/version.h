// Copyright libtony authors.
//
// libtony's version: the headers' (these macros, at compile time) and the library's (Version(),
// at run time). A host can refuse a libtony.so older than the headers it was built with:
//
//   if (tony::Version().major != TONY_VERSION_MAJOR ||
//       tony::Version().minor < TONY_VERSION_MINOR) {
//     return absl::FailedPreconditionError(
//         absl::StrCat("libtony ", tony::VersionString(), " is older than its headers (",
//                      TONY_VERSION_STRING, ")"));
//   }
//
// (tests/consumer compiles this example against the installed package.)
//
// Stability: from 1.0, the public API (include/tony/) is source-compatible within a major
// version, and the shared library's ABI within a minor one (its SONAME carries the major).
// Before 1.0 a minor release may change either; CHANGELOG.md names each (docs/stability.md).
// CMakeLists.txt reads the version from this file: it is the one place it is written.
//
// Thread-safe: the functions are pure.

#ifndef TONY_VERSION_H_
#define TONY_VERSION_H_

#include "absl/strings/string_view.h"
#include "tony/export.h"

#define TONY_VERSION_MAJOR 0
#define TONY_VERSION_MINOR 1
#define TONY_VERSION_PATCH 0
#define TONY_VERSION_STRING "0.1.0"

namespace tony {

struct VersionNumber {
  int major = 0;
  int minor = 0;
  int patch = 0;
};

// The version of the libtony library this program runs with.
TONY_EXPORT VersionNumber Version();
// The same as "major.minor.patch".
TONY_EXPORT absl::string_view VersionString();

}  // namespace tony

#endif  // TONY_VERSION_H_

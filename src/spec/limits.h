// Copyright libtony authors.
//
// Sizes libtony accepts from a user, checked before anything is submitted (docs/job-spec.md
// lists them). They keep a mistaken input (a `--spec /dev/zero`, a 100,000-character name) from
// exhausting the client or the cluster, and stay under what the platform takes anyway.
//
// Thread-safe: constants.

#ifndef TONY_SPEC_LIMITS_H_
#define TONY_SPEC_LIMITS_H_

#include <cstdint>

namespace tony::spec {

inline constexpr int64_t kMaxSpecFileBytes = int64_t{1} << 20;  // --spec
inline constexpr int64_t kMaxScriptBytes = int64_t{16} << 20;   // -s/--script
inline constexpr int64_t kMaxFileBytes = int64_t{4} << 30;      // --file, each
inline constexpr int64_t kMaxArchiveBytes = int64_t{16} << 30;  // --archive, each
inline constexpr int kMaxNameLength = 256;                      // -n, -q
inline constexpr int kMaxJobNameLength = 64;                    // job types
inline constexpr int kMaxTags = 10;                             // YARN's default maximum
inline constexpr int kMaxTagLength = 100;                       // YARN's default maximum
inline constexpr int kMaxTotalTasks = 10000;                    // the broker is measured there
// Linux takes at most 128 KiB for one argument or environment string (MAX_ARG_STRLEN); the
// command runs as `bash -c <command>`.
inline constexpr int64_t kMaxCommandBytes = 128 * 1024 - 1;
inline constexpr int64_t kMaxEnvValueBytes = 128 * 1024 - 1;

}  // namespace tony::spec

#endif  // TONY_SPEC_LIMITS_H_

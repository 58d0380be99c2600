// Copyright libtony authors.
//
// LinkSourceEntries: puts the job's sources (JobSpec::source_dir, unpacked by YARN, or the
// submitter's own directory on the local backend) in the task's working directory, as TonY's
// --src_dir does: every file and directory of the source directory appears there under its own
// name, so `python train.py` and `import mypackage` work as on the submitting machine.
//
// Thread-safe: a free function; it changes the working directory's entries.

#ifndef TONY_EXECUTOR_SOURCE_LINKS_H_
#define TONY_EXECUTOR_SOURCE_LINKS_H_

#include <string>

#include "absl/status/status.h"

namespace tony::executor {

// Symlinks each entry of `source_dir` (relative: to `work_dir`) into `work_dir`. A name already
// taken there by something else (a shipped file, the runtime) keeps what it has, with a
// warning; a link made by an earlier call is kept as it is. FailedPrecondition naming the
// directory when it cannot be read, Internal when a link cannot be made.
absl::Status LinkSourceEntries(const std::string& source_dir, const std::string& work_dir);

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_SOURCE_LINKS_H_

// Copyright libtony authors.
//
// LocalResource records for files the NodeManager can read directly (file:// URLs): the NM
// checks the size loosely but the modification time exactly, so both come from stat().
//
// Thread-safety: a stateless function.

#ifndef TONY_YARN_LOCAL_RESOURCE_H_
#define TONY_YARN_LOCAL_RESOURCE_H_

#include <string>

#include "absl/status/statusor.h"
#include "yarn/records.h"

namespace tony::yarn {

// A file:// resource for an absolute local path, with its size and modification time in ms
// (truncated, as Java reads it). Only useful when the NodeManagers share this file system
// (single host, or a shared mount).
absl::StatusOr<LocalResource> LocalFileResource(
    const std::string& absolute_path, LocalResourceType type = LocalResourceType::kFile,
    LocalResourceVisibility visibility = LocalResourceVisibility::kApplication);

}  // namespace tony::yarn

#endif  // TONY_YARN_LOCAL_RESOURCE_H_

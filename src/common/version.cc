// Copyright libtony authors.

#include "tony/version.h"

namespace tony {

VersionNumber Version() { return {TONY_VERSION_MAJOR, TONY_VERSION_MINOR, TONY_VERSION_PATCH}; }

absl::string_view VersionString() { return TONY_VERSION_STRING; }

}  // namespace tony

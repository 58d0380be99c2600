// Copyright libtony authors.

#include "common/package_location.h"

// Defined only in programs linked through the installed package; null otherwise.
extern "C" const char* tony_package_bindir() __attribute__((weak));
extern "C" const char* tony_package_datadir() __attribute__((weak));

namespace tony {

std::string PackageBinDir() {
  return tony_package_bindir != nullptr ? tony_package_bindir() : std::string();
}

std::string PackageDataDir() {
  return tony_package_datadir != nullptr ? tony_package_datadir() : std::string();
}

}  // namespace tony

// Copyright libtony authors.
//
// Where the installed libtony package keeps its programs and data, when this program was linked
// through find_package(tony) (cmake/tony_package_location.cc is then compiled into it). Empty
// otherwise, e.g. for the build tree's own tools, which find their files next to themselves.
//
// Thread-safe: stateless.

#ifndef TONY_COMMON_PACKAGE_LOCATION_H_
#define TONY_COMMON_PACKAGE_LOCATION_H_

#include <string>

namespace tony {

// "<prefix>/bin": tony-am and tony-executor.
std::string PackageBinDir();
// "<prefix>/share/tony": the runtime bundle tony-runtime.tar.gz.
std::string PackageDataDir();

}  // namespace tony

#endif  // TONY_COMMON_PACKAGE_LOCATION_H_

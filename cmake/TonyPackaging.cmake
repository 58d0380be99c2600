# `cpack -G DEB` in a build directory: one Debian package with the library, headers, CMake
# package, tools and runtime bundle, under /usr. Its dependencies come from dpkg-shlibdeps (the
# shared libraries the binaries use) plus Abseil's headers, which find_package(tony) needs.
set(CPACK_PACKAGE_NAME libtony)
set(CPACK_PACKAGE_VENDOR "libtony authors")
set(CPACK_PACKAGE_CONTACT "libtony authors <libtony@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Distributed TensorFlow and PyTorch on Apache Hadoop YARN (library, CLI, runtime)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libabsl-dev")
# Debug information stays in the build tree (the package is a third of the size).
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
include(CPack)

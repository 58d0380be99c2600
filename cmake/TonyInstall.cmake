# The installed library: one shared library `tony` (alias tony::tony) holding every concern's
# objects. Its dependencies are private: a consumer links libtony.so and Abseil (the public
# headers use Abseil's types) and nothing else; protobuf, gRPC, curl, yaml-cpp, fmt, libgsasl,
# libmicrohttpd, Kerberos, OpenSSL, expat and zlib stay behind the shared library. It exports only
# the public API (include/tony/, TONY_EXPORT; cmake/libtony.map; checked by the library_symbols
# test).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(concerns GLOBAL PROPERTY TONY_CONCERNS)
get_property(external_libs GLOBAL PROPERTY TONY_EXTERNAL_LIBS)
list(REMOVE_DUPLICATES external_libs)

add_library(tony SHARED)
add_library(tony::tony ALIAS tony)
foreach(c IN LISTS concerns)
  target_sources(tony PRIVATE $<TARGET_OBJECTS:tony_${c}>)
endforeach()
target_include_directories(tony PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# What include/tony/ uses; everything else is the library's own business.
target_link_libraries(tony PUBLIC absl::status absl::statusor absl::strings absl::time
  PRIVATE ${external_libs})
target_link_options(tony PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/libtony.map
  -Wl,-z,defs)
set_target_properties(tony PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  EXPORT_NAME tony LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libtony.map)

# Components: runtime (library, tools, runtime bundle; what the wheel carries) and dev (headers,
# CMake package). The Debian package has both.
install(TARGETS tony EXPORT tonyTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(DIRECTORY include/tony DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT tonyTargets NAMESPACE tony:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tony
  COMPONENT dev)
configure_package_config_file(cmake/tonyConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tonyConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tony)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tonyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tonyConfig.cmake ${PROJECT_BINARY_DIR}/tonyConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/tony_package_location.cc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tony COMPONENT dev)
# Bash completion; it reads the options from the programs' --help.
install(FILES ${PROJECT_SOURCE_DIR}/completion/ytf-submit ${PROJECT_SOURCE_DIR}/completion/ytf
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)
foreach(tool IN ITEMS ytf-submit ytf tony-am tony-executor)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  endif()
endforeach()

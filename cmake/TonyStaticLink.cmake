# libtony.a, and the tools that link it with their dependencies' static archives.
#
# Every shared library costs a process its own relocated data, GOT and page tables: ytf-submit
# mapped about 90 (Abseil alone about 40) and `ytf-submit --help` alone peaked at 18 MB. With
# TONY_STATIC_TOOLS, tony-am, ytf-submit and ytf link libtony.a (every concern's objects; the
# linker takes only those a tool uses) and the dependencies Debian ships as archives: Abseil,
# protobuf, gRPC with its own (upb, gpr, address_sorting, re2, c-ares), yaml-cpp, expat, zlib,
# libmicrohttpd and libstdc++. The rest stays shared, for lack of archives or to keep one copy in
# the process: libcurl (its ~20 libraries have no archives) and with it OpenSSL, MIT Kerberos,
# and GnuTLS, which libmicrohttpd's archive refers to (p11-kit and libunistring have none).
# tony-executor links fully statically on its own terms (tools/tony-executor).
option(TONY_STATIC_TOOLS
  "Link tony-am, ytf-submit and ytf against libtony.a and the static archives of their dependencies"
  ON)

# The static library variant of libtony. Not installed: a consumer would need every dependency's
# package (libtony.so keeps them private).
get_property(tony_static_concerns GLOBAL PROPERTY TONY_CONCERNS)
add_library(tony_static STATIC)
foreach(c IN LISTS tony_static_concerns)
  target_sources(tony_static PRIVATE $<TARGET_OBJECTS:tony_${c}>)
endforeach()
set_target_properties(tony_static PROPERTIES OUTPUT_NAME tony
  ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)

# tony_find_archives(<archives_var> <complete_var> name...): the static archives lib<name>.a, then
# every Abseil archive; <complete_var> is FALSE when any is missing.
function(tony_find_archives archives_var complete_var)
  set(archives)
  set(complete TRUE)
  foreach(name IN LISTS ARGN)
    find_library(TONY_ARCHIVE_${name} NAMES lib${name}.a)
    if(TONY_ARCHIVE_${name})
      list(APPEND archives ${TONY_ARCHIVE_${name}})
    else()
      set(complete FALSE)
    endif()
  endforeach()
  file(GLOB absl /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/libabsl_*.a)
  if(NOT absl)
    set(complete FALSE)
  endif()
  set(${archives_var} ${archives} ${absl} PARENT_SCOPE)
  set(${complete_var} ${complete} PARENT_SCOPE)
endfunction()

tony_find_archives(tony_static_archives tony_static_complete
  grpc++ grpc upb gpr address_sorting re2 cares protobuf yaml-cpp expat z microhttpd)
pkg_check_modules(GNUTLS REQUIRED IMPORTED_TARGET gnutls)
tony_pin_pkg_includes(GNUTLS)
find_package(OpenSSL REQUIRED COMPONENTS SSL Crypto)
if(TONY_STATIC_TOOLS AND NOT tony_static_complete)
  message(STATUS "TONY_STATIC_TOOLS: static archives missing; the tools link shared libraries")
endif()

# tony_static_tool(<name> SOURCES ... DEPS concern...): a tool linked as above; without
# TONY_STATIC_TOOLS (or the archives) the same as tony_tool.
function(tony_static_tool name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES" ${ARGN})
  if(NOT TONY_STATIC_TOOLS OR NOT tony_static_complete)
    tony_tool(${name} SOURCES ${ARG_SOURCES} DEPS ${ARG_DEPS})
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  # The concerns' headers; the dependencies' are in /usr/include.
  target_include_directories(${name} PRIVATE
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/gen)
  target_compile_options(${name} PRIVATE ${TONY_WARNING_FLAGS})
  # Abseil's archives depend on each other (and gRPC's on them) in no simple order: one group.
  target_link_libraries(${name} PRIVATE
    -Wl,--start-group tony_static ${tony_static_archives}
    -Wl,--end-group
    CURL::libcurl OpenSSL::SSL OpenSSL::Crypto PkgConfig::KRB5 PkgConfig::GNUTLS
    -static-libstdc++ -static-libgcc Threads::Threads ${CMAKE_DL_LIBS} rt m)
endfunction()

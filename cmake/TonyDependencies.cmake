# Every C/C++ dependency comes from Debian's packages (see scripts/install-deps).
find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(CURL REQUIRED)
find_package(ZLIB REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(EXPAT REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(PkgConfig REQUIRED)
# The broker's per-job TLS certificate; DIGEST-MD5's MD5, HMAC and ciphers.
find_package(OpenSSL REQUIRED COMPONENTS Crypto SSL)
# CMake 3.25's FindPkgConfig reads a module's `-isystem DIR` (krb5's) as an include directory on
# a build tree's first configure and as a compile option on every later one: any reconfigure (the
# wheel build's, in the middle of ctest) recompiled 81 objects and relinked ytf-submit while tests
# ran it ("exec ytf-submit: Permission denied"). The target gets the same directories every time.
function(tony_pin_pkg_includes prefix)
  set(dirs ${${prefix}_INCLUDE_DIRS})
  set(options)
  set(dir_follows FALSE)
  foreach(flag IN LISTS ${prefix}_CFLAGS_OTHER)
    if(dir_follows)
      list(APPEND dirs ${flag})
      set(dir_follows FALSE)
    elseif(flag STREQUAL "-isystem")
      set(dir_follows TRUE)
    else()
      list(APPEND options ${flag})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  set_target_properties(PkgConfig::${prefix} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${dirs}" INTERFACE_COMPILE_OPTIONS "${options}")
endfunction()

# MIT Kerberos: GSS-API (SASL GSSAPI for Hadoop IPC) and libkrb5 (keytab login).
pkg_check_modules(KRB5 REQUIRED IMPORTED_TARGET krb5-gssapi krb5)
tony_pin_pkg_includes(KRB5)
# GNU libmicrohttpd: the HTTP server under the AM's page and the history server (src/httpd).
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd>=0.9.75)
tony_pin_pkg_includes(MHD)

find_program(TONY_PROTOC protoc REQUIRED)
find_program(TONY_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

if(TONY_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()

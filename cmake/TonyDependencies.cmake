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
# MIT Kerberos: GSS-API (SASL GSSAPI for Hadoop IPC) and libkrb5 (keytab login).
pkg_check_modules(KRB5 REQUIRED IMPORTED_TARGET krb5-gssapi krb5)
# GNU libmicrohttpd: the HTTP server under the AM's page and the history server (src/httpd).
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd>=0.9.75)

find_program(TONY_PROTOC protoc REQUIRED)
find_program(TONY_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

if(TONY_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()

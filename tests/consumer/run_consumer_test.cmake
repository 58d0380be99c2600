# Installs libtony from the build tree into a scratch prefix, then configures, builds and runs a
# separate project that only does find_package(tony): a small consumer, and the C++ examples of
# README.md and of every public header that has one, exactly as written there. The header
# examples run here (local backend, the installed tony-am) except the broker's, which is only
# compiled; the README example submits to YARN, so tests/cli/cli_itest.cc runs the binary built
# here (build/readme_example) on the real cluster. Then examples/orchestrator, as a project of
# its own, builds and runs with the local backend.
file(REMOVE_RECURSE ${WORK_DIR})
get_filename_component(source_root ${CONSUMER_SOURCE_DIR}/../.. ABSOLUTE)

# README.md: the first ```cpp block, a whole program.
file(READ ${source_root}/README.md readme)
string(FIND "${readme}" "```cpp\n" begin)
if(begin EQUAL -1)
  message(FATAL_ERROR "README.md has no ```cpp block")
endif()
math(EXPR begin "${begin} + 7")
string(SUBSTRING "${readme}" ${begin} -1 rest)
string(FIND "${rest}" "```" end)
string(SUBSTRING "${rest}" 0 ${end} readme_code)
file(WRITE ${WORK_DIR}/examples/readme_example.cc "${readme_code}")

# A public header's example: the indented comment lines from the one matching `first` to the
# next bare "//" line, without their "//   ".
function(header_example header first out)
  file(STRINGS ${source_root}/include/tony/${header} lines)
  set(body "")
  set(inside FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "^//   ${first}")
      set(inside TRUE)
    elseif(inside AND line STREQUAL "//")
      break()
    endif()
    if(inside)
      string(REGEX REPLACE "^//   " "" line "${line}")
      string(APPEND body "  ${line}\n")
    endif()
  endforeach()
  if(body STREQUAL "")
    message(FATAL_ERROR "include/tony/${header} has no example")
  endif()
  set(${out} "${body}" PARENT_SCOPE)
endfunction()

# tony/submitter.h: a main()'s body.
header_example(submitter.h "tony::JobSpec spec;" body)
file(WRITE ${WORK_DIR}/examples/header_example.cc
  "#include <cstdio>\n#include <memory>\n#include <string>\n\n#include \"tony/submitter.h\"\n\n"
  "int main() {\n${body}}\n")
# tony/application_monitor.h: a function's body, given `submitted`; run on a local job.
header_example(application_monitor.h "tony::ApplicationMonitor monitor;" body)
file(WRITE ${WORK_DIR}/examples/monitor_example.cc
  "#include <poll.h>\n#include <cerrno>\n#include <cstdio>\n#include <memory>\n\n"
  "#include \"tony/application_monitor.h\"\n\n"
  "absl::Status Follow(absl::StatusOr<std::unique_ptr<tony::Application>> submitted) {\n"
  "${body}}\n\n"
  "int main() {\n  tony::JobSpec spec;\n  spec.command = \"true\";\n"
  "  spec.job_types.push_back({.name = \"worker\", .instances = 1});\n"
  "  absl::Status s = Follow(tony::NewLocalSubmitter({})->Submit(spec));\n"
  "  std::printf(\"%s\\n\", s.ok() ? \"FOLLOWED\" : s.ToString().c_str());\n"
  "  return s.ok() ? 0 : 1;\n}\n")

# tony/cluster_spec_broker.h: a function's body, given `secret` and `observer`; compiled only.
header_example(cluster_spec_broker.h "tony::ClusterSpecBrokerOptions options;" body)
file(WRITE ${WORK_DIR}/examples/broker_example.cc
  "#include <string>\n\n#include \"tony/cluster_spec_broker.h\"\n\n"
  "absl::Status Serve(const std::string& secret, tony::ClusterSpecBrokerObserver& observer) {\n"
  "${body}}\n\nint main() { return 0; }\n")
# tony/cluster_spec_broker_client.h: a function's body; compiled only.
header_example(cluster_spec_broker_client.h "absl::StatusOr<std::string> secret" body)
file(WRITE ${WORK_DIR}/examples/broker_client_example.cc
  "#include <string>\n\n#include \"tony/cluster_spec_broker_client.h\"\n\n"
  "absl::Status Task(const std::string& broker_address, int port, int exit_code,\n"
  "                  const std::string& stderr_tail) {\n${body}}\n\nint main() { return 0; }\n")
# tony/init.h: a function's body; compiled only.
header_example(init.h "tony::InitOptions init;" body)
file(WRITE ${WORK_DIR}/examples/init_example.cc
  "#include \"tony/init.h\"\n\n"
  "absl::Status Setup() {\n${body}  return absl::OkStatus();\n}\n\n"
  "int main() { return 0; }\n")

# tony/version.h: a function's body; run (the library matches its headers).
header_example(version.h "if \\(tony::Version\\(\\).major" body)
file(WRITE ${WORK_DIR}/examples/version_example.cc
  "#include <cstdio>\n\n#include \"absl/status/status.h\"\n#include \"absl/strings/str_cat.h\"\n#include \"tony/version.h\"\n\n"
  "absl::Status Check() {\n${body}  return absl::OkStatus();\n}\n\n"
  "int main() {\n  absl::Status s = Check();\n"
  "  std::printf(\"%s\\n\", s.ok() ? \"VERSION OK\" : s.ToString().c_str());\n"
  "  return s.ok() ? 0 : 1;\n}\n")

execute_process(COMMAND ${CMAKE_COMMAND} --install ${TONY_BINARY_DIR} --prefix ${WORK_DIR}/prefix
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build
  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DEXAMPLES_DIR=${WORK_DIR}/examples RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer run failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/version_example RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "tony/version.h's example failed: ${rc}")
endif()
# The header example must find the installed tony-am and tony-executor on its own.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=TONY_BIN_DIR --unset=HADOOP_CONF_DIR
  --unset=YARN_CONF_DIR ${WORK_DIR}/build/header_example
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message(STATUS "header example: ${out}${err}")
if(rc OR NOT out MATCHES "SUCCEEDED")
  message(FATAL_ERROR "header example failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=TONY_BIN_DIR ${WORK_DIR}/build/monitor_example
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message(STATUS "monitor example: ${out}${err}")
if(rc OR NOT out MATCHES "FOLLOWED")
  message(FATAL_ERROR "monitor example failed (${rc}): ${out}${err}")
endif()

# The consumer needs libtony and Abseil and nothing else: none of libtony's private dependencies
# is linked into it.
execute_process(COMMAND readelf -d ${WORK_DIR}/build/consumer OUTPUT_VARIABLE dynamic)
if(NOT dynamic MATCHES "libtony[.]so")
  message(FATAL_ERROR "the consumer does not link libtony.so:\n${dynamic}")
endif()
foreach(private IN ITEMS protobuf grpc curl yaml-cpp fmt gsasl krb5 gssapi crypto expat libz)
  if(dynamic MATCHES "NEEDED[^\n]*${private}")
    message(FATAL_ERROR "the consumer links ${private}, a private dependency of libtony:\n"
      "${dynamic}")
  endif()
endforeach()

# examples/orchestrator as its README says: its own project against the installed package,
# run with the local backend (three jobs, one re-attached by id, one cancelled).
execute_process(COMMAND ${CMAKE_COMMAND} -S ${source_root}/examples/orchestrator
  -B ${WORK_DIR}/orchestrator -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "orchestrator configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/orchestrator RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "orchestrator build failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=TONY_BIN_DIR
  ${WORK_DIR}/orchestrator/orchestrator
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message(STATUS "orchestrator: ${out}${err}")
if(rc OR NOT out MATCHES "ORCHESTRATED" OR NOT out MATCHES "re-attached to local_")
  message(FATAL_ERROR "orchestrator failed (${rc}): ${out}${err}")
endif()

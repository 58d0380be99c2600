include(GoogleTest)

# libtony is one library assembled from one OBJECT library per concern (src/<concern>/).
# Tests link only the concerns they exercise (and their transitive concern deps), so a change in
# one concern does not rebuild or break unrelated test binaries.

set(TONY_WARNING_FLAGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
# clang checks the lock annotations (ABSL_GUARDED_BY, ...) as it compiles; GCC ignores them, and
# a GCC build runs scripts/check-thread-safety instead (the test thread_safety_check).
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND TONY_WARNING_FLAGS -Wthread-safety)
endif()
if(TONY_WERROR)
  list(APPEND TONY_WARNING_FLAGS -Werror)
endif()

# tony_test_code(<target>): test code (test binaries and their helpers) compiles at -O0, after
# the build type's -O2 so that it wins: 40 % less compile time than -O2 (20 % less than -O1), and
# tests spend their time waiting on processes and clusters, not computing. _FORTIFY_SOURCE needs
# optimisation (glibc warns, -Werror fails), so it is off for them. The library and the binaries
# the tests run keep the build type's flags. (The sanitizer trees build all at -O0.)
function(tony_test_code target)
  if(CMAKE_BUILD_TYPE MATCHES "Rel" AND NOT TONY_SANITIZE)
    target_compile_options(${target} PRIVATE -O0 -U_FORTIFY_SOURCE)
  endif()
endfunction()

# tony_concern(<name> [DEPS concern...] [LIBS external-target...] [SOURCES ...] [NO_WARNINGS])
# Without SOURCES it takes every *.cc in the calling directory.
function(tony_concern name)
  cmake_parse_arguments(ARG "NO_WARNINGS" "" "DEPS;LIBS;SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  endif()
  if(NOT ARG_SOURCES)
    # A concern still being written: keep the graph valid with an empty object.
    set(ARG_SOURCES ${PROJECT_BINARY_DIR}/gen/tony_empty_${name}.cc)
    file(WRITE ${ARG_SOURCES} "// concern ${name} has no sources yet\n")
  endif()
  add_library(tony_${name} OBJECT ${ARG_SOURCES})
  target_include_directories(tony_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/gen>)
  foreach(dep IN LISTS ARG_DEPS)
    target_link_libraries(tony_${name} PUBLIC tony_${dep})
  endforeach()
  target_link_libraries(tony_${name} PUBLIC ${ARG_LIBS})
  if(NOT ARG_NO_WARNINGS)
    target_compile_options(tony_${name} PRIVATE ${TONY_WARNING_FLAGS})
  endif()
  # libtony.so exports only what include/tony/ marks TONY_EXPORT (cmake/libtony.map).
  set_target_properties(tony_${name} PROPERTIES CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  set_property(GLOBAL APPEND PROPERTY TONY_CONCERNS ${name})
  set_property(GLOBAL APPEND PROPERTY TONY_EXTERNAL_LIBS ${ARG_LIBS})
  set_property(GLOBAL PROPERTY TONY_DEPS_${name} ${ARG_DEPS})
endfunction()

# Transitive closure of concern deps, as OBJECT library targets.
function(tony_concern_closure out)
  set(seen)
  set(todo ${ARGN})
  while(todo)
    list(POP_FRONT todo c)
    if(c IN_LIST seen)
      continue()
    endif()
    if(NOT TARGET tony_${c})
      message(WARNING "libtony concern ${c} is not defined (yet): skipped")
      continue()
    endif()
    list(APPEND seen ${c})
    get_property(deps GLOBAL PROPERTY TONY_DEPS_${c})
    list(APPEND todo ${deps})
  endwhile()
  list(TRANSFORM seen PREPEND tony_)
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# tony_test(<name> DEPS concern... [SOURCES ...] [LIBS ...] [ITEST [HADOOP|SECURE]] [TIMEOUT s]
#           [ENV VAR=value...] [FIXTURES fixture...] [GRPC regex])
# One gtest binary. Without SOURCES it takes every *_test.cc (or *_itest.cc with ITEST) in the
# calling directory. Every TEST in it is its own ctest entry, "<name>.<Suite>.<Test>" (discovered
# when ctest runs), so ctest spreads unrelated tests over the cores, reruns one by name and names
# the one that failed. Labels: "unit", or "itest" for multi-process tests (ITEST). HADOOP tests
# get the real-cluster harness main (tests/harness) and need the "hadoop_cluster" fixture, which
# starts the test cluster once for the whole run (or reuses a running one); SECURE tests the
# Kerberos one ("secure_cluster", label "secure"). Tests of a suite named *Exclusive* have the
# cluster to themselves (RUN_SERIAL): they fill it, take nodes away or need nodes free. Tests whose
# "Suite.Test" matches the GRPC regex run real gRPC (a broker, a channel) and get the label "grpc":
# ThreadSanitizer skips them (scripts/sanitize-test).
function(tony_test name)
  cmake_parse_arguments(ARG "ITEST;HADOOP;SECURE" "TIMEOUT;GRPC" "DEPS;SOURCES;LIBS;ENV;FIXTURES"
    ${ARGN})
  set(fixtures ${ARG_FIXTURES})
  if(ARG_ITEST)
    set(pattern *_itest.cc)
    set(labels itest)
    set(main GTest::gtest_main)
    if(ARG_HADOOP)
      set(main tony_harness)
      list(APPEND fixtures hadoop_cluster)
    elseif(ARG_SECURE)
      set(main tony_harness)
      list(APPEND fixtures secure_cluster)
      list(APPEND labels secure)
    endif()
  else()
    set(pattern *_test.cc)
    set(labels unit)
    set(main GTest::gtest_main)
  endif()
  if(TONY_SANITIZE STREQUAL "thread")
    list(APPEND labels tsan)
  elseif(TONY_SANITIZE STREQUAL "address")
    list(APPEND labels asan)
  endif()
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${pattern})
  endif()
  tony_concern_closure(objs ${ARG_DEPS})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${objs} ${ARG_LIBS} ${main} GTest::gmock GTest::gtest)
  # Test helpers are included as "tests/<dir>/<file>.h".
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE ${TONY_WARNING_FLAGS})
  tony_test_code(${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  # Each multi-process test file keeps its own helpers (Cluster(), AppIdOf(), ...) in its own
  # anonymous namespace, and such a target has few files: compiled file by file in a unity build.
  if(ARG_ITEST)
    set_target_properties(${name} PROPERTIES UNITY_BUILD OFF)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set(env "TONY_BIN_DIR=${PROJECT_BINARY_DIR}/bin" "TONY_SOURCE_DIR=${PROJECT_SOURCE_DIR}" ${ARG_ENV})
  if(ARG_SECURE)
    list(APPEND env "TONY_HARNESS_SECURE=1")
  endif()
  if(ARG_HADOOP OR ARG_SECURE)
    # The harness only reuses (or repairs) the fixture's cluster; it never stops it.
    list(APPEND env "TONY_HARNESS_FIXTURE=1")
  endif()
  # Discovered when ctest runs (PRE_TEST): a listing never runs at build time, where a sanitizer
  # runtime or a missing cluster would fail the build. gtest_discover_tests cannot pass list
  # values (two labels, two variables) through PROPERTIES, so a script of ours sets them once the
  # tests exist.
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60 TEST_LIST ${name}_TESTS)
  set(props "TIMEOUT ${ARG_TIMEOUT}")
  if(fixtures)
    string(APPEND props " FIXTURES_REQUIRED [==[${fixtures}]==]")
  endif()
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${name}_properties.cmake)
  # Each test gets its own ::testing::TempDir() (TEST_TMPDIR): tests of one binary run at once
  # under ctest -j, and files of the same name in a shared /tmp collided.
  set(tmp ${PROJECT_BINARY_DIR}/testtmp/${name})
  file(GENERATE OUTPUT ${script} CONTENT "set(i 0)
foreach(t IN LISTS ${name}_TESTS)
  math(EXPR i \"\${i} + 1\")
  file(MAKE_DIRECTORY ${tmp}/\${i})
  set(labels [==[${labels}]==])
  if(NOT [==[${ARG_GRPC}]==] STREQUAL [==[]==] AND t MATCHES [==[^${name}[.](${ARG_GRPC})$]==])
    list(APPEND labels grpc)
  endif()
  set(env [==[${env}]==])
  list(APPEND env TEST_TMPDIR=${tmp}/\${i})
  # The real cluster's share: with scripts/test's resource spec (TONY_CTEST_RESOURCES=1) the
  # cluster has TONY_CTEST_CLUSTER_SLOTS slots (2 unless set), an *Exclusive* test takes them all,
  # and tests that need no cluster run beside it; without one, an *Exclusive* test runs alone.
  # When scripts/test started a second cluster for them (TONY_CTEST_EXCLUSIVE_HOME and _PORT),
  # *Exclusive* tests run there one at a time, beside the two slots of the first.
  set(cluster_slots 2)
  if(\"\$ENV{TONY_CTEST_CLUSTER_SLOTS}\" MATCHES \"^[1-9]$\")
    set(cluster_slots \$ENV{TONY_CTEST_CLUSTER_SLOTS})
  endif()
  set(exclusive FALSE)
  if(t MATCHES [==[^[^.]+[.][A-Za-z0-9_]*Exclusive[A-Za-z0-9_]*[.]]==])
    set(exclusive TRUE)
  endif()
  set(resources FALSE)
  if([==[${fixtures}]==] MATCHES hadoop_cluster AND \"\$ENV{TONY_CTEST_RESOURCES}\" STREQUAL \"1\")
    set(resources TRUE)
  endif()
  set(apart FALSE)
  if(resources AND exclusive AND NOT \"\$ENV{TONY_CTEST_EXCLUSIVE_HOME}\" STREQUAL \"\")
    set(apart TRUE)
    list(APPEND env \"TONY_HADOOP_HOME=\$ENV{TONY_CTEST_EXCLUSIVE_HOME}\"
      \"TONY_HADOOP_BASE_PORT=\$ENV{TONY_CTEST_EXCLUSIVE_PORT}\")
  endif()
  set_tests_properties(\${t} PROPERTIES LABELS \"\${labels}\" ENVIRONMENT \"\${env}\" ${props})
  if(apart)
    set_tests_properties(\${t} PROPERTIES RESOURCE_GROUPS exclusive_cluster:1)
  elseif(resources)
    if(exclusive)
      set_tests_properties(\${t} PROPERTIES RESOURCE_GROUPS cluster:\${cluster_slots})
    else()
      set_tests_properties(\${t} PROPERTIES RESOURCE_GROUPS cluster:1)
    endif()
  elseif(exclusive)
    set_tests_properties(\${t} PROPERTIES RUN_SERIAL TRUE)
  endif()
endforeach()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
  set_property(GLOBAL APPEND PROPERTY TONY_TEST_BINARIES ${name})
endfunction()

# tony_tool(<name> SOURCES ... DEPS concern...): a thin main in build/bin.
function(tony_tool name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES;LIBS" ${ARGN})
  tony_concern_closure(objs ${ARG_DEPS})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${objs} ${ARG_LIBS})
  target_compile_options(${name} PRIVATE ${TONY_WARNING_FLAGS})
endfunction()

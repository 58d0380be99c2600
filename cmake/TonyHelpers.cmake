# libtony is one library assembled from one OBJECT library per concern (src/<concern>/).
# Tests link only the concerns they exercise (and their transitive concern deps), so a change in
# one concern does not rebuild or break unrelated test binaries.

set(TONY_WARNING_FLAGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
if(TONY_WERROR)
  list(APPEND TONY_WARNING_FLAGS -Werror)
endif()

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

# tony_test(<name> DEPS concern... [SOURCES ...] [LIBS ...] [ITEST [HADOOP]] [TIMEOUT s])
# One gtest binary. Without SOURCES it takes every *_test.cc (or *_itest.cc with ITEST) in the
# calling directory. ITEST binaries are multi-process tests: they run serially and carry the
# "integration" label; with HADOOP they get the real-cluster harness main (tests/harness), which
# starts the test Hadoop cluster once per run (or reuses a running one).
function(tony_test name)
  cmake_parse_arguments(ARG "ITEST;HADOOP" "TIMEOUT" "DEPS;SOURCES;LIBS" ${ARGN})
  if(ARG_ITEST)
    set(pattern *_itest.cc)
    set(label integration)
    if(ARG_HADOOP)
      set(main tony_harness)
    else()
      set(main GTest::gtest_main)
    endif()
  else()
    set(pattern *_test.cc)
    set(label unit)
    set(main GTest::gtest_main)
  endif()
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${pattern})
  endif()
  tony_concern_closure(objs ${ARG_DEPS})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${objs} ${ARG_LIBS} ${main} GTest::gmock GTest::gtest)
  target_compile_options(${name} PRIVATE ${TONY_WARNING_FLAGS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS ${label} TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT
    "TONY_BIN_DIR=${PROJECT_BINARY_DIR}/bin;TONY_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  if(ARG_ITEST)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()

# tony_tool(<name> SOURCES ... DEPS concern...): a thin main in build/bin.
function(tony_tool name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES;LIBS" ${ARGN})
  tony_concern_closure(objs ${ARG_DEPS})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${objs} ${ARG_LIBS})
  target_compile_options(${name} PRIVATE ${TONY_WARNING_FLAGS})
endfunction()

# TONY_SANITIZE: libtony's own code, tests and tools built with a sanitizer, in a build directory of
# its own (scripts/sanitize-test).
#  - address: ASan + UBSan (clang; vptr checks off: our classes derive from gcc-built protobuf and
#    gRPC classes whose type information UBSan cannot check). Debian's libraries stay
#    uninstrumented; ASan still sees their heap misuse through its allocator.
#  - thread: ThreadSanitizer. Debian's Abseil, gRPC and protobuf stay uninstrumented, so every
#    executable also links tests/tsan/absl_sync_interposer.cc, which tells TSan about absl::Mutex,
#    CondVar and Notification (otherwise every absl::Mutex-guarded field is a "race"); the tests it
#    runs are those that run no gRPC (label grpc), whose uninstrumented core orders what it
#    hands between threads with atomics TSan cannot see.
set(TONY_SANITIZE "" CACHE STRING "Sanitizer for libtony's own code: empty (none), address or thread")
if(TONY_SANITIZE STREQUAL "")
  return()
endif()
if(TONY_SANITIZE STREQUAL "address")
  set(TONY_ASAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-sanitize=vptr -fno-omit-frame-pointer)
  add_compile_options(${TONY_ASAN_FLAGS})
  add_link_options(${TONY_ASAN_FLAGS})
  # Sanitizer runtimes cannot be linked into static executables.
  set(TONY_STATIC_EXECUTOR OFF)
  set(TONY_STATIC_TOOLS OFF)
  return()
endif()
if(NOT TONY_SANITIZE STREQUAL "thread")
  message(FATAL_ERROR "TONY_SANITIZE must be empty, 'address' or 'thread', not '${TONY_SANITIZE}'")
endif()

add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
add_link_options(-fsanitize=thread)
# TSan's runtime cannot be linked into a static executable, and the interposer needs Abseil
# shared (its definitions would clash with Abseil's archives in the statically linked tools).
set(TONY_STATIC_EXECUTOR OFF)
set(TONY_STATIC_TOOLS OFF)

add_library(tony_tsan_interposer OBJECT ${PROJECT_SOURCE_DIR}/tests/tsan/absl_sync_interposer.cc)
target_link_libraries(tony_tsan_interposer PUBLIC absl::synchronization ${CMAKE_DL_LIBS})
target_compile_options(tony_tsan_interposer PRIVATE ${TONY_WARNING_FLAGS})

# Run once the whole tree is configured: every executable gets the interposer, and exports its
# definitions so that calls from the shared libraries (gRPC's, Abseil's own) bind to them too.
function(tony_tsan_link_interposer dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_link_libraries(${target} PRIVATE tony_tsan_interposer)
      target_link_options(${target} PRIVATE
        "LINKER:--export-dynamic-symbol=_ZN4absl*5Mutex*"
        "LINKER:--export-dynamic-symbol=_ZN4absl*7CondVar*"
        "LINKER:--export-dynamic-symbol=_ZN4absl*12Notification*"
        "LINKER:--export-dynamic-symbol=_ZNK4absl*12Notification*")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    tony_tsan_link_interposer(${subdir})
  endforeach()
endfunction()

# After the whole tree (tony_test needs enable_testing): the interposer's own test.
function(tony_tsan_finish)
  if(TONY_BUILD_TESTS)
    tony_test(tsan_interposer_test
      SOURCES ${PROJECT_SOURCE_DIR}/tests/tsan/absl_sync_interposer_test.cc
      LIBS absl::synchronization absl::time)
  endif()
  tony_tsan_link_interposer(${PROJECT_SOURCE_DIR})
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL tony_tsan_finish)

// Copyright libtony authors.
//
// FUZZ_CHECK: a property a fuzz target asserts beyond "does not crash". A violation aborts, which
// libFuzzer reports as a crash and saves the input as a reproducer.
//
// Thread-safety: stateless.

#ifndef TONY_FUZZ_FUZZ_CHECK_H_
#define TONY_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

#endif  // TONY_FUZZ_FUZZ_CHECK_H_

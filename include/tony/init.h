// Copyright libtony authors.
//
// Process-wide state of the libraries libtony uses, and who owns it. By default libtony takes
// it on first use and never gives it back (its threads may use it until the process exits):
//   - libcurl: curl_global_init(CURL_GLOBAL_DEFAULT) before the first HTTP request (WebHDFS,
//     the NodeManager's log pages, SPNEGO); never curl_global_cleanup.
// (libtony no longer uses libgsasl: its DIGEST-MD5, with the integrity and confidentiality
// layers libgsasl lacks, is its own.) A host that owns curl itself (it initialises it for its own
// use, or must control when) says so once, before any other libtony call:
//
//   tony::InitOptions init;
//   init.init_curl = false;             // the host called curl_global_init already
//   if (absl::Status s = tony::Initialize(init); !s.ok()) return s;
//
// (tests/consumer compiles this example against the installed package.)
//
// Stability: stable API (tony/version.h), except InitOptions::gsasl_context, removed before 1.0.
//
// Thread-safe: Initialize() may be called from any thread; the first call wins.

#ifndef TONY_INIT_H_
#define TONY_INIT_H_

#include "absl/status/status.h"
#include "tony/export.h"

namespace tony {

struct InitOptions {
  // Whether libtony calls curl_global_init(CURL_GLOBAL_DEFAULT) before its first HTTP request.
  // False: the host has called curl_global_init before this call and does not call
  // curl_global_cleanup while libtony may still be used. Default: true.
  bool init_curl = true;
  // Ignored, kept so that hosts written for libtony 0.1 still compile: libtony no longer uses
  // libgsasl (a host may pass its context; libtony never touches it). Removed before 1.0.
  // Default: null.
  void* gsasl_context = nullptr;
};

// Records who owns what, for the whole process. FailedPrecondition when it was called before,
// or when libtony has already initialised curl itself (the options could no longer be honoured);
// nothing changes then.
TONY_EXPORT absl::Status Initialize(const InitOptions& options);

}  // namespace tony

#endif  // TONY_INIT_H_

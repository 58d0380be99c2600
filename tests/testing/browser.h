// Copyright libtony authors.
//
// Headless chromium (Debian's /usr/bin/chromium, installed by scripts/install-deps) for the
// tests that look at libtony's pages the way a person's browser does: the DOM it built after
// parsing (--dump-dom) or a screenshot (--screenshot=FILE). Nothing is fetched but the page.
//
// Thread-compatible: each call starts its own browser (with its own profile directory).

#ifndef TONY_TESTS_TESTING_BROWSER_H_
#define TONY_TESTS_TESTING_BROWSER_H_

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"

namespace tony::testing {

inline constexpr char kChromium[] = "/usr/bin/chromium";

struct BrowserResult {
  int exit_code = -1;
  std::string out;  // --dump-dom: the DOM
  std::string err;
};

// Runs chromium on `url` with `flags` (e.g. {"--dump-dom"}), at most two minutes.
inline BrowserResult Browse(const std::string& url, const std::vector<std::string>& flags) {
  static int runs = 0;
  const std::string base = absl::StrCat(::testing::TempDir(), "/browser-", ::getpid(), "-", ++runs);
  SubprocessOptions options;
  // Root needs --no-sandbox; no GPU here; a profile of its own.
  options.argv = {kChromium,
                  "--headless=new",
                  "--no-sandbox",
                  "--disable-gpu",
                  "--user-data-dir=" + base + ".profile",
                  "--window-size=1280,1400"};
  options.argv.insert(options.argv.end(), flags.begin(), flags.end());
  options.argv.push_back(url);
  options.env = CurrentEnvironment();
  options.stdout_path = base + ".out";
  options.stderr_path = base + ".err";
  BrowserResult r;
  auto p = Subprocess::Spawn(options);
  if (!p.ok()) {
    r.err = std::string(p.status().message());
    return r;
  }
  auto code = (*p)->Wait(absl::Minutes(2));
  r.exit_code = code.ok() ? *code : (*p)->Terminate(absl::Seconds(5));
  r.out = ReadFileToString(base + ".out").value_or("");
  r.err = ReadFileToString(base + ".err").value_or("");
  return r;
}

}  // namespace tony::testing

#endif  // TONY_TESTS_TESTING_BROWSER_H_

// Copyright libtony authors.
//
// What the executor reads from the network with its own small HTTP client (the AM locator asks
// WebHDFS where the current AM is): a whole response, chunked or not, and the LISTSTATUS JSON in
// it. The peer may be anyone who can answer on the NameNode's port. Properties: a body only
// comes out of a 200; a decoded chunked body is never longer than the response; every name
// listed is one of the JSON's strings (no invention).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "executor/am_locator.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return 0;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::string> body = tony::executor::HttpResponseBody(input);
  if (body.ok()) {
    FUZZ_CHECK(absl::StartsWith(input, "HTTP/1."));
    FUZZ_CHECK(body->size() <= input.size());
    absl::StatusOr<std::vector<std::string>> names = tony::executor::ParseListStatusNames(*body);
    if (names.ok()) {
      for (const std::string& n : *names) FUZZ_CHECK(n.size() <= body->size());
    }
  }
  // The same bytes as a JSON document straight away.
  (void)tony::executor::ParseListStatusNames(input);
  return 0;
}

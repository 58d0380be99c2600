// Copyright libtony authors.
//
// The ApplicationMaster's status page (its YARN tracking URL, reachable by anyone who can reach
// the AM): the request is fed in chunks the way recv() delivers it until the page decides, then
// the answer must be well-formed HTTP/1.0. The same bytes then stand in for everything a
// rendered page shows that users control (application id, diagnostics with task stderr, task
// lines, TensorBoard URL): none of it may add markup.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "am/status_page.h"
#include "fuzz_check.h"

namespace {

using tony::am::HttpRequestVerdict;

void Request(absl::string_view input) {
  // Arrives in 2 KB reads (the page's buffer), except that a client may send less at a time:
  // the first byte, when it is a digit, sets a smaller chunk size.
  size_t chunk = 2048;
  if (!input.empty() && absl::ascii_isdigit(static_cast<unsigned char>(input[0]))) {
    chunk = static_cast<size_t>(input[0] - '0') + 1;
  }
  std::string received;
  HttpRequestVerdict verdict = tony::am::ClassifyHttpRequest(received);
  FUZZ_CHECK(verdict == HttpRequestVerdict::kIncomplete);
  while (verdict == HttpRequestVerdict::kIncomplete && !input.empty()) {
    const size_t n = std::min(chunk, input.size());
    received.append(input.data(), n);
    input.remove_prefix(n);
    verdict = tony::am::ClassifyHttpRequest(received);
  }
  FUZZ_CHECK(received.size() <= 16384 + 2048);
  const std::string body = "<html>page</html>";
  const std::string answer = tony::am::HttpAnswer(verdict, body);
  switch (verdict) {
    case HttpRequestVerdict::kIncomplete:
    case HttpRequestVerdict::kTooLarge:
      FUZZ_CHECK(answer.empty());
      return;
    case HttpRequestVerdict::kNotAllowed:
      FUZZ_CHECK(absl::StartsWith(answer, "HTTP/1.0 405 "));
      return;
    case HttpRequestVerdict::kGet:
    case HttpRequestVerdict::kHead:
      break;
  }
  FUZZ_CHECK(absl::StartsWith(answer, "HTTP/1.0 200 OK\r\n"));
  const size_t end = answer.find("\r\n\r\n");
  FUZZ_CHECK(end != std::string::npos);
  FUZZ_CHECK(absl::StrContains(answer.substr(0, end), "\r\nContent-Length: 17\r\n"));
  FUZZ_CHECK(answer.substr(end + 4) == (verdict == HttpRequestVerdict::kGet ? body : ""));
}

// Replaces the characters markup needs, giving a string of the same shape that cannot inject.
std::string Defused(absl::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == '<' || c == '>' || c == '"' || c == '&') c = '_';
  }
  return out;
}

size_t Count(absl::string_view s, char c) { return std::count(s.begin(), s.end(), c); }

void Page(absl::string_view input) {
  std::vector<std::string> lines = absl::StrSplit(input, '\n');
  auto line = [&](size_t i) { return i < lines.size() ? lines[i] : std::string(); };
  tony::ApplicationStatus status;
  status.id = line(0);
  status.state = tony::AppState::kRunning;
  status.tensorboard_url = line(1);
  status.log_dir = line(2);
  status.diagnostics = std::string(input);
  status.progress[line(3)].total = 1;
  tony::ApplicationStatus defused = status;
  defused.id = Defused(status.id);
  defused.tensorboard_url = Defused(status.tensorboard_url);
  defused.log_dir = Defused(status.log_dir);
  defused.diagnostics = Defused(status.diagnostics);
  defused.progress.clear();
  defused.progress[Defused(line(3))].total = 1;
  std::vector<std::string> defused_lines;
  for (const std::string& l : lines) defused_lines.push_back(Defused(l));

  const std::string page = tony::am::RenderStatusPage(status, lines);
  const std::string reference = tony::am::RenderStatusPage(defused, defused_lines);
  for (char c : {'<', '>', '"'}) FUZZ_CHECK(Count(page, c) == Count(reference, c));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 32 * 1024) return 0;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  Request(input);
  Page(input);
  return 0;
}

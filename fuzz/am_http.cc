// Copyright libtony authors.
//
// The ApplicationMaster's status page (its YARN tracking URL, reachable by anyone who can reach
// the AM): the bytes stand in for everything a rendered page shows that users control
// (application id, diagnostics with task stderr, task lines, TensorBoard URL): none of it may add
// markup. (The HTTP parsing under it is libmicrohttpd's, fuzzed by its own project.)

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
  Page(input);
  return 0;
}

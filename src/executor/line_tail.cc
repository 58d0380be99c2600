// Copyright libtony authors.

#include "executor/line_tail.h"

#include "absl/strings/str_join.h"
#include "common/utf8.h"

namespace tony::executor {

void LineTail::Append(absl::string_view data) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    absl::string_view piece = data.substr(0, nl);
    size_t room = max_line_bytes_ > partial_.size() ? max_line_bytes_ - partial_.size() : 0;
    if (piece.size() > room) partial_cut_ = true;
    absl::string_view kept = piece.substr(0, room);
    partial_.append(kept.data(), kept.size());
    if (nl == absl::string_view::npos) return;
    Push(std::move(partial_));
    partial_.clear();
    partial_cut_ = false;
    data.remove_prefix(nl + 1);
  }
}

void LineTail::Push(std::string line) {
  if (partial_cut_) line += "...";
  lines_.push_back(std::move(line));
  while (lines_.size() > max_lines_) lines_.pop_front();
}

std::string LineTail::Tail() const {
  // An unterminated last line counts as one of the kept lines.
  auto begin = lines_.begin();
  if (!partial_.empty() && lines_.size() >= max_lines_ && begin != lines_.end()) ++begin;
  std::string out = absl::StrJoin(begin, lines_.end(), "\n");
  if (!partial_.empty()) {
    if (!out.empty()) out += "\n";
    out += partial_;
  }
  // A task's stderr may hold any bytes, and a cut line may end inside a character: the exit
  // report's protobuf string field must be UTF-8 or the broker refuses the whole report.
  return ToValidUtf8(out);
}

}  // namespace tony::executor

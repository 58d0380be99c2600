// Copyright libtony authors.
//
// LineTail: the last lines of a byte stream (a task's stderr), for its exit report.
//
// Thread-compatible.

#ifndef TONY_EXECUTOR_LINE_TAIL_H_
#define TONY_EXECUTOR_LINE_TAIL_H_

#include <deque>
#include <string>

#include "absl/strings/string_view.h"

namespace tony::executor {

class LineTail {
 public:
  // Keeps `max_lines` lines of at most `max_line_bytes` bytes each (longer ones are cut).
  explicit LineTail(size_t max_lines = 50, size_t max_line_bytes = 1024)
      : max_lines_(max_lines), max_line_bytes_(max_line_bytes) {}

  void Append(absl::string_view data);
  // The kept lines joined by '\n', including an unterminated last line; as valid UTF-8 (every
  // byte that is not becomes U+FFFD).
  std::string Tail() const;

 private:
  void Push(std::string line);
  size_t max_lines_;
  size_t max_line_bytes_;
  std::deque<std::string> lines_;
  std::string partial_;
  bool partial_cut_ = false;
};

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_LINE_TAIL_H_

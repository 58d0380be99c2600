// Copyright libtony authors.

#include "common/repeated_line.h"

#include "absl/strings/str_cat.h"

namespace tony {

std::string RepeatedLine::Summary(absl::Time now) const {
  return absl::StrCat(
      line_, " (", repeats_, repeats_ == 1 ? " more time" : " more times", " in the last ",
      absl::FormatDuration(absl::Trunc(now - first_repeat_, absl::Milliseconds(100))), ")");
}

std::vector<std::string> RepeatedLine::Add(absl::string_view line, absl::Time now) {
  std::vector<std::string> out;
  if (!line_.empty() && line == line_) {
    if (repeats_ == 0) first_repeat_ = now;
    ++repeats_;
    if (now - logged_at_ >= every_) {
      out.push_back(Summary(now));
      repeats_ = 0;
      logged_at_ = now;
    }
    return out;
  }
  if (std::optional<std::string> summary = Flush(now)) out.push_back(*std::move(summary));
  line_ = std::string(line);
  logged_at_ = now;
  out.push_back(line_);
  return out;
}

std::optional<std::string> RepeatedLine::Flush(absl::Time now) {
  std::optional<std::string> out;
  if (repeats_ > 0) out = Summary(now);
  line_.clear();
  repeats_ = 0;
  return out;
}

}  // namespace tony

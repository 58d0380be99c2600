// Copyright libtony authors.

#include "am/task_id.h"

#include "absl/strings/numbers.h"

namespace tony::am {

std::optional<TaskId> TaskId::Parse(absl::string_view id) {
  const size_t colon = id.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return std::nullopt;
  int index = -1;
  if (!absl::SimpleAtoi(id.substr(colon + 1), &index) || index < 0) return std::nullopt;
  return TaskId{std::string(id.substr(0, colon)), index};
}

}  // namespace tony::am

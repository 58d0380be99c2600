// Copyright libtony authors.

#include "am/job_record.h"

namespace tony::am {

std::string EventLine(const JobRecord& record, absl::Time time, int attempt, int64_t seq) {
  nlohmann::json line = nlohmann::json::object();
  line["v"] = kEventSchemaVersion;
  line["seq"] = seq;
  line["time"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", time, absl::UTCTimeZone());
  line["attempt"] = attempt;
  line["event"] = record.event;
  if (!record.task.empty()) line["task"] = record.task;
  for (const auto& [key, value] : record.fields.items()) line[key] = value;
  // Stderr tails and diagnostics may hold any bytes: replaced, never an exception.
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tony::am

// Copyright libtony authors.
//
// JobRecord: one entry of the job's event log (docs/events.md) as the AM core states it: what
// happened, to which task, with its facts. The driver stamps the time, the attempt and a
// sequence number on it (EventLine) and hands the lines to the history (history/event_log.h).

#ifndef TONY_AM_JOB_RECORD_H_
#define TONY_AM_JOB_RECORD_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace tony::am {

// The schema version every line carries ("v"); docs/events.md says what each version adds.
inline constexpr int kEventSchemaVersion = 1;

struct JobRecord {
  std::string event;  // "task_allocated"
  std::string task;   // "worker:0"; empty for the job's own events
  nlohmann::json fields = nlohmann::json::object();
};

inline bool operator==(const JobRecord& a, const JobRecord& b) {
  return a.event == b.event && a.task == b.task && a.fields == b.fields;
}

// {"v":1,"seq":..,"time":"2026-11-26T02:10:00.123Z","attempt":..,"event":..,"task":..,...}: one
// line, no newline. Invalid UTF-8 in a field is replaced, never an error.
std::string EventLine(const JobRecord& record, absl::Time time, int attempt, int64_t seq);

}  // namespace tony::am

#endif  // TONY_AM_JOB_RECORD_H_

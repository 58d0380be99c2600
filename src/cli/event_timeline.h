// Copyright libtony authors.
//
// `ytf events`: a job's event log (docs/events.md) as a timeline a person reads, or its lines as
// they are (--json). Lines that are not JSON objects (an AM killed mid-append cuts the last one
// short) are reported by line number and skipped; nothing else is lost.

#ifndef TONY_CLI_EVENT_TIMELINE_H_
#define TONY_CLI_EVENT_TIMELINE_H_

#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "history/goodput.h"

namespace tony::cli {

// Prints the log `text` (JSON lines) to `out`, problems to `err`; how many lines were bad.
// Timeline lines: "+12.345s  #1  worker:0  task_exited  exit_code=3 stderr_tail=..." (time since
// the first line, the attempt, the task or "-", the event, the other fields; text made safe for
// a terminal and cut at 200 characters).
int PrintEventTimeline(absl::string_view text, bool json, std::ostream& out, std::ostream& err);

// The job's goodput (history/goodput.h) as a line and a small table, after the timeline:
//   goodput: 20.0 s of 31.0 s training (65%)
//     waiting        2.0 s    6%
//     ...
std::string GoodputText(const history::Goodput& g);

}  // namespace tony::cli

#endif  // TONY_CLI_EVENT_TIMELINE_H_

// Copyright libtony authors.
//
// The job's figures in Prometheus' text exposition format (version 0.0.4), served by the AM's
// status page at /metrics (through YARN's web proxy: <tracking URL>/metrics). Names and labels
// are documented in docs/metrics.md; a name, once published, keeps its meaning.

#ifndef TONY_AM_METRICS_H_
#define TONY_AM_METRICS_H_

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "am/task_usage.h"
#include "httpd/escape.h"
#include "tony/submitter.h"

namespace tony::am {

// Gauges of the job (state, attempt, tasks per job type and phase) and counters (restarts); per
// task ("worker:0") its processes' last sampled memory and CPU (`usage`).
std::string RenderPrometheusMetrics(const ApplicationStatus& status,
                                    const std::map<std::string, TaskUsagePoint>& usage = {});

// `value` as a label value: backslash, double quote and newline escaped (httpd/escape.h).
using httpd::PrometheusLabel;

}  // namespace tony::am

#endif  // TONY_AM_METRICS_H_

// Copyright libtony authors.
//
// Escaping user strings (job names, hosts, diagnostics) for what httpd::Server serves: HTML
// pages (the AM's status page, the history server's) and Prometheus' text format (/metrics).
// Here rather than beside one page so that every page, whichever room it is in, escapes alike.
//
// Thread-safe (pure functions).

#ifndef TONY_HTTPD_ESCAPE_H_
#define TONY_HTTPD_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tony::httpd {

// `text` safe inside HTML text and double-quoted attributes.
std::string HtmlEscape(absl::string_view text);

// `value` as a Prometheus label value: backslash, double quote and newline escaped.
std::string PrometheusLabel(absl::string_view value);

}  // namespace tony::httpd

#endif  // TONY_HTTPD_ESCAPE_H_

// Copyright libtony authors.
//
// StatusRoute: a page served beside the AM's status page at the tracking URL (e.g. the job's
// live view, history::LiveJobView). Here, below both the AM and the history, so that the history
// hands the AM its pages without depending on the AM.
//
// A plain struct: thread-compatible; `render` itself must be safe to call from several threads.

#ifndef TONY_HTTPD_STATUS_ROUTE_H_
#define TONY_HTTPD_STATUS_ROUTE_H_

#include <functional>
#include <string>

namespace tony::httpd {

struct StatusRoute {
  std::string path;  // "/job"
  std::string content_type;
  std::function<std::string()> render;  // called on a page thread, possibly several at once
};

}  // namespace tony::httpd

#endif  // TONY_HTTPD_STATUS_ROUTE_H_

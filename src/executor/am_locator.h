// Copyright libtony authors.
//
// AmLocator: where the job's ApplicationMaster is now, for an executor whose AM stopped
// answering (work-preserving AM restart): the latest address an AM attempt published in HDFS
// (broker/am_address.h), found by one WebHDFS LISTSTATUS to the NameNode. The executor is linked
// statically without libcurl, so this speaks just enough HTTP/1.1 over a socket (no redirects
// are involved: the NameNode answers LISTSTATUS itself).
//
// Thread-compatible.

#ifndef TONY_EXECUTOR_AM_LOCATOR_H_
#define TONY_EXECUTOR_AM_LOCATOR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "broker/am_address.h"

namespace tony::executor {

struct AmLocatorOptions {
  std::string dir;                     // HDFS directory of the addresses. Required.
  std::vector<std::string> namenodes;  // WebHDFS "host:port", tried in order. Required.
  std::string user;                    // user.name of the request. Default: "" (none)
  // An HDFS delegation token (URL-safe string form): sent instead of user.name. Default: "".
  std::string delegation;
  // Connecting and answering, per NameNode. Default: 5 seconds.
  absl::Duration timeout = absl::Seconds(5);
  // HTTPS (an HTTPS_ONLY cluster): the CA certificates (PEM) the NameNode's certificate must
  // chain to, and the names it may carry (the addresses are often IP addresses). Default: empty
  // (plain HTTP).
  std::string tls_ca_pem;
  std::vector<std::string> tls_hosts;
};

class AmLocator {
 public:
  explicit AmLocator(AmLocatorOptions options) : options_(std::move(options)) {}
  // The latest attempt's address; NotFound while none is published.
  absl::StatusOr<broker::AmAddress> Latest() const;

 private:
  const AmLocatorOptions options_;
};

// The entry names ("pathSuffix") of a WebHDFS LISTSTATUS answer's JSON.
absl::StatusOr<std::vector<std::string>> ParseListStatusNames(absl::string_view json);
// The body of an HTTP/1.1 response (`raw`: status line, headers, body; chunked or not).
// FailedPrecondition naming the status when it is not 200.
absl::StatusOr<std::string> HttpResponseBody(absl::string_view raw);

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_AM_LOCATOR_H_

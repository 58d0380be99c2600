// Copyright libtony authors.
//
// Why the AM's own pending containers wait, for its status page and its status answers: while
// containers are pending, every `interval` the active nodes and the queue's numbers come from
// the ResourceManager's REST API (each round bounded by `budget`), and submit::ClassifyWait
// names the reason from them and the asks the AM itself knows. It runs on its own thread, so a
// slow or unreachable RM never holds the AM's loop; a failed request leaves the numbers it would
// have given unknown (the reason then names what the rest shows; nothing when both failed).
//
// Thread-safe.

#ifndef TONY_YARNAM_WAIT_WATCH_H_
#define TONY_YARNAM_WAIT_WATCH_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "http/client.h"
#include "submit/wait_reason.h"

namespace tony::yarnam {

struct WaitWatchOptions {
  // The RM's web services, "http://host:port", tried in order. Default: none (never asks: the
  // reason stays unknown).
  std::vector<std::string> rm_web_urls;
  // The application, its queue (name or path) and its user, as the RM knows them.
  // Default: empty.
  std::string app_id;
  std::string queue;
  std::string user;
  // The containers the AM still waits for. Required.
  std::function<std::vector<submit::PendingAsk>()> pending;
  // How often the reason is computed again while containers are pending. Default: 5 seconds.
  absl::Duration interval = absl::Seconds(5);
  // The most one computation spends on the RM. Default: 5 seconds.
  absl::Duration budget = absl::Seconds(5);
};

class WaitWatch {
 public:
  explicit WaitWatch(WaitWatchOptions options);
  ~WaitWatch();  // Stop()s
  WaitWatch(const WaitWatch&) = delete;
  WaitWatch& operator=(const WaitWatch&) = delete;

  // Starts the thread (once; later calls do nothing).
  void Start();
  // Ends and joins the thread; Reason() keeps its last answer.
  void Stop();
  // The last reason computed; kNotWaiting (empty text) when nothing is pending, or the RM did
  // not answer, or before the first computation.
  submit::WaitReason Reason() const;
  // One computation now, on the caller's thread (what the thread does every interval).
  void Refresh();

 private:
  void Loop();

  const WaitWatchOptions options_;
  http::Client http_;
  mutable absl::Mutex mu_;
  submit::WaitReason reason_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_WAIT_WATCH_H_

// Copyright libtony authors.
//
// A scripted RpcChannel for unit tests of the typed YARN clients: records every request by
// method and answers from a per-method queue of replies. The last reply repeats until another is
// queued.

#ifndef TONY_TESTS_YARN_FAKE_CHANNEL_H_
#define TONY_TESTS_YARN_FAKE_CHANNEL_H_

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "ipc/rpc_channel.h"

namespace tony::yarn::testing {

// Thread-safe. Owned by the client under test; keep a raw pointer to script and inspect it.
class FakeChannel : public ipc::RpcChannel {
 public:
  // Queues a reply for `method`: a response message or an error.
  void Reply(const std::string& method, const google::protobuf::MessageLite& response) {
    Queue(method, {absl::OkStatus(), response.SerializeAsString()});
  }
  void Fail(const std::string& method, absl::Status status) { Queue(method, {std::move(status)}); }

  // Requests seen for a method, parsed as T.
  template <typename T>
  std::vector<T> Requests(const std::string& method) const {
    absl::MutexLock lock(&mu_);
    std::vector<T> out;
    auto it = requests_.find(method);
    if (it == requests_.end()) return out;
    for (const auto& bytes : it->second) {
      T t;
      t.ParseFromString(bytes);
      out.push_back(t);
    }
    return out;
  }
  int Count(const std::string& method) const {
    absl::MutexLock lock(&mu_);
    auto it = requests_.find(method);
    return it == requests_.end() ? 0 : static_cast<int>(it->second.size());
  }

  absl::Status Call(absl::string_view method, const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response,
                    const ipc::CallOptions& options) override {
    absl::MutexLock lock(&mu_);
    std::string m(method);
    requests_[m].push_back(request.SerializeAsString());
    auto it = replies_.find(m);
    if (it == replies_.end() || it->second.empty()) {
      return absl::UnimplementedError("no scripted reply for " + m);
    }
    Scripted& front = it->second.front();
    front.served = true;
    Scripted r = front;
    if (it->second.size() > 1) it->second.pop_front();
    if (!r.status.ok()) return r.status;
    response->ParseFromString(r.bytes);
    return absl::OkStatus();
  }

 private:
  struct Scripted {
    absl::Status status;
    std::string bytes;
    bool served = false;
  };

  void Queue(const std::string& method, Scripted s) {
    absl::MutexLock lock(&mu_);
    auto& q = replies_[method];
    // A repeating reply that was already used gives way to the new one.
    if (q.size() == 1 && q.front().served) q.pop_front();
    q.push_back(std::move(s));
  }
  mutable absl::Mutex mu_;
  std::map<std::string, std::deque<Scripted>> replies_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::string>> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::yarn::testing

#endif  // TONY_TESTS_YARN_FAKE_CHANNEL_H_

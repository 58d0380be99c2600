// Copyright libtony authors.
//
// A task's stderr may hold any bytes. Issue 25's field report: a task printed \377\376 and
// exited 3, and its exit report never reached the AM (protobuf refuses a `string` field that is
// not UTF-8; the executor logged "could not report the exit: UNIMPLEMENTED"). The executor's
// tail (LineTail, as the executor makes it) through the broker client to an in-process broker:
// the AM's observer gets the exit with a valid UTF-8 tail.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "broker/broker_client.h"
#include "common/utf8.h"
#include "executor/line_tail.h"
#include "gtest/gtest.h"
#include "tony/cluster_spec_broker.h"

namespace tony {
namespace {

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef";

class ExitObserver : public ClusterSpecBrokerObserver {
 public:
  void OnTaskExited(absl::string_view job, int index, int code, absl::string_view tail) override {
    absl::MutexLock lock(&mu_);
    exits_.push_back(absl::StrCat(job, ":", index, " ", code, " ", tail));
  }
  std::vector<std::string> exits() {
    absl::MutexLock lock(&mu_);
    return exits_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> exits_ ABSL_GUARDED_BY(mu_);
};

TEST(ExitReportUtf8Test, AStderrTailOfAnyBytesReachesTheAmAsValidUtf8) {
  ExitObserver observer;
  ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 1}};
  options.observer = &observer;
  ClusterSpecBroker broker(options);
  ASSERT_TRUE(broker.Start().ok());
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", broker.port()), kSecret);
  ASSERT_TRUE(client.Register("worker", 0, "127.0.0.1", 5000, absl::Seconds(10)).ok());

  // The executor's tail, with its default limits: bytes that are not UTF-8, and a line cut at
  // 1024 bytes through a 3-byte character.
  executor::LineTail tail;
  tail.Append("Traceback\n\xFF\xFE\n");
  tail.Append(std::string(1023, 'x') + "\xE2\x82\xAC tail\n");
  const std::string sent = tail.Tail();
  ASSERT_TRUE(IsValidUtf8(sent));
  absl::Status reported = client.ReportExit("worker", 0, 3, sent);
  ASSERT_TRUE(reported.ok()) << reported;
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(observer.exits(), std::vector<std::string>{
                                  absl::StrCat("worker:0 3 Traceback\n", replacement, replacement,
                                               "\n", std::string(1023, 'x'), replacement, "...")});
  // Text that did not come through a LineTail (an error naming a path) is made valid by the
  // client itself.
  ASSERT_TRUE(client.Register("worker", 0, "127.0.0.1", 5000, absl::Seconds(10)).ok());
  reported = client.ReportExit("worker", 0, 127, "cannot run /data/\xFF.sh");
  ASSERT_TRUE(reported.ok()) << reported;
  EXPECT_EQ(observer.exits().back(),
            absl::StrCat("worker:0 127 cannot run /data/", replacement, ".sh"));
  broker.Stop();
}

}  // namespace
}  // namespace tony

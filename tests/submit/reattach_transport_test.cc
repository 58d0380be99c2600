// Copyright libtony authors.
//
// Re-attaching to a job by id (`ytf status <id>`, OpenYarnApplicationById) with what the
// submitter left in ~/.tony/apps/<id>/: a TLS job whose tls.cert is missing never has its
// secret sent over plaintext gRPC (the secret would be in clear before the TLS server refused
// it); its status is YARN's report alone. A listener at the AM's address sees whether, and
// how, it was asked.

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "submit/yarn_submitter.h"
#include "tests/http/test_http_server.h"
#include "yarn/fake_channel.h"
#include "yarn/yarn_client.h"

namespace tony::submit {
namespace {

namespace pb = tony::hadoop::yarn;

constexpr char kAppId[] = "application_1700000000000_0007";

// A loopback "AM" that accepts nothing by itself: FirstBytes() says whether a client connected
// and what it sent first.
class AmListener {
 public:
  AmListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~AmListener() { ::close(fd_); }
  int port() const { return port_; }

  // nullopt when nobody connected; else up to 24 bytes the first client sent.
  std::optional<std::string> FirstBytes() {
    const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return std::nullopt;
    std::string got;
    pollfd p{c, POLLIN, 0};
    char buf[24];
    while (got.size() < sizeof(buf) && ::poll(&p, 1, 2000) > 0) {
      ssize_t n = ::recv(c, buf, sizeof(buf) - got.size(), 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    ::close(c);
    return got;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class ReattachTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/reattach_transport_test.XXXXXX";
    home_ = mkdtemp(tmpl.data());
    const char* old = std::getenv("HOME");
    if (old != nullptr) old_home_ = old;
    ::setenv("HOME", home_.c_str(), 1);
    ASSERT_EQ(LocalAppDir(kAppId), home_ + "/.tony/apps/" + kAppId);
    ASSERT_TRUE(MakeDirectories(LocalAppDir(kAppId), 0700).ok());
    Write("secret", "the-job-secret");

    cluster_ = std::make_shared<YarnCluster>();
    cluster_->user = "tester";
    auto channel = std::make_unique<yarn::testing::FakeChannel>();
    pb::GetApplicationReportResponseProto r;
    auto* a = r.mutable_application_report();
    a->mutable_applicationid()->set_cluster_timestamp(1700000000000);
    a->mutable_applicationid()->set_id(7);
    a->set_user("tester");
    a->set_yarn_application_state(pb::RUNNING);
    a->set_host("127.0.0.1");
    a->set_rpc_port(am_.port());
    channel->Reply("getApplicationReport", r);
    cluster_->yarn = yarn::NewYarnClientOverChannel(std::move(channel), {});
    hdfs::WebHdfsClient::Options o;
    o.namenodes = {absl::StrCat("127.0.0.1:", tony::testing::UnusedLoopbackPort())};
    o.user = "tester";
    cluster_->hdfs = *hdfs::WebHdfsClient::Create(o);
  }
  void TearDown() override {
    if (old_home_) ::setenv("HOME", old_home_->c_str(), 1);
    EXPECT_EQ(std::system(absl::StrCat("rm -rf '", home_, "'").c_str()), 0);
  }
  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(LocalAppDir(kAppId) + "/" + name, text, 0600).ok());
  }
  // Opens the job by id and asks its status; what reached the AM's port.
  std::optional<std::string> AskStatus() {
    auto app = OpenYarnApplicationById(cluster_, kAppId, absl::Now() + absl::Seconds(10));
    EXPECT_TRUE(app.ok()) << app.status();
    if (!app.ok()) return std::nullopt;
    auto status = (*app)->Status({.timeout = absl::Milliseconds(500)});
    if (status.ok()) {
      EXPECT_EQ(status->state, AppState::kRunning);
    }
    return am_.FirstBytes();
  }

  AmListener am_;
  std::string home_;
  std::optional<std::string> old_home_;
  std::shared_ptr<YarnCluster> cluster_;
};

TEST_F(ReattachTransportTest, ATlsJobWithoutItsCertificateIsNeverAskedInPlaintext) {
  Write("transport", "tls");
  EXPECT_EQ(AskStatus(), std::nullopt) << "the AM of a TLS job was asked without its certificate";
}

// A job of libtony 0.1 (no transport file) on a Kerberos cluster used TLS.
TEST_F(ReattachTransportTest, AnOldJobOnAKerberosClusterIsTakenAsTls) {
  cluster_->kerberos = true;
  EXPECT_EQ(AskStatus(), std::nullopt);
}

// The listener does see a client: a plaintext job's AM is asked over plaintext gRPC (the
// HTTP/2 preface), so the cases above are not passing for want of any connection.
TEST_F(ReattachTransportTest, APlaintextJobsAmIsAskedOverPlaintext) {
  Write("transport", "plaintext");
  // The ask gives up after 500 ms: a starved process (the sanitizer runs at nice 19) may not have
  // connected or sent by then, and such a try is repeated.
  std::optional<std::string> first;
  for (int attempt = 0; attempt < 5 && (!first.has_value() || first->empty()); ++attempt) {
    first = AskStatus();
  }
  ASSERT_TRUE(first.has_value()) << "the plaintext job's AM was not asked";
  EXPECT_EQ(first->substr(0, 3), "PRI");
}

}  // namespace
}  // namespace tony::submit

// Copyright libtony authors.
//
// The DIGEST-MD5 cipher downgrade (issue 42 item 5) as a live attack on the Kerberos test bed:
// an on-path TCP proxy between the ApplicationMaster and the ResourceManager's scheduler port
// rewrites the cipher list of the RM's DIGEST-MD5 challenge (the AM's AMRMToken link runs under
// hadoop.rpc.protection=privacy there). The challenge is not authenticated, so only the client's
// own list of acceptable ciphers stands in the way (docs/security.md).

#include <glob.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/wire.h"
#include "tests/harness/hadoop_cluster.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tony::hadoop::common::RpcSaslProto;

const harness::HadoopCluster& Cluster() { return harness::HadoopCluster::Get(); }

bool ReadExactly(int fd, char* buf, size_t n) {
  while (n > 0) {
    ssize_t got = ::read(fd, buf, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    buf += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// A TCP connection to the first address of host:port that accepts; invalid when none does.
UniqueFd ConnectTcp(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return UniqueFd();
  UniqueFd fd;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd.Reset(::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.valid() && ::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) break;
    fd.Reset();
  }
  ::freeaddrinfo(found);
  return fd;
}

// `frame` (a server's response frame, length prefix included) with the cipher list of every
// DIGEST-MD5 challenge it carries replaced by `ciphers`; *challenges counts those challenges.
// Parsed and re-encoded with libtony's own framing (ipc/wire.h), as an attacker who knows
// Hadoop RPC would. Empty `ciphers`: the frame as it came.
std::string RewriteChallenges(const std::string& frame, const std::string& ciphers,
                              int* challenges) {
  auto decoded = ipc::DecodeResponseFrame(absl::string_view(frame).substr(4));
  if (!decoded.ok() || decoded->call_id != ipc::kSaslCallId) return frame;
  absl::string_view payload = decoded->payload;
  RpcSaslProto sasl;
  if (!ipc::ConsumeDelimited(&payload, &sasl).ok()) return frame;
  static const std::regex kCipher("cipher=\"[^\"]*\"");
  const std::string offer = "cipher=\"" + ciphers + "\"";
  // Hadoop's first DIGEST-MD5 challenge rides in the NEGOTIATE's offers; later ones in tokens.
  for (RpcSaslProto::SaslAuth& auth : *sasl.mutable_auths()) {
    if (auth.mechanism() != "DIGEST-MD5" || !auth.has_challenge()) continue;
    ++*challenges;
    auth.set_challenge(std::regex_replace(auth.challenge(), kCipher, offer));
  }
  if (sasl.state() == RpcSaslProto::CHALLENGE && absl::StrContains(sasl.token(), "nonce=")) {
    ++*challenges;
    sasl.set_token(std::regex_replace(sasl.token(), kCipher, offer));
  }
  if (ciphers.empty()) return frame;
  return ipc::EncodeFrame({&decoded->header, &sasl});
}

// The attacker: listens on loopback, connects each client to `upstream` and relays the client's
// bytes unchanged and the server's frames through RewriteChallenges.
// Thread-safe; Start and Stop from one thread.
class ChallengeRewritingProxy {
 public:
  ChallengeRewritingProxy(std::string upstream, std::string ciphers)
      : upstream_(std::move(upstream)), ciphers_(std::move(ciphers)) {}
  ~ChallengeRewritingProxy() { Stop(); }

  // Listens on 127.0.0.1 at a port of the kernel's choice.
  absl::Status Start() {
    listener_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (!listener_.valid() || ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), len) ||
        ::listen(listener_.get(), 16) ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len)) {
      return absl::InternalError(absl::StrCat("proxy: cannot listen: ", std::strerror(errno)));
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
    return absl::OkStatus();
  }

  // Closes every link and joins every thread.
  void Stop() {
    if (!acceptor_.joinable()) return;
    ::shutdown(listener_.get(), SHUT_RDWR);  // wakes accept()
    acceptor_.join();
    for (auto& link : links_) {  // only the joined acceptor adds links
      ::shutdown(link->client.get(), SHUT_RDWR);
      ::shutdown(link->server.get(), SHUT_RDWR);
      link->up.join();
      link->down.join();
    }
    links_.clear();
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int connections() const { return connections_.load(); }
  // DIGEST-MD5 challenges the server sent through this proxy.
  int challenges() const { return challenges_.load(); }

 private:
  struct Link {
    UniqueFd client, server;
    std::thread up, down;
  };

  void AcceptLoop() {
    const size_t colon = upstream_.rfind(':');
    while (true) {
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client.valid()) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down
      }
      ++connections_;
      auto link = std::make_unique<Link>();
      link->client = std::move(client);
      link->server = ConnectTcp(upstream_.substr(0, colon), upstream_.substr(colon + 1));
      if (!link->server.valid()) continue;  // the client sees its connection closed
      Link* l = link.get();
      l->up = std::thread([l] { CopyBytes(l->client.get(), l->server.get()); });
      l->down = std::thread([this, l] { CopyFrames(l->server.get(), l->client.get()); });
      links_.push_back(std::move(link));
    }
  }

  // Client to server: every byte as it came (the preamble, SASL answers, wrapped calls).
  static void CopyBytes(int from, int to) {
    char buf[16384];
    while (true) {
      ssize_t got = ::read(from, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0 || !WriteAll(to, absl::string_view(buf, got), "server").ok()) break;
    }
    ::shutdown(from, SHUT_RDWR);
    ::shutdown(to, SHUT_RDWR);
  }

  // Server to client: one response frame at a time, rewritten.
  void CopyFrames(int from, int to) {
    while (true) {
      std::string frame(4, '\0');
      if (!ReadExactly(from, frame.data(), 4)) break;
      const uint32_t length = ipc::DecodeFrameLength(frame.data());
      if (length > ipc::kMaxFrameLength) break;
      frame.resize(4 + length);
      if (!ReadExactly(from, frame.data() + 4, length)) break;
      int seen = 0;
      const std::string out = RewriteChallenges(frame, ciphers_, &seen);
      challenges_ += seen;
      if (!WriteAll(to, out, "client").ok()) break;
    }
    ::shutdown(from, SHUT_RDWR);
    ::shutdown(to, SHUT_RDWR);
  }

  const std::string upstream_;
  const std::string ciphers_;
  UniqueFd listener_;
  int port_ = 0;
  std::thread acceptor_;
  std::vector<std::unique_ptr<Link>> links_;  // the acceptor's until Stop joins it
  std::atomic<int> connections_{0};
  std::atomic<int> challenges_{0};
};

struct JobRun {
  int exit_code = -1;
  std::string out, err;
  std::string app;
  std::string am_log;  // every attempt's
};

// The ApplicationMasters' stderr (their logs) of `app`, from the NodeManagers' log directories.
std::string AmLogs(const std::string& app) {
  std::string state = Cluster().conf_dir();
  state = state.substr(0, state.rfind('/'));
  std::string out;
  glob_t g{};
  if (glob((state + "/data/nm*/logs/" + app + "/container_*/tony-am.stderr").c_str(), 0, nullptr,
           &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out += ReadFileToString(g.gl_pathv[i]).value_or("");
  }
  globfree(&g);
  return out;
}

// Submits a trivial job whose AM reaches the RM's scheduler through `proxy`, and waits for it.
JobRun SubmitThrough(const ChallengeRewritingProxy& proxy, std::vector<std::string> defines = {}) {
  static int counter = 0;
  const std::string base =
      absl::StrCat(::testing::TempDir(), "/digest_downgrade_itest.", ::getpid(), ".", ++counter);
  const char* bin = std::getenv("TONY_BIN_DIR");
  SubprocessOptions options;
  options.argv = {std::string(bin != nullptr ? bin : "build/bin") + "/ytf-submit",
                  "--yarn",
                  "-n",
                  "digest-proxy",
                  "-r",
                  "worker:1",
                  "-m",
                  "128m",
                  "-D",
                  "yarn.resourcemanager.scheduler.address=" + proxy.address()};
  for (const std::string& d : defines) {
    options.argv.push_back("-D");
    options.argv.push_back(d);
  }
  options.argv.push_back("true");
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = Cluster().conf_dir();
  options.stdout_path = base + ".out";
  options.stderr_path = base + ".err";
  JobRun run;
  auto p = Subprocess::Spawn(options);
  if (!p.ok()) {
    run.err = std::string(p.status().message());
    return run;
  }
  auto code = (*p)->Wait(absl::Minutes(5));
  run.exit_code = code.ok() ? *code : (*p)->Terminate(absl::Seconds(5));
  run.out = ReadFileToString(base + ".out").value_or("");
  run.err = ReadFileToString(base + ".err").value_or("");
  std::smatch m;
  static const std::regex kApp("application_[0-9]+_[0-9]+");
  if (std::regex_search(run.out, m, kApp)) run.app = m.str();
  if (!run.app.empty()) run.am_log = AmLogs(run.app);
  return run;
}

// The control: the same proxy forwarding every frame unchanged carries the AM's link, under
// 3des. Without it, a failing job below could be the proxy's fault rather than the refusal.
TEST(DigestDowngradeTest, AnUnchangedProxyCarriesTheAmsLinkUnder3des) {
  ChallengeRewritingProxy proxy(Cluster().scheduler_address(), "");
  ASSERT_TRUE(proxy.Start().ok());
  JobRun run = SubmitThrough(proxy);
  proxy.Stop();
  ASSERT_FALSE(run.app.empty()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err << run.am_log;
  EXPECT_THAT(run.err, HasSubstr("SUCCEEDED"));
  EXPECT_GE(proxy.challenges(), 1) << "the AM's DIGEST-MD5 exchange did not pass the proxy";
  EXPECT_THAT(run.am_log, HasSubstr("DIGEST-MD5: confidentiality (auth-conf) with cipher 3des"))
      << run.am_log;
  EXPECT_THAT(run.am_log, Not(HasSubstr("with cipher rc4"))) << run.am_log;
}

// The attack: the RM's challenge rewritten to offer only weak ciphers. The AM refuses to
// answer it, so it never registers and the job fails; no link under a weak cipher exists.
TEST(DigestDowngradeTest, AChallengeRewrittenToWeakCiphersIsRefusedAndTheJobFails) {
  for (const std::string weak : {"rc4-40", "rc4-40,des,rc4-56"}) {
    SCOPED_TRACE(weak);
    ChallengeRewritingProxy proxy(Cluster().scheduler_address(), weak);
    ASSERT_TRUE(proxy.Start().ok());
    JobRun run = SubmitThrough(proxy);
    proxy.Stop();
    ASSERT_FALSE(run.app.empty()) << run.out << run.err;
    EXPECT_NE(run.exit_code, 0) << run.out << run.err;
    EXPECT_THAT(run.err, HasSubstr("FAILED")) << run.err;
    EXPECT_THAT(run.err, Not(HasSubstr("SUCCEEDED"))) << run.err;
    EXPECT_GE(proxy.challenges(), 1) << "the AM's DIGEST-MD5 exchange did not pass the proxy";
    EXPECT_THAT(run.am_log, HasSubstr("only with ciphers this side refuses (" +
                                      absl::StrReplaceAll(weak, {{",", ", "}})))
        << run.am_log;
    EXPECT_THAT(run.am_log, Not(HasSubstr("DIGEST-MD5: confidentiality"))) << run.am_log;
    EXPECT_THAT(run.am_log, Not(HasSubstr("with cipher rc4"))) << run.am_log;
  }
}

// What the opt-in costs: with tony.rpc.digest-md5.ciphers=3des,rc4 the same proxy, offering
// only rc4, gets the AM's link under 128-bit RC4. This also shows that the proxy's rewrite
// reaches the AM and that the assertions above would see a downgrade.
TEST(DigestDowngradeTest, WithRc4OptedInAProxyCanDowngradeTheLinkToRc4) {
  ChallengeRewritingProxy proxy(Cluster().scheduler_address(), "rc4");
  ASSERT_TRUE(proxy.Start().ok());
  JobRun run = SubmitThrough(proxy, {"tony.rpc.digest-md5.ciphers=3des,rc4"});
  proxy.Stop();
  ASSERT_FALSE(run.app.empty()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err << run.am_log;
  EXPECT_GE(proxy.challenges(), 1);
  EXPECT_THAT(run.am_log,
              HasSubstr("DIGEST-MD5: confidentiality (auth-conf) with cipher rc4 (the server "
                        "offered rc4)"))
      << run.am_log;
}

}  // namespace
}  // namespace tony

// Copyright libtony authors.

#include "fake_ipc_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "hadoop/IpcConnectionContext.pb.h"
#include "hadoop/ProtobufRpcEngine2.pb.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/wire.h"

namespace tony::ipc::testing {

bool ReadFull(int fd, char* buf, size_t n) {
  while (n > 0) {
    ssize_t got = ::recv(fd, buf, n, 0);
    if (got <= 0) return false;
    buf += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

namespace {

using tony::hadoop::common::RpcResponseHeaderProto;

std::string ResponseFrame(int32_t call_id, RpcResponseHeaderProto::RpcStatusProto status,
                          const Reply& reply) {
  RpcResponseHeaderProto h;
  h.set_callid(static_cast<uint32_t>(call_id));
  h.set_status(status);
  h.set_serveripcversionnum(9);
  std::string body;
  if (status != RpcResponseHeaderProto::SUCCESS) {
    h.set_exceptionclassname(reply.exception_class);
    h.set_errormsg(reply.error_message);
    h.set_errordetail(status == RpcResponseHeaderProto::FATAL
                          ? RpcResponseHeaderProto::FATAL_UNKNOWN
                          : RpcResponseHeaderProto::ERROR_APPLICATION);
  }
  AppendDelimited(h, &body);
  if (status == RpcResponseHeaderProto::SUCCESS) {
    uint8_t varint[10];
    size_t n = 0;
    uint32_t v = static_cast<uint32_t>(reply.response.size());
    do {
      varint[n++] = static_cast<uint8_t>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      v >>= 7;
    } while (v != 0);
    body.append(reinterpret_cast<char*>(varint), n);
    body += reply.response;
  }
  uint32_t len = static_cast<uint32_t>(body.size());
  std::string frame = {static_cast<char>(len >> 24), static_cast<char>(len >> 16),
                       static_cast<char>(len >> 8), static_cast<char>(len)};
  return frame + body;
}

}  // namespace

FakeIpcServer::FakeIpcServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::listen(listen_fd_, 16);
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeIpcServer::~FakeIpcServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  DropConnections();
  // Serving threads may still add delayed-reply threads: join until none are left.
  while (true) {
    std::vector<std::thread> threads;
    {
      absl::MutexLock lock(&mu_);
      threads.swap(threads_);
    }
    if (threads.empty()) break;
    for (auto& t : threads) t.join();
  }
  absl::MutexLock lock(&mu_);
  for (int fd : fds_) ::close(fd);
}

std::string FakeIpcServer::address() const { return absl::StrCat("127.0.0.1:", port_); }

int FakeIpcServer::connections() const {
  absl::MutexLock lock(&mu_);
  return connections_;
}

int FakeIpcServer::pings() const {
  absl::MutexLock lock(&mu_);
  return pings_;
}

std::string FakeIpcServer::last_user() const {
  absl::MutexLock lock(&mu_);
  return last_user_;
}

std::string FakeIpcServer::last_context_protocol() const {
  absl::MutexLock lock(&mu_);
  return last_protocol_;
}

void FakeIpcServer::DropConnections() {
  absl::MutexLock lock(&mu_);
  for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
}

void FakeIpcServer::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    absl::MutexLock lock(&mu_);
    int index = connections_++;
    fds_.push_back(fd);
    threads_.emplace_back([this, fd, index] { Serve(fd, index); });
  }
}

void FakeIpcServer::Write(int fd, const std::string& frame) {
  absl::MutexLock lock(&write_mu_);
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void FakeIpcServer::Serve(int fd, int index) {
  char preamble[7];
  if (!ReadFull(fd, preamble, 7) || std::string(preamble, 4) != "hrpc" || preamble[4] != 9) {
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  while (true) {
    char len_bytes[4];
    if (!ReadFull(fd, len_bytes, 4)) {
      absl::MutexLock lock(&mu_);
      ++counts_.closed;
      break;
    }
    std::string body(DecodeFrameLength(len_bytes), '\0');
    if (!ReadFull(fd, body.data(), body.size())) break;
    absl::string_view in = body;
    tony::hadoop::common::RpcRequestHeaderProto header;
    if (!ConsumeDelimited(&in, &header).ok()) break;
    if (header.callid() == kConnectionContextCallId) {
      tony::hadoop::common::IpcConnectionContextProto ctx;
      if (!ConsumeDelimited(&in, &ctx).ok()) break;
      absl::MutexLock lock(&mu_);
      last_user_ = ctx.userinfo().effectiveuser();
      last_protocol_ = ctx.protocol();
      continue;
    }
    if (header.callid() == kPingCallId) {
      absl::MutexLock lock(&mu_);
      ++pings_;
      continue;
    }
    tony::hadoop::common::RequestHeaderProto engine;
    if (!ConsumeDelimited(&in, &engine).ok()) break;
    ServerCall call;
    call.connection = index;
    call.call_id = header.callid();
    call.retry_count = header.retrycount();
    call.client_id = header.clientid();
    call.method = engine.methodname();
    call.protocol = engine.declaringclassprotocolname();
    // The request message is varint-delimited: skip the length.
    size_t pos = 0;
    while (pos < in.size() && (static_cast<uint8_t>(in[pos]) & 0x80)) ++pos;
    call.request = std::string(in.substr(std::min(in.size(), pos + 1)));

    Reply reply = handler_(call);
    {
      absl::MutexLock lock(&mu_);
      ++counts_.calls;
    }
    if (reply.kind == Reply::kNone) continue;
    if (reply.kind == Reply::kClose) {
      ::shutdown(fd, SHUT_RDWR);
      break;
    }
    RpcResponseHeaderProto::RpcStatusProto status =
        reply.kind == Reply::kSuccess ? RpcResponseHeaderProto::SUCCESS
        : reply.kind == Reply::kError ? RpcResponseHeaderProto::ERROR
                                      : RpcResponseHeaderProto::FATAL;
    std::string frame = ResponseFrame(call.call_id, status, reply);
    if (reply.delay > absl::ZeroDuration()) {
      absl::MutexLock lock(&mu_);
      threads_.emplace_back([this, fd, frame, delay = reply.delay] {
        absl::SleepFor(delay);  // the late answer under test, not a wait for something
        Write(fd, frame);
        absl::MutexLock lock(&mu_);
        ++counts_.delayed_replies;
      });
      continue;
    }
    Write(fd, frame);
    if (reply.kind == Reply::kFatal) {
      ::shutdown(fd, SHUT_RDWR);
      break;
    }
  }
}

bool FakeIpcServer::WaitFor(const std::function<bool(const Counts&)>& done,
                            absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto holds = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done(counts_); };
  return mu_.AwaitWithTimeout(absl::Condition(&holds), timeout);
}

}  // namespace tony::ipc::testing

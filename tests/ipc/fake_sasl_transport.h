// Copyright libtony authors.
//
// A SaslTransport whose server answers the client's NEGOTIATE with one DIGEST-MD5 challenge
// (TOKEN auth) and then stops: enough to see what the client answers to that challenge.
//
// Thread-compatible: one exchange on one thread.

#ifndef TONY_TESTS_IPC_FAKE_SASL_TRANSPORT_H_
#define TONY_TESTS_IPC_FAKE_SASL_TRANSPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/sasl.h"

namespace tony::ipc {

class OneChallengeTransport : public SaslTransport {
 public:
  explicit OneChallengeTransport(std::string challenge) : challenge_(std::move(challenge)) {}

  absl::Status Send(const tony::hadoop::common::RpcSaslProto& m) override {
    sent_.push_back(m);
    return absl::OkStatus();
  }
  // The NEGOTIATE with the challenge after the client's first message; Unavailable after that.
  absl::StatusOr<tony::hadoop::common::RpcSaslProto> Receive() override {
    using tony::hadoop::common::RpcSaslProto;
    if (sent_.size() != 1) return absl::UnavailableError("the fake server stops here");
    RpcSaslProto reply;
    reply.set_state(RpcSaslProto::NEGOTIATE);
    RpcSaslProto::SaslAuth* a = reply.add_auths();
    a->set_method("TOKEN");
    a->set_mechanism("DIGEST-MD5");
    a->set_protocol("");
    a->set_serverid("default");
    a->set_challenge(challenge_);
    return reply;
  }
  // What the client sent: its NEGOTIATE, then its INITIATE (the answer) if it answered.
  const std::vector<tony::hadoop::common::RpcSaslProto>& sent() const { return sent_; }

 private:
  const std::string challenge_;
  std::vector<tony::hadoop::common::RpcSaslProto> sent_;
};

}  // namespace tony::ipc

#endif  // TONY_TESTS_IPC_FAKE_SASL_TRANSPORT_H_

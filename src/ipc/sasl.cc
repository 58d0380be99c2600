// Copyright libtony authors.

#include "ipc/sasl.h"

#include <gsasl.h>

#include "absl/base/call_once.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "ipc/kerberos.h"

namespace tony::ipc {
namespace {

using tony::hadoop::common::RpcSaslProto;

// One libgsasl context for the process, libtony's own or the host's (tony/init.h); sessions
// are per mechanism instance. Starting sessions is serialized because the context is shared.
struct GsaslContext {
  Gsasl* ctx = nullptr;
  int init_rc = GSASL_OK;
  absl::Mutex mu;
};

ABSL_CONST_INIT absl::Mutex context_mu(absl::kConstInit);
GsaslContext* context ABSL_GUARDED_BY(context_mu) = nullptr;  // never freed
bool context_is_ours ABSL_GUARDED_BY(context_mu) = false;

GsaslContext& Context() {
  absl::MutexLock lock(&context_mu);
  if (context == nullptr) {
    context = new GsaslContext;
    context->init_rc = gsasl_init(&context->ctx);
    context_is_ours = true;
  }
  return *context;
}

absl::Status GsaslError(absl::string_view what, int rc) {
  return absl::UnauthenticatedError(
      absl::StrCat(what, ": ", gsasl_strerror_name(rc), " (", gsasl_strerror(rc), ")"));
}

class GsaslDigestMd5 : public SaslMechanism {
 public:
  GsaslDigestMd5() = default;
  GsaslDigestMd5(const GsaslDigestMd5&) = delete;
  GsaslDigestMd5& operator=(const GsaslDigestMd5&) = delete;
  ~GsaslDigestMd5() override {
    if (session_ != nullptr) gsasl_finish(session_);
  }

  absl::Status Start(absl::string_view username, absl::string_view password,
                     absl::string_view service, absl::string_view host) {
    GsaslContext& c = Context();
    if (c.init_rc != GSASL_OK) return GsaslError("gsasl_init", c.init_rc);
    {
      absl::MutexLock lock(&c.mu);
      int rc = gsasl_client_start(c.ctx, "DIGEST-MD5", &session_);
      if (rc != GSASL_OK) return GsaslError("gsasl_client_start(DIGEST-MD5)", rc);
    }
    const std::pair<Gsasl_property, std::string> props[] = {
        {GSASL_AUTHID, std::string(username)},
        {GSASL_PASSWORD, std::string(password)},
        {GSASL_SERVICE, std::string(service)},
        {GSASL_HOSTNAME, std::string(host)},
    };
    // No QOP property: libgsasl's client always answers qop=auth, the only protection level
    // after which Hadoop wraps nothing (a server that insists on more refuses us cleanly).
    for (const auto& [prop, value] : props) {
      int rc = gsasl_property_set(session_, prop, value.c_str());
      if (rc != GSASL_OK) return GsaslError("gsasl_property_set", rc);
    }
    return absl::OkStatus();
  }

  absl::string_view name() const override { return "DIGEST-MD5"; }

  absl::StatusOr<std::string> Step(absl::string_view server_message) override {
    if (complete_) return absl::FailedPreconditionError("DIGEST-MD5 exchange already complete");
    char* out = nullptr;
    size_t out_len = 0;
    int rc = gsasl_step(session_, server_message.data(), server_message.size(), &out, &out_len);
    std::string reply = out != nullptr ? std::string(out, out_len) : std::string();
    gsasl_free(out);
    if (rc == GSASL_OK) {
      complete_ = true;
    } else if (rc != GSASL_NEEDS_MORE) {
      return GsaslError("DIGEST-MD5", rc);
    }
    return reply;
  }

  bool complete() const override { return complete_; }

 private:
  Gsasl_session* session_ = nullptr;
  bool complete_ = false;
};

RpcSaslProto::SaslAuth EchoOffer(const RpcSaslProto::SaslAuth& offer) {
  // The server matches the INITIATE's auth against its own list with protobuf equality, field
  // presence included: copy what it sent, minus the challenge.
  RpcSaslProto::SaslAuth echo = offer;
  echo.clear_challenge();
  return echo;
}

absl::string_view StateName(RpcSaslProto::SaslState state) {
  return RpcSaslProto::SaslState_Name(state);
}

}  // namespace

absl::string_view AuthMethodName(AuthMethod method) {
  switch (method) {
    case AuthMethod::kSimple:
      return "SIMPLE";
    case AuthMethod::kToken:
      return "TOKEN";
    case AuthMethod::kKerberos:
      return "KERBEROS";
  }
  return "UNKNOWN";
}

absl::StatusOr<std::unique_ptr<SaslMechanism>> NewDigestMd5Client(absl::string_view username,
                                                                  absl::string_view password,
                                                                  absl::string_view service,
                                                                  absl::string_view host) {
  auto mech = std::make_unique<GsaslDigestMd5>();
  TONY_RETURN_IF_ERROR(mech->Start(username, password, service, host));
  return std::unique_ptr<SaslMechanism>(std::move(mech));
}

std::string TokenSaslUsername(const Token& token) { return absl::Base64Escape(token.identifier); }

std::string TokenSaslPassword(const Token& token) { return absl::Base64Escape(token.password); }

absl::StatusOr<std::unique_ptr<SaslMechanism>> NewSaslMechanism(const SaslOffer& offer,
                                                                const ClientAuth& auth) {
  if (offer.method != AuthMethodName(auth.method)) {
    return absl::UnimplementedError(
        absl::StrCat("offer ", offer.method, " does not match ", AuthMethodName(auth.method)));
  }
  switch (auth.method) {
    case AuthMethod::kToken:
      if (offer.mechanism != "DIGEST-MD5") break;
      if (!auth.token.has_value()) return absl::InvalidArgumentError("TOKEN auth without a token");
      return NewDigestMd5Client(TokenSaslUsername(*auth.token), TokenSaslPassword(*auth.token),
                                offer.protocol, offer.server_id);
    case AuthMethod::kKerberos:
      if (offer.mechanism != "GSSAPI") break;
      if (auth.server_principal.empty()) {
        return absl::InvalidArgumentError("KERBEROS auth without the server's principal");
      }
      return NewGssapiClient(auth.server_principal, offer);
    case AuthMethod::kSimple:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("no SASL mechanism for ", offer.method, "/", offer.mechanism));
}

absl::StatusOr<SaslOffer> NegotiateSasl(const ClientAuth& auth, SaslTransport* transport,
                                        std::unique_ptr<SaslSecurityLayer>* layer) {
  if (auth.method == AuthMethod::kSimple) {
    return absl::InvalidArgumentError("SIMPLE auth uses no SASL exchange");
  }
  RpcSaslProto negotiate;
  negotiate.set_state(RpcSaslProto::NEGOTIATE);
  TONY_RETURN_IF_ERROR(transport->Send(negotiate));
  TONY_ASSIGN_OR_RETURN(RpcSaslProto reply, transport->Receive());
  if (reply.state() == RpcSaslProto::SUCCESS) {
    // A SIMPLE-only server answers NEGOTIATE with SUCCESS: it would not check our token.
    return absl::FailedPreconditionError(absl::StrCat("server accepts only SIMPLE authentication; ",
                                                      AuthMethodName(auth.method), " required"));
  }
  if (reply.state() != RpcSaslProto::NEGOTIATE) {
    return absl::InternalError(
        absl::StrCat("SASL: expected NEGOTIATE from server, got ", StateName(reply.state())));
  }

  std::unique_ptr<SaslMechanism> mech;
  const RpcSaslProto::SaslAuth* chosen = nullptr;
  SaslOffer offer;
  std::vector<std::string> offered;
  absl::Status last_error;
  for (const auto& a : reply.auths()) {
    offered.push_back(absl::StrCat(a.method(), "/", a.mechanism()));
    if (chosen != nullptr) continue;
    SaslOffer candidate{a.method(), a.mechanism(), a.protocol(), a.serverid()};
    absl::StatusOr<std::unique_ptr<SaslMechanism>> m = NewSaslMechanism(candidate, auth);
    if (!m.ok()) {
      last_error = m.status();
      continue;
    }
    mech = *std::move(m);
    chosen = &a;
    offer = std::move(candidate);
  }
  if (chosen == nullptr) {
    if (!last_error.ok() && last_error.code() != absl::StatusCode::kUnimplemented) {
      return last_error;
    }
    return absl::UnauthenticatedError(
        absl::StrCat("server offers no usable authentication for ", AuthMethodName(auth.method),
                     " (offered: ", absl::StrJoin(offered, ", "), ")"));
  }

  RpcSaslProto initiate;
  initiate.set_state(RpcSaslProto::INITIATE);
  *initiate.add_auths() = EchoOffer(*chosen);
  TONY_ASSIGN_OR_RETURN(std::string first, mech->Step(chosen->challenge()));
  initiate.set_token(first);
  TONY_RETURN_IF_ERROR(transport->Send(initiate));

  // DIGEST-MD5 finishes in one more round; allow a few for other mechanisms.
  for (int round = 0; round < 8; ++round) {
    TONY_ASSIGN_OR_RETURN(RpcSaslProto msg, transport->Receive());
    switch (msg.state()) {
      case RpcSaslProto::SUCCESS:
        if (!mech->complete()) {
          // The final message (DIGEST-MD5's rspauth) proves the server knew the password too.
          TONY_ASSIGN_OR_RETURN(std::string ignored, mech->Step(msg.token()));
          (void)ignored;
        }
        if (!mech->complete()) {
          return absl::UnauthenticatedError(
              absl::StrCat("SASL ", mech->name(), ": server reported SUCCESS too early"));
        }
        if (std::unique_ptr<SaslSecurityLayer> l = mech->TakeSecurityLayer(); l != nullptr) {
          if (layer == nullptr) {
            return absl::UnimplementedError(absl::StrCat("SASL ", mech->name(), " negotiated ",
                                                         l->qop(),
                                                         " but this caller cannot wrap messages"));
          }
          *layer = std::move(l);
        }
        return offer;
      case RpcSaslProto::CHALLENGE: {
        TONY_ASSIGN_OR_RETURN(std::string response, mech->Step(msg.token()));
        RpcSaslProto out;
        out.set_state(RpcSaslProto::RESPONSE);
        out.set_token(response);
        TONY_RETURN_IF_ERROR(transport->Send(out));
        break;
      }
      default:
        return absl::InternalError(
            absl::StrCat("SASL: unexpected ", StateName(msg.state()), " from server"));
    }
  }
  return absl::InternalError("SASL: too many rounds");
}

absl::Status UseHostGsaslContext(void* host_context) {
  if (host_context == nullptr) return absl::InvalidArgumentError("no libgsasl context");
  absl::MutexLock lock(&context_mu);
  if (context != nullptr) {
    return absl::FailedPreconditionError(context_is_ours
                                             ? "libtony has made its own libgsasl context already"
                                             : "libtony uses a host's libgsasl context already");
  }
  context = new GsaslContext;
  context->ctx = static_cast<Gsasl*>(host_context);
  return absl::OkStatus();
}

bool MadeOwnGsaslContext() {
  absl::MutexLock lock(&context_mu);
  return context_is_ours;
}

void* GsaslContextInUse() {
  absl::MutexLock lock(&context_mu);
  return context != nullptr ? context->ctx : nullptr;
}

}  // namespace tony::ipc

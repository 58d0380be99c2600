// Copyright libtony authors.

#include "ipc/sasl.h"

#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "ipc/digest_md5.h"
#include "ipc/kerberos.h"

namespace tony::ipc {
namespace {

using tony::hadoop::common::RpcSaslProto;

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

absl::string_view ProtectionName(Protection p) {
  switch (p) {
    case Protection::kAuthentication:
      return "authentication";
    case Protection::kIntegrity:
      return "integrity";
    case Protection::kPrivacy:
      return "privacy";
  }
  return "authentication";
}

absl::string_view ProtectionQop(Protection p) {
  switch (p) {
    case Protection::kAuthentication:
      return "auth";
    case Protection::kIntegrity:
      return "auth-int";
    case Protection::kPrivacy:
      return "auth-conf";
  }
  return "auth";
}

absl::StatusOr<Protection> MinProtection(absl::string_view hadoop_rpc_protection) {
  std::optional<Protection> weakest;
  for (absl::string_view level :
       absl::StrSplit(hadoop_rpc_protection, ',', absl::SkipWhitespace())) {
    level = absl::StripAsciiWhitespace(level);
    Protection p;
    if (absl::EqualsIgnoreCase(level, "authentication")) {
      p = Protection::kAuthentication;
    } else if (absl::EqualsIgnoreCase(level, "integrity")) {
      p = Protection::kIntegrity;
    } else if (absl::EqualsIgnoreCase(level, "privacy")) {
      p = Protection::kPrivacy;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("hadoop.rpc.protection: unknown level '", level,
                       "' (use authentication, integrity or privacy)"));
    }
    if (!weakest.has_value() || p < *weakest) weakest = p;
  }
  return weakest.value_or(Protection::kAuthentication);
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
      {
        DigestMd5Options o;
        o.username = TokenSaslUsername(*auth.token);
        o.password = TokenSaslPassword(*auth.token);
        o.service = offer.protocol;
        o.host = offer.server_id;
        o.min_protection = auth.min_protection;
        o.ciphers = auth.digest_ciphers;
        return NewDigestMd5Mechanism(std::move(o));
      }
    case AuthMethod::kKerberos:
      if (offer.mechanism != "GSSAPI") break;
      if (auth.server_principal.empty()) {
        return absl::InvalidArgumentError("KERBEROS auth without the server's principal");
      }
      return NewGssapiClient(auth.server_principal, offer, auth.min_protection,
                             auth.kerberos_login);
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

}  // namespace tony::ipc

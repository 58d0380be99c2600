// Copyright libtony authors.
//
// SpnegoAcceptor: the server's side of HTTP SPNEGO (RFC 4559) on MIT's GSS-API, for the history
// server on a Kerberos cluster. Its keys come from a keytab of its own (GSS-API's credential
// store: the process's default keytab and KRB5_KTNAME stay untouched), for one principal
// ("HTTP/host@REALM", as Hadoop's web endpoints use) or any principal the keytab holds.
//
//   TONY_ASSIGN_OR_RETURN(auto acceptor, SpnegoAcceptor::Create(keytab, "HTTP/h@REALM"));
//   absl::StatusOr<SpnegoAcceptor::Accepted> who = acceptor->Accept(authorization_header);
//
// Only one-round exchanges are accepted (Kerberos under SPNEGO completes in one): HTTP keeps no
// context between requests. Anonymous initiators (RFC 6112 anonymous PKINIT: anyone can get a
// ticket as WELLKNOWN/ANONYMOUS) are refused: a sign-in must name a user.
//
// Thread-safe: Accept may run on several threads at once (each exchange has its own context).

#ifndef TONY_IPC_SPNEGO_ACCEPTOR_H_
#define TONY_IPC_SPNEGO_ACCEPTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony::ipc {

class SpnegoAcceptor {
 public:
  struct Accepted {
    std::string principal;  // the client's: "alice@EXAMPLE.COM"
    std::string reply;      // for WWW-Authenticate: "Negotiate <token>", or "" when none
  };

  // `principal` empty: any principal in `keytab`. FailedPrecondition naming the keytab when it
  // cannot be read or holds no key for `principal`.
  static absl::StatusOr<std::unique_ptr<SpnegoAcceptor>> Create(const std::string& keytab,
                                                                const std::string& principal);
  ~SpnegoAcceptor();
  SpnegoAcceptor(const SpnegoAcceptor&) = delete;
  SpnegoAcceptor& operator=(const SpnegoAcceptor&) = delete;

  // `authorization`: the request's Authorization header ("Negotiate <base64 token>").
  // Unauthenticated with one line naming the cause for anything else, a token that does not
  // verify, one needing another round, or an anonymous initiator (CheckSpnegoInitiator).
  absl::StatusOr<Accepted> Accept(absl::string_view authorization) const;

 private:
  struct Credential;
  explicit SpnegoAcceptor(std::unique_ptr<Credential> credential);
  const std::unique_ptr<Credential> credential_;
};

// Whether an initiator GSS-API accepted may sign in: UNAUTHENTICATED for an anonymous one --
// GSS_C_ANON_FLAG in the context's flags (`ret_flags`), a name of the anonymous type
// (`anonymous_name_type`), or the principal WELLKNOWN/ANONYMOUS in any realm -- and for an
// empty principal. OK otherwise.
absl::Status CheckSpnegoInitiator(absl::string_view principal, uint32_t ret_flags,
                                  bool anonymous_name_type);

}  // namespace tony::ipc

#endif  // TONY_IPC_SPNEGO_ACCEPTOR_H_

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
// context between requests.
//
// Thread-safe: Accept may run on several threads at once (each exchange has its own context).

#ifndef TONY_IPC_SPNEGO_ACCEPTOR_H_
#define TONY_IPC_SPNEGO_ACCEPTOR_H_

#include <memory>
#include <string>

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
  // verify, or one needing another round.
  absl::StatusOr<Accepted> Accept(absl::string_view authorization) const;

 private:
  struct Credential;
  explicit SpnegoAcceptor(std::unique_ptr<Credential> credential);
  const std::unique_ptr<Credential> credential_;
};

}  // namespace tony::ipc

#endif  // TONY_IPC_SPNEGO_ACCEPTOR_H_

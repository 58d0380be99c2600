// Copyright libtony authors.
//
// Kerberos for Hadoop clients, on MIT's GSS-API and libkrb5:
//  - login: the user's ticket cache (KRB5CCNAME, kinit) by default, or a keytab read in-process
//    into a MEMORY cache of that login's own (KerberosLogin): two logins in one process (two
//    Submitters, an Airflow triggerer's two connections) each act as their own principal;
//  - server principals from configuration ("rm/_HOST@REALM") with _HOST replaced as Hadoop
//    replaces it: the lower-cased canonical name of the server's address;
//  - the SASL GSSAPI mechanism (RFC 4752) with its security layer, for Hadoop IPC;
//  - every GSS-API/Kerberos error turned into one line naming the cause and the fix.
//
// Thread-safety: the free functions may run concurrently; KerberosLogin is thread-safe.

#ifndef TONY_IPC_KERBEROS_H_
#define TONY_IPC_KERBEROS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipc/sasl.h"

namespace tony::ipc {

// Who the process is in Kerberos terms, from its default credentials.
struct KerberosIdentity {
  std::string principal;  // "alice@EXAMPLE.COM"
  absl::Time expires;     // of the TGT (or the keytab login's first ticket)
};

// Checks that the process has usable Kerberos credentials (the default ticket cache, or what
// LoginFromKeytab put in place) and returns whose. Unauthenticated with a one-line cause
// ("no Kerberos ticket ...", "ticket expired ...") otherwise.
absl::StatusOr<KerberosIdentity> CurrentKerberosIdentity();

// A keytab login (as kinit -kt would do) into a MEMORY ticket cache of its own, never the
// process's default: the process environment (KRB5CCNAME) is left alone, so other logins and
// the user's own ticket cache are unaffected. GSS-API renews the tickets from the keytab when
// they near their end (MIT's client keytab), so a long-lived holder never has to log in again.
// Nothing is written to disk; the cache is destroyed with the last reference.
// Thread-safe.
class KerberosLogin {
 public:
  static absl::StatusOr<std::shared_ptr<const KerberosLogin>> FromKeytab(
      absl::string_view principal, absl::string_view keytab);
  ~KerberosLogin();
  KerberosLogin(const KerberosLogin&) = delete;
  KerberosLogin& operator=(const KerberosLogin&) = delete;

  const std::string& principal() const { return principal_; }
  // "MEMORY:libtony-<pid>-<n>": for an exchange that takes the default credentials
  // (http::Request::gss_ccache).
  const std::string& ccache() const { return ccache_; }
  const std::string& keytab() const { return keytab_; }  // "FILE:/path"
  // The login's identity, with tickets fresh from the keytab when the cache's are near their
  // end. Call before an exchange that uses ccache() without this login's credentials.
  absl::StatusOr<KerberosIdentity> Refresh() const;
  // ccache(), its tickets refreshed first: what a SPNEGO transfer on this login uses.
  absl::StatusOr<std::string> FreshCcache() const;

 private:
  KerberosLogin(std::string principal, std::string keytab, std::string ccache)
      : principal_(std::move(principal)), keytab_(std::move(keytab)), ccache_(std::move(ccache)) {}
  const std::string principal_;
  const std::string keytab_;
  const std::string ccache_;
};

// "service/_HOST@REALM" with _HOST replaced by the lower-cased canonical name of `host` (what
// Hadoop's SecurityUtil.getServerPrincipal does with the server's address); other principals
// unchanged. `canonical_host` overrides the DNS lookup (tests).
std::string ResolveServerPrincipal(absl::string_view pattern, absl::string_view host,
                                   absl::string_view canonical_host = "");

// The canonical name of `host` (forward then reverse lookup), lower-cased; `host` itself,
// lower-cased, when a lookup fails.
std::string CanonicalHostName(absl::string_view host);

// The first component of a principal ("rm" of "rm/host@REALM"; "alice" of "alice@REALM").
std::string PrincipalShortName(absl::string_view principal);

// One place for GSS-API errors: major/minor status to a one-line Unauthenticated (or
// Unavailable, for an unreachable KDC) status naming the cause and the fix. `server` is the
// service principal involved, if any.
absl::Status KerberosError(uint32_t major, uint32_t minor, absl::string_view what,
                           absl::string_view server = "");

// The status of one per-message token (gss_unwrap, gss_verify_mic): a GSS error through
// KerberosError; and, for a token that did verify, the supplementary bits DUPLICATE (replayed),
// OLD, UNSEQ (out of order) and GAP (an earlier one missing) as DATA_LOSS naming the cause: a
// SASL layer's stream is complete and in order, so GSS-API's "valid, but" means an attacker
// replayed, reordered or dropped a message. OK otherwise.
absl::Status GssMessageStatus(uint32_t major, uint32_t minor, absl::string_view what);

// GSS-API's own text for a major/minor status ("No credentials were supplied ...; No key table
// entry found for HTTP/h@R"): for a server's log, where KerberosError's client advice (kinit,
// --principal) would mislead.
std::string GssStatusText(uint32_t major, uint32_t minor);

// SASL GSSAPI client (RFC 4752) for `server_principal` ("rm/host@REALM", _HOST resolved) with
// `login`'s credentials, or the process's default ones when `login` is null. The offer's
// protocol/serverId must name the same service and host (Hadoop's client checks the same), else a
// "server principal mismatch" error. After completion TakeSecurityLayer() returns the
// integrity/confidentiality layer when one was negotiated (the strongest the server offers); a
// server offering only layers weaker than `min_protection` is refused (FAILED_PRECONDITION naming
// both).
absl::StatusOr<std::unique_ptr<SaslMechanism>> NewGssapiClient(
    absl::string_view server_principal, const SaslOffer& offer,
    Protection min_protection = Protection::kAuthentication,
    std::shared_ptr<const KerberosLogin> login = nullptr);

}  // namespace tony::ipc

#endif  // TONY_IPC_KERBEROS_H_

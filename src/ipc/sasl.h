// Copyright libtony authors.
//
// Authentication for Hadoop RPC. SIMPLE sends no SASL at all (the user name rides in the
// connection context). TOKEN runs Hadoop's SASL exchange (RpcSaslProto frames, callId -33):
//
//   client NEGOTIATE -> server NEGOTIATE (offers: method, mechanism, protocol, serverId,
//   first challenge) -> client INITIATE (the chosen offer echoed without its challenge, plus the
//   mechanism's response) -> server CHALLENGE/RESPONSE rounds -> server SUCCESS.
//
// Mechanisms sit behind SaslMechanism: DIGEST-MD5 (ipc/digest_md5.h, libtony's own) serves
// TOKEN auth, GSSAPI (MIT GSS-API, ipc/kerberos.h) KERBEROS auth. A mechanism that negotiates
// integrity or confidentiality (hadoop.rpc.protection integrity/privacy) hands the connection a
// SaslSecurityLayer: from then on every frame either way travels inside RpcSaslProto WRAP
// messages (callId -33) whose token is the wrapped bytes of the original frames.
//
// Thread-safety: NegotiateSasl and the factories may run concurrently; a SaslMechanism or
// SaslTransport serves one exchange on one thread.

#ifndef TONY_IPC_SASL_H_
#define TONY_IPC_SASL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/token.h"

namespace tony::ipc {

// Hadoop's SaslRpcServer.AuthMethod values that matter to clients.
enum class AuthMethod {
  kSimple,    // no SASL; user name in the connection context
  kToken,     // SASL DIGEST-MD5 with a token (AMRMToken, NMToken, delegation tokens)
  kKerberos,  // SASL GSSAPI with the process's Kerberos credentials
};

// The method's name as it appears in SaslAuth.method ("SIMPLE", "TOKEN", "KERBEROS").
absl::string_view AuthMethodName(AuthMethod method);

// hadoop.rpc.protection's levels, weakest first: what a SASL layer protects after authentication.
enum class Protection {
  kAuthentication,  // qop auth: nothing after the exchange
  kIntegrity,       // qop auth-int: every message signed
  kPrivacy,         // qop auth-conf: every message signed and encrypted
};
// "authentication", "integrity", "privacy".
absl::string_view ProtectionName(Protection p);
// "auth", "auth-int", "auth-conf".
absl::string_view ProtectionQop(Protection p);
// The weakest level a hadoop.rpc.protection value lists ("privacy,authentication" ->
// authentication); empty -> authentication. INVALID_ARGUMENT names an unknown level.
absl::StatusOr<Protection> MinProtection(absl::string_view hadoop_rpc_protection);

class KerberosLogin;  // ipc/kerberos.h

// How a client authenticates on one connection. A value type.
struct ClientAuth {
  AuthMethod method = AuthMethod::kSimple;
  // SIMPLE: the effective user sent in the connection context.
  std::string user;
  // TOKEN: the token whose identifier and password feed DIGEST-MD5.
  std::optional<Token> token;
  // KERBEROS: the server's principal from configuration, e.g. "rm/_HOST@REALM"; the connection
  // replaces _HOST with the canonical name of the host it connects to.
  std::string server_principal;
  // KERBEROS: whose credentials: a keytab login of this client's own. Default: null, the
  // process's default credentials (the ticket cache, KRB5CCNAME / kinit).
  std::shared_ptr<const KerberosLogin> kerberos_login;
  // TOKEN and KERBEROS: the weakest protection accepted (the weakest level of this side's
  // hadoop.rpc.protection); a server offering only weaker ones is refused. The strongest the
  // server offers is taken. Default: authentication.
  Protection min_protection = Protection::kAuthentication;
  // TOKEN: the DIGEST-MD5 ciphers accepted for auth-conf (DigestMd5Options::ciphers; the
  // configuration key tony.rpc.digest-md5.ciphers, see ParseDigestCiphers). Default: 3des only.
  std::vector<std::string> digest_ciphers = {"3des"};
};

// One authentication offered by the server in its NEGOTIATE reply.
struct SaslOffer {
  std::string method;     // "TOKEN"
  std::string mechanism;  // "DIGEST-MD5"
  std::string protocol;   // SASL service name ("" for tokens)
  std::string server_id;  // SASL server name ("default" for tokens)
};

// The protection a mechanism negotiated for the rest of the connection. Thread-safe (the
// connection's writers and its reader use it at once).
class SaslSecurityLayer {
 public:
  virtual ~SaslSecurityLayer() = default;
  // "auth-int" or "auth-conf".
  virtual absl::string_view qop() const = 0;
  virtual absl::StatusOr<std::string> Wrap(absl::string_view plain) = 0;
  virtual absl::StatusOr<std::string> Unwrap(absl::string_view wrapped) = 0;
  // The most plain bytes one Wrap may carry (the server's receive buffer).
  virtual size_t max_wrap_input() const = 0;
};

// A client-side SASL mechanism. Not thread-safe: one exchange on one connection.
class SaslMechanism {
 public:
  virtual ~SaslMechanism() = default;
  virtual absl::string_view name() const = 0;
  // Consumes one server message (a challenge, or the final one carried by SUCCESS) and returns
  // the client's reply (possibly empty).
  virtual absl::StatusOr<std::string> Step(absl::string_view server_message) = 0;
  // True once the mechanism has verified the server's last message.
  virtual bool complete() const = 0;
  // After completion: the security layer, if one was negotiated (nullptr for "auth").
  virtual std::unique_ptr<SaslSecurityLayer> TakeSecurityLayer() { return nullptr; }
};

// DIGEST-MD5 credentials derived from a token, as Hadoop's SaslRpcClient makes them: standard
// padded base64 of the identifier and of the password.
std::string TokenSaslUsername(const Token& token);
std::string TokenSaslPassword(const Token& token);

// Builds the mechanism for an offer the auth can satisfy (Unimplemented otherwise).
absl::StatusOr<std::unique_ptr<SaslMechanism>> NewSaslMechanism(const SaslOffer& offer,
                                                                const ClientAuth& auth);

// Moves RpcSaslProto messages to and from the server (the connection frames them).
class SaslTransport {
 public:
  virtual ~SaslTransport() = default;
  virtual absl::Status Send(const tony::hadoop::common::RpcSaslProto& message) = 0;
  // The next SASL reply; a server-side failure (FATAL response) comes back as its status.
  virtual absl::StatusOr<tony::hadoop::common::RpcSaslProto> Receive() = 0;
};

// Runs the exchange for auth (which must not be SIMPLE) until the server reports SUCCESS.
// Returns the offer that was used; the negotiated security layer, if any, goes to *layer
// (which may be null only when the caller accepts no layer: one negotiated is then an error).
absl::StatusOr<SaslOffer> NegotiateSasl(const ClientAuth& auth, SaslTransport* transport,
                                        std::unique_ptr<SaslSecurityLayer>* layer = nullptr);

}  // namespace tony::ipc

#endif  // TONY_IPC_SASL_H_

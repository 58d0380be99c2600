// Copyright libtony authors.
//
// DIGEST-MD5 (RFC 2831), the client side of Hadoop's token authentication, with both security
// layers: integrity (qop auth-int: an HMAC-MD5 and a sequence number on every message) and
// confidentiality (qop auth-conf: the same, encrypted with 3des, or 128-bit rc4 when allowed).
// A Hadoop server configured with hadoop.rpc.protection=privacy offers only auth-conf; an AM
// that answered with qop=auth (as libgsasl, which has no confidentiality layer, did) sent every
// container launch, with the job's credentials, in the clear.
//
// The client takes the strongest protection the server offers, never less than its minimum
// (the weakest level in its own hadoop.rpc.protection). The challenge is not authenticated: an
// on-path attacker can rewrite its cipher list, so the client never takes the strongest cipher
// "offered" on trust. It accepts 3des (what Java clients pick) and, only when configured
// (tony.rpc.digest-md5.ciphers=3des,rc4), 128-bit rc4; des, rc4-56 and rc4-40 are never used
// and refused even when configured. A server offering auth-conf with none of those fails the
// exchange, unless the minimum protection allows a weaker qop the server also offers (which an
// attacker could have forced anyway by striking auth-conf). The chosen cipher is logged at
// INFO, once per connection. RC4 comes from OpenSSL's legacy provider, loaded into a private
// library context so the host's OpenSSL state is untouched. The server's rspauth is checked:
// the exchange completes only against a server that knew the token's password.
//
// Verified against RFC 2831's examples and against Java 17's DigestMD5Server byte for byte
// (tests/ipc/digest_md5_test.cc).
//
// Thread-safety: a mechanism serves one exchange on one thread. The layer it hands over is
// thread-safe: Wrap and Unwrap may run at once (one writer, one reader), each in stream order.

#ifndef TONY_IPC_DIGEST_MD5_H_
#define TONY_IPC_DIGEST_MD5_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipc/sasl.h"

namespace tony::ipc {

// A parsed digest-challenge (RFC 2831 2.1.1): directive -> values (realm, qop and cipher may
// carry several; a directive given twice keeps both). Quoted strings are unquoted.
struct DigestChallenge {
  std::vector<std::string> realms;
  std::string nonce;
  std::vector<std::string> qops;     // "auth", "auth-int", "auth-conf"; empty means {"auth"}
  std::vector<std::string> ciphers;  // for auth-conf
  int64_t maxbuf = 65536;            // the server's receive buffer
  bool utf8 = false;                 // charset=utf-8
  bool rspauth = false;              // the final message: rspauth=...
  std::string rspauth_value;
};

// Parses a challenge (or the server's final rspauth message). INVALID_ARGUMENT on malformed
// input: an unterminated quote, a missing '=', a nonce given twice, a bad maxbuf.
absl::StatusOr<DigestChallenge> ParseDigestChallenge(absl::string_view text);

struct DigestMd5Options {
  std::string username;
  std::string password;
  // The digest-uri is "<service>/<host>" (Hadoop tokens: "" and "default").
  std::string service;
  std::string host;
  // The weakest protection accepted. Default: authentication.
  Protection min_protection = Protection::kAuthentication;
  // Fixed client nonce, for known-answer tests. Default: empty (random, 30 bytes of base64).
  std::string cnonce;
  // Ciphers this client accepts for auth-conf: "3des" and "rc4" (128-bit) only; 3des is
  // preferred whenever the server offers it. des, rc4-56, rc4-40 or an unknown name make
  // NewDigestMd5Mechanism fail (INVALID_ARGUMENT). Default: 3des only.
  std::vector<std::string> ciphers = {"3des"};
};

// The configuration key (Hadoop-style, e.g. in core-site.xml) for the ciphers above: a comma
// list of 3des and rc4, e.g. "3des,rc4" to also accept 128-bit RC4. Unset or empty: 3des only.
inline constexpr char kDigestCiphersKey[] = "tony.rpc.digest-md5.ciphers";

// Parses a kDigestCiphersKey value into DigestMd5Options::ciphers ("3des" first). Empty means
// {"3des"}. INVALID_ARGUMENT naming the key for des, rc4-56, rc4-40 (too weak, never used)
// and for unknown names.
absl::StatusOr<std::vector<std::string>> ParseDigestCiphers(absl::string_view value);

// The client mechanism. Its first Step takes the challenge and returns the response; its second
// takes the server's rspauth (carried by Hadoop's SUCCESS) and completes the exchange.
absl::StatusOr<std::unique_ptr<SaslMechanism>> NewDigestMd5Mechanism(DigestMd5Options options);

// Whether this machine's OpenSSL provides `cipher` ("3des" or "rc4"; false for any other).
bool DigestCipherAvailable(absl::string_view cipher);

}  // namespace tony::ipc

#endif  // TONY_IPC_DIGEST_MD5_H_

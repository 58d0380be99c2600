// Copyright libtony authors.
//
// The broker's per-job TLS identity: a key pair and a self-signed certificate the submitter makes
// for one job. It travels like the job secret (secret keys of the containers' YARN credentials,
// never an environment variable, a command line or a log); the AM serves TLS with it and every
// client (executors, ytf) trusts exactly that certificate (pinning), naming the server
// kTlsServerName whatever address it dials.
//
// Thread-safe: free functions without shared state.

#ifndef TONY_BROKER_TLS_H_
#define TONY_BROKER_TLS_H_

#include <string>

#include "absl/status/statusor.h"

namespace tony::broker {

// Aliases among the secret keys of a YARN container's credentials.
inline constexpr char kTlsKeyCredentialAlias[] = "tony.broker.tls.key";
inline constexpr char kTlsCertCredentialAlias[] = "tony.broker.tls.cert";
// The certificate's only name (CN and subjectAltName); clients override the target name to it.
inline constexpr char kTlsServerName[] = "tony-broker";

struct TlsIdentity {
  std::string key_pem;   // PKCS#8 private key (EC P-256)
  std::string cert_pem;  // X.509, self-signed, valid from an hour ago for ten years
};

// A fresh identity (OpenSSL).
absl::StatusOr<TlsIdentity> GenerateTlsIdentity();

// The identity in the token file `token_file` (a container's $HADOOP_TOKEN_FILE_LOCATION):
// key_pem is empty in an executor's token file (the AM removes the key before it forwards its
// credentials: only the AM serves), and every field is empty when the job runs without TLS or
// `token_file` is empty.
absl::StatusOr<TlsIdentity> TlsIdentityFromTokenFile(const std::string& token_file);

}  // namespace tony::broker

#endif  // TONY_BROKER_TLS_H_

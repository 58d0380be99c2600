// Copyright libtony authors.
//
// The per-application secret that every broker call carries. It is made at submission and never
// travels in an environment variable, a command line or a log line: on YARN it is a secret key of
// the containers' credentials (ContainerLaunchContext.tokens), which the NodeManager writes to the
// container's private token file ($HADOOP_TOKEN_FILE_LOCATION) and never into the launch script or
// logs it serves; in local mode it is a 0600 file named by $TONY_SECRET_FILE.
//
// Thread-safe: free functions without shared state.

#ifndef TONY_BROKER_SECRET_H_
#define TONY_BROKER_SECRET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony::broker {

// gRPC metadata key of the secret (lower case, as HTTP/2 requires).
inline constexpr char kSecretMetadataKey[] = "tony-secret";
// Alias of the secret among the secret keys of a YARN container's credentials.
inline constexpr char kSecretCredentialAlias[] = "tony.job.secret";
inline constexpr char kSecretFileEnv[] = "TONY_SECRET_FILE";
inline constexpr char kTokenFileEnv[] = "HADOOP_TOKEN_FILE_LOCATION";

// 256 random bits from the kernel (getrandom), as 64 lower-case hex digits.
absl::StatusOr<std::string> GenerateSecret();

// Compares in time that depends only on the lengths, not on where the inputs differ.
bool SecretsEqual(absl::string_view a, absl::string_view b);

// The secret from the token file `token_file` (its kSecretCredentialAlias secret key), else from
// the plain file `secret_file` (surrounding whitespace trimmed); an empty path is skipped.
// FailedPrecondition when neither holds a non-empty secret, naming what was looked at.
absl::StatusOr<std::string> LoadSecret(const std::string& token_file,
                                       const std::string& secret_file);

// The secret key `alias` of the credentials in the token file `token_file`; NotFound when they
// have none.
absl::StatusOr<std::string> SecretKeyFromTokenFile(const std::string& token_file,
                                                   const std::string& alias);

// LoadSecret() of $HADOOP_TOKEN_FILE_LOCATION and $TONY_SECRET_FILE.
absl::StatusOr<std::string> SecretFromEnvironment();

// Writes `secret` to `path` readable by the owner only (0600), replacing any file there.
absl::Status WriteSecretFile(const std::string& path, absl::string_view secret);

}  // namespace tony::broker

#endif  // TONY_BROKER_SECRET_H_

// Copyright libtony authors.
//
// The per-application secret that every broker call carries. It is made at submission, reaches
// the AM and the executors through the environment (TONY_SECRET) or a 0600 file
// (TONY_SECRET_FILE), never a command line, and is never logged.
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
inline constexpr char kSecretEnv[] = "TONY_SECRET";
inline constexpr char kSecretFileEnv[] = "TONY_SECRET_FILE";

// 256 random bits from the kernel (getrandom), as 64 lower-case hex digits.
absl::StatusOr<std::string> GenerateSecret();

// Compares in time that depends only on the lengths, not on where the inputs differ.
bool SecretsEqual(absl::string_view a, absl::string_view b);

// The secret from $TONY_SECRET, else from the file named by $TONY_SECRET_FILE (surrounding
// whitespace trimmed). FailedPrecondition when neither is set or the secret is empty.
absl::StatusOr<std::string> SecretFromEnvironment();

// Writes `secret` to `path` readable by the owner only (0600), replacing any file there.
absl::Status WriteSecretFile(const std::string& path, absl::string_view secret);

}  // namespace tony::broker

#endif  // TONY_BROKER_SECRET_H_

// Copyright libtony authors.

#include "broker/secret.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/unique_fd.h"
#include "ipc/credentials.h"

namespace tony::broker {

absl::StatusOr<std::string> GenerateSecret() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("getrandom: ", strerror(errno)));
    }
    got += static_cast<size_t>(n);
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

bool SecretsEqual(absl::string_view a, absl::string_view b) {
  // Walks the whole of `b` whatever the contents, so timing tells at most the length.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff |= x ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0 && !b.empty();
}

absl::StatusOr<std::string> SecretKeyFromTokenFile(const std::string& token_file,
                                                   const std::string& alias) {
  TONY_ASSIGN_OR_RETURN(ipc::Credentials creds, ipc::Credentials::ReadFile(token_file));
  std::optional<std::string> s = creds.FindSecret(alias);
  if (!s) {
    return absl::NotFoundError(
        absl::StrCat("the token file ", token_file, " has no '", alias, "' secret key"));
  }
  return *std::move(s);
}

absl::StatusOr<std::string> LoadSecret(const std::string& token_file,
                                       const std::string& secret_file) {
  if (!token_file.empty()) {
    TONY_ASSIGN_OR_RETURN(ipc::Credentials creds, ipc::Credentials::ReadFile(token_file));
    if (std::optional<std::string> s = creds.FindSecret(kSecretCredentialAlias); s && !s->empty()) {
      return *s;
    }
    if (secret_file.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no application secret: the token file ", token_file, " has no '", kSecretCredentialAlias,
          "' secret key (was the container started by libtony?)"));
    }
  }
  if (secret_file.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no application secret: set ", kTokenFileEnv,
                                                      " (YARN sets it) or ", kSecretFileEnv));
  }
  std::ifstream in(secret_file);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the secret file ", secret_file, " (", kSecretFileEnv, ")"));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::string secret(absl::StripAsciiWhitespace(buf.str()));
  if (secret.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the secret file ", secret_file, " is empty"));
  }
  return secret;
}

absl::StatusOr<std::string> SecretFromEnvironment() {
  auto get = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v == nullptr ? "" : v);
  };
  return LoadSecret(get(kTokenFileEnv), get(kSecretFileEnv));
}

absl::Status WriteSecretFile(const std::string& path, absl::string_view secret) {
  ::unlink(path.c_str());
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("cannot create ", path, ": ", strerror(errno)));
  }
  absl::Status written = WriteAll(fd.get(), absl::StrCat(secret, "\n"), path);
  absl::Status closed = fd.Close(path);
  return written.ok() ? closed : written;
}

}  // namespace tony::broker

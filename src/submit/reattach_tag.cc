// Copyright libtony authors.
//
// tony::ReattachTag: the tag a scheduler re-attaches by, which only the holder of its secret can
// compute (a plain hash of the run's name is one anybody can put on an application of theirs).

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "spec/limits.h"
#include "tony/submitter.h"

namespace tony {
namespace {

constexpr size_t kMinSecretBytes = 16;
constexpr size_t kHexChars = 2 * 32;  // HMAC-SHA256
constexpr size_t kMaxPrefix = spec::kMaxTagLength - kHexChars;

bool TagChar(char c) {
  return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-' || c == '_' || c == '.';
}

}  // namespace

absl::StatusOr<std::string> ReattachTag(absl::string_view key, absl::string_view secret,
                                        absl::string_view prefix) {
  if (secret.size() < kMinSecretBytes) {
    return absl::InvalidArgumentError(absl::StrCat("ReattachTag: the secret has ", secret.size(),
                                                   " bytes; it needs at least ", kMinSecretBytes,
                                                   " (e.g. the output of `openssl rand -hex 16`)"));
  }
  if (prefix.size() > kMaxPrefix) {
    return absl::InvalidArgumentError(absl::StrCat("ReattachTag: the prefix has ", prefix.size(),
                                                   " characters; at most ", kMaxPrefix,
                                                   " fit before the 64 of the HMAC in YARN's 100"));
  }
  for (char c : prefix) {
    if (!TagChar(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ReattachTag: the prefix '", absl::CHexEscape(prefix),
          "' may hold only lower-case letters, digits, '-', '_' and '.' (YARN lower-cases tags)"));
    }
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(key.data()), key.size(), mac,
           &mac_len) == nullptr ||
      mac_len * 2 != kHexChars) {
    return absl::InternalError("ReattachTag: OpenSSL's HMAC-SHA256 failed");
  }
  return absl::StrCat(
      prefix, absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(mac), mac_len)));
}

}  // namespace tony

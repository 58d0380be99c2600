// Copyright libtony authors.

#include "broker/tls.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "ipc/credentials.h"

namespace tony::broker {
namespace {

// The one place OpenSSL errors become a status.
absl::Status OpenSslError(const char* what) {
  char buf[256] = "unknown error";
  if (unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return absl::InternalError(absl::StrCat("broker TLS: ", what, ": ", buf));
}

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

std::string BioString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);  // NOLINT(runtime/int)
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

}  // namespace

absl::StatusOr<TlsIdentity> TlsIdentityFromTokenFile(const std::string& token_file) {
  TlsIdentity id;
  if (token_file.empty()) return id;
  absl::StatusOr<ipc::Credentials> creds = ipc::Credentials::ReadFile(token_file);
  if (!creds.ok()) return creds.status();
  id.key_pem = creds->FindSecret(kTlsKeyCredentialAlias).value_or("");
  id.cert_pem = creds->FindSecret(kTlsCertCredentialAlias).value_or("");
  return id;
}

absl::StatusOr<TlsIdentity> GenerateTlsIdentity() {
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslError("EC key generation");
  Owned<X509> cert(X509_new());
  if (cert == nullptr) return OpenSslError("X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return OpenSslError("serial number");
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  if (bn == nullptr || BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) == nullptr) {
    BN_free(bn);
    return OpenSslError("serial number");
  }
  BN_free(bn);
  // From an hour ago: clocks of the cluster's hosts differ a little.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(kTlsServerName), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  const std::string san = absl::StrCat("DNS:", kTlsServerName);
  Owned<X509_EXTENSION> ext(
      X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, san.c_str()));
  if (ext == nullptr || X509_add_ext(cert.get(), ext.get(), -1) != 1) {
    return OpenSslError("subjectAltName");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return OpenSslError("signing");

  Owned<BIO> key_bio(BIO_new(BIO_s_mem()));
  Owned<BIO> cert_bio(BIO_new(BIO_s_mem()));
  if (key_bio == nullptr || cert_bio == nullptr ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1 ||
      PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1) {
    return OpenSslError("PEM encoding");
  }
  TlsIdentity id;
  id.key_pem = BioString(key_bio.get());
  id.cert_pem = BioString(cert_bio.get());
  return id;
}

}  // namespace tony::broker

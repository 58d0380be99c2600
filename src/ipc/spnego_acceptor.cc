// Copyright libtony authors.

#include "ipc/spnego_acceptor.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "ipc/kerberos.h"

namespace tony::ipc {

struct SpnegoAcceptor::Credential {
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  ~Credential() {
    OM_uint32 minor = 0;
    if (cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &cred);
  }
};

namespace {

// A GSS name's text ("alice@EXAMPLE.COM"); *anonymous tells whether it is of the anonymous type.
std::string NameText(gss_name_t name, bool* anonymous) {
  OM_uint32 minor = 0;
  gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
  gss_OID type = GSS_C_NO_OID;
  if (GSS_ERROR(gss_display_name(&minor, name, &text, &type))) return "";
  *anonymous = type != GSS_C_NO_OID && gss_oid_equal(type, GSS_C_NT_ANONYMOUS);
  std::string out(static_cast<const char*>(text.value), text.length);
  gss_release_buffer(&minor, &text);
  return out;
}

}  // namespace

SpnegoAcceptor::SpnegoAcceptor(std::unique_ptr<Credential> credential)
    : credential_(std::move(credential)) {}

SpnegoAcceptor::~SpnegoAcceptor() = default;

absl::StatusOr<std::unique_ptr<SpnegoAcceptor>> SpnegoAcceptor::Create(
    const std::string& keytab, const std::string& principal) {
  if (::access(keytab.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read the keytab ", keytab));
  }
  OM_uint32 minor = 0;
  gss_name_t name = GSS_C_NO_NAME;
  if (!principal.empty()) {
    gss_buffer_desc text{principal.size(), const_cast<char*>(principal.data())};
    OM_uint32 major =
        gss_import_name(&minor, &text, const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME), &name);
    if (GSS_ERROR(major)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", principal, "' is not a principal: ", GssStatusText(major, minor)));
    }
  }
  // The keytab as this credential's own store: nothing process-wide changes.
  gss_key_value_element_desc element{"keytab", keytab.c_str()};
  gss_key_value_set_desc store{1, &element};
  auto credential = std::make_unique<Credential>();
  OM_uint32 major =
      gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, GSS_C_NO_OID_SET, GSS_C_ACCEPT, &store,
                            &credential->cred, nullptr, nullptr);
  OM_uint32 ignored = 0;
  if (name != GSS_C_NO_NAME) gss_release_name(&ignored, &name);
  if (GSS_ERROR(major)) {
    // The server's own keys: GSS-API's words, not the client advice of KerberosError.
    return absl::FailedPreconditionError(absl::StrCat(
        "no key for ", principal.empty() ? "any principal" : principal, " in ", keytab, " (",
        GssStatusText(major, minor), "); klist -kt ", keytab, " lists the keys it holds"));
  }
  return std::unique_ptr<SpnegoAcceptor>(new SpnegoAcceptor(std::move(credential)));
}

absl::StatusOr<SpnegoAcceptor::Accepted> SpnegoAcceptor::Accept(
    absl::string_view authorization) const {
  absl::string_view encoded = absl::StripAsciiWhitespace(authorization);
  if (!absl::StartsWithIgnoreCase(encoded, "Negotiate ")) {
    return absl::UnauthenticatedError("not a Negotiate (SPNEGO) authorization");
  }
  encoded = absl::StripAsciiWhitespace(encoded.substr(10));
  std::string token;
  if (encoded.empty() || !absl::Base64Unescape(encoded, &token)) {
    return absl::UnauthenticatedError("the Negotiate token is not base64");
  }
  OM_uint32 minor = 0;
  gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
  gss_buffer_desc in{token.size(), token.data()};
  gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
  gss_name_t client = GSS_C_NO_NAME;
  OM_uint32 ret_flags = 0;
  const OM_uint32 major =
      gss_accept_sec_context(&minor, &ctx, credential_->cred, &in, GSS_C_NO_CHANNEL_BINDINGS,
                             &client, nullptr, &out, &ret_flags, nullptr, nullptr);
  OM_uint32 ignored = 0;
  Accepted accepted;
  if (out.length > 0) {
    accepted.reply = absl::StrCat(
        "Negotiate ",
        absl::Base64Escape(absl::string_view(static_cast<const char*>(out.value), out.length)));
  }
  gss_release_buffer(&ignored, &out);
  if (ctx != GSS_C_NO_CONTEXT) gss_delete_sec_context(&ignored, &ctx, GSS_C_NO_BUFFER);
  bool anonymous_name = false;
  if (client != GSS_C_NO_NAME) {
    accepted.principal = NameText(client, &anonymous_name);
    gss_release_name(&ignored, &client);
  }
  if (GSS_ERROR(major)) {
    return absl::UnauthenticatedError(
        absl::StrCat("SPNEGO token refused: ", GssStatusText(major, minor)));
  }
  if (major & GSS_S_CONTINUE_NEEDED) {
    return absl::UnauthenticatedError(
        "the SPNEGO exchange needs another round; only Kerberos in one round is accepted");
  }
  TONY_RETURN_IF_ERROR(CheckSpnegoInitiator(accepted.principal, ret_flags, anonymous_name));
  return accepted;
}

absl::Status CheckSpnegoInitiator(absl::string_view principal, uint32_t ret_flags,
                                  bool anonymous_name_type) {
  const size_t at = principal.rfind('@');
  const absl::string_view name = principal.substr(0, at);
  if ((ret_flags & GSS_C_ANON_FLAG) != 0 || anonymous_name_type ||
      absl::EqualsIgnoreCase(name, "WELLKNOWN/ANONYMOUS")) {
    return absl::UnauthenticatedError(
        absl::StrCat("SPNEGO: an anonymous initiator (", principal.empty() ? "no name" : principal,
                     ") may not sign in; sign in with a ticket of your own (kinit)"));
  }
  if (name.empty()) return absl::UnauthenticatedError("SPNEGO: the initiator has no name");
  return absl::OkStatus();
}

}  // namespace tony::ipc

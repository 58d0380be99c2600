// Copyright libtony authors.

#include "ipc/kerberos.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"

namespace tony::ipc {
namespace {

// RFC 4752 security layers.
constexpr uint8_t kLayerNone = 1;
constexpr uint8_t kLayerIntegrity = 2;
constexpr uint8_t kLayerConfidentiality = 4;
// What we accept in one wrapped message from the server (the 3-byte maximum).
constexpr uint32_t kOurMaxBuffer = 0xFFFFFF;

std::string GssMessages(OM_uint32 code, int type) {
  std::string out;
  OM_uint32 ctx = 0;
  do {
    OM_uint32 minor = 0;
    gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
    if (gss_display_status(&minor, code, type, GSS_C_NO_OID, &ctx, &text) != GSS_S_COMPLETE) {
      break;
    }
    if (!out.empty()) out += "; ";
    out.append(static_cast<const char*>(text.value), text.length);
    gss_release_buffer(&minor, &text);
  } while (ctx != 0);
  return out;
}

std::string CacheName() {
  const char* cc = std::getenv("KRB5CCNAME");
  return cc != nullptr && *cc != '\0' ? std::string(cc) : std::string("the default cache");
}

// The cause of a libkrb5 error code, with its fix, or "" when the code is not one users cause.
std::string KrbCause(krb5_error_code code, absl::string_view server) {
  const std::string srv = server.empty() ? std::string("the server") : std::string(server);
  switch (code) {
    case KRB5_FCC_NOFILE:
    case KRB5_CC_NOTFOUND:
    case KRB5_CC_END:
      return absl::StrCat("no Kerberos ticket in ", CacheName(),
                          ": run kinit, or pass --principal and --keytab");
    case KRB5KRB_AP_ERR_TKT_EXPIRED:
      return "the Kerberos ticket has expired: run kinit again (or kinit -R), or pass "
             "--principal and --keytab";
    case KRB5KRB_AP_ERR_SKEW:
      return "clock skew too great between this host and the KDC or server: synchronise the "
             "clocks (NTP)";
    case KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN:
      return absl::StrCat("the KDC does not know the server principal ", srv,
                          ": check the server's principal in the Hadoop configuration "
                          "(yarn.resourcemanager.principal, dfs.namenode.kerberos.principal)");
    case KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN:
      return "the KDC does not know the client principal: check --principal (or kinit's)";
    case KRB5_KT_NOTFOUND:
    case KRB5_KT_KVNONOTFOUND:
      return "the keytab holds no key for the principal: check --principal and --keytab";
    case KRB5KDC_ERR_PREAUTH_FAILED:
    case KRB5KRB_AP_ERR_BAD_INTEGRITY:
      return "the KDC rejected the key: the keytab is stale or belongs to another principal "
             "(check --keytab, or kinit again)";
    case KRB5KRB_AP_ERR_MODIFIED:
      return absl::StrCat(srv,
                          " could not decrypt our ticket: server principal mismatch or a stale "
                          "server keytab (check the server's principal in the Hadoop "
                          "configuration)");
    case KRB5_KDC_UNREACH:
      return "cannot reach the KDC: check the realm's kdc in KRB5_CONFIG (or /etc/krb5.conf) "
             "and that the KDC runs";
    case KRB5_REALM_UNKNOWN:
    case KRB5_REALM_CANT_RESOLVE:
      return "the Kerberos realm is unknown: check KRB5_CONFIG (or /etc/krb5.conf)";
    case KRB5_CONFIG_CANTOPEN:
    case KRB5_CONFIG_BADFORMAT:
      return "cannot read the Kerberos configuration: check KRB5_CONFIG (or /etc/krb5.conf)";
    case ENOENT:
      return "a Kerberos file (keytab or ticket cache) does not exist: check --keytab or "
             "KRB5CCNAME";
    default:
      return "";
  }
}

absl::Status CauseStatus(krb5_error_code code, std::string cause) {
  if (code == KRB5_KDC_UNREACH) return absl::UnavailableError(cause);
  return absl::UnauthenticatedError(cause);
}

// libkrb5 errors (keytab login) through the same causes.
absl::Status Krb5Error(krb5_context ctx, krb5_error_code code, absl::string_view what) {
  std::string cause = KrbCause(code, "");
  if (!cause.empty()) return CauseStatus(code, std::move(cause));
  const char* msg = krb5_get_error_message(ctx, code);
  absl::Status s = absl::UnauthenticatedError(absl::StrCat("Kerberos: ", what, ": ", msg));
  krb5_free_error_message(ctx, msg);
  return s;
}

// `login`'s credentials from its own cache. With the keytab as MIT's client keytab, GSS-API
// fetches fresh tickets into that cache when the ones there near their end.
absl::StatusOr<gss_cred_id_t> AcquireLoginCred(const KerberosLogin& login) {
  OM_uint32 minor = 0;
  gss_buffer_desc text{login.principal().size(), const_cast<char*>(login.principal().data())};
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 major =
      gss_import_name(&minor, &text, const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME), &name);
  if (GSS_ERROR(major)) return KerberosError(major, minor, "gss_import_name");
  gss_key_value_element_desc elements[] = {{"ccache", login.ccache().c_str()},
                                           {"client_keytab", login.keytab().c_str()}};
  gss_key_value_set_desc store{2, elements};
  gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &store,
                                &cred, nullptr, nullptr);
  OM_uint32 ignored = 0;
  gss_release_name(&ignored, &name);
  if (GSS_ERROR(major)) {
    return KerberosError(major, minor, absl::StrCat("credentials of ", login.principal()));
  }
  return cred;
}

// Owns a GSS security context; shared by the mechanism and the layer it hands out.
struct GssContext {
  gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
  ~GssContext() {
    OM_uint32 minor = 0;
    if (ctx != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &ctx, GSS_C_NO_BUFFER);
  }
};

class GssLayer : public SaslSecurityLayer {
 public:
  GssLayer(std::shared_ptr<GssContext> ctx, bool confidential, size_t max_input)
      : ctx_(std::move(ctx)), confidential_(confidential), max_input_(max_input) {}

  absl::string_view qop() const override { return confidential_ ? "auth-conf" : "auth-int"; }
  size_t max_wrap_input() const override { return max_input_; }

  absl::StatusOr<std::string> Wrap(absl::string_view plain) override {
    absl::MutexLock lock(&mu_);
    gss_buffer_desc in{plain.size(), const_cast<char*>(plain.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_wrap(&minor, ctx_->ctx, confidential_ ? 1 : 0, GSS_C_QOP_DEFAULT, &in,
                               &conf_state, &out);
    if (GSS_ERROR(major)) return KerberosError(major, minor, "gss_wrap");
    std::string wrapped(static_cast<const char*>(out.value), out.length);
    gss_release_buffer(&minor, &out);
    return wrapped;
  }

  absl::StatusOr<std::string> Unwrap(absl::string_view wrapped) override {
    absl::MutexLock lock(&mu_);
    gss_buffer_desc in{wrapped.size(), const_cast<char*>(wrapped.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_unwrap(&minor, ctx_->ctx, &in, &out, &conf_state, nullptr);
    std::string plain(static_cast<const char*>(out.value), out.length);
    OM_uint32 ignored = 0;
    gss_release_buffer(&ignored, &out);
    TONY_RETURN_IF_ERROR(GssMessageStatus(major, minor, "gss_unwrap"));
    if (confidential_ && conf_state == 0) {
      return absl::DataLossError("SASL auth-conf: the server sent an unencrypted message");
    }
    return plain;
  }

 private:
  absl::Mutex mu_;  // a GSS context is not safe for concurrent use
  const std::shared_ptr<GssContext> ctx_;
  const bool confidential_;
  const size_t max_input_;
};

class GssapiClient : public SaslMechanism {
 public:
  GssapiClient(std::string server, Protection min_protection,
               std::shared_ptr<const KerberosLogin> login)
      : server_(std::move(server)), min_protection_(min_protection), login_(std::move(login)) {}
  GssapiClient(const GssapiClient&) = delete;
  GssapiClient& operator=(const GssapiClient&) = delete;
  ~GssapiClient() override {
    OM_uint32 minor = 0;
    if (target_ != GSS_C_NO_NAME) gss_release_name(&minor, &target_);
    if (cred_ != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &cred_);
  }

  absl::Status Start() {
    if (login_ != nullptr) {
      TONY_ASSIGN_OR_RETURN(cred_, AcquireLoginCred(*login_));
    }
    gss_buffer_desc name{server_.size(), server_.data()};
    OM_uint32 minor = 0;
    OM_uint32 major =
        gss_import_name(&minor, &name, const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME), &target_);
    if (GSS_ERROR(major)) return KerberosError(major, minor, "gss_import_name", server_);
    return absl::OkStatus();
  }

  absl::string_view name() const override { return "GSSAPI"; }
  bool complete() const override { return complete_; }
  std::unique_ptr<SaslSecurityLayer> TakeSecurityLayer() override { return std::move(layer_); }

  absl::StatusOr<std::string> Step(absl::string_view server_message) override {
    if (complete_) return absl::FailedPreconditionError("GSSAPI exchange already complete");
    if (!established_) return ContextStep(server_message);
    return LayerStep(server_message);
  }

 private:
  absl::StatusOr<std::string> ContextStep(absl::string_view token) {
    gss_buffer_desc in{token.size(), const_cast<char*>(token.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    OM_uint32 major = gss_init_sec_context(
        &minor, cred_, &ctx_->ctx, target_, const_cast<gss_OID>(gss_mech_krb5),
        GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG | GSS_C_SEQUENCE_FLAG, 0,
        GSS_C_NO_CHANNEL_BINDINGS, token.empty() ? GSS_C_NO_BUFFER : &in, nullptr, &out, &flags_,
        nullptr);
    std::string reply(static_cast<const char*>(out.value), out.length);
    OM_uint32 ignored = 0;
    gss_release_buffer(&ignored, &out);
    if (GSS_ERROR(major)) return KerberosError(major, minor, "GSSAPI", server_);
    established_ = major == GSS_S_COMPLETE;
    return reply;
  }

  // RFC 4752 3.1: the server's wrapped [layers][max buffer]; we answer with the strongest
  // layer it offers and our maximum, wrapped without confidentiality.
  absl::StatusOr<std::string> LayerStep(absl::string_view token) {
    GssLayer raw(ctx_, false, 0);
    TONY_ASSIGN_OR_RETURN(std::string offer, raw.Unwrap(token));
    if (offer.size() != 4) {
      return absl::UnauthenticatedError(
          absl::StrCat("SASL GSSAPI: security-layer offer of ", offer.size(), " bytes"));
    }
    const uint8_t layers = static_cast<uint8_t>(offer[0]);
    const uint32_t server_max = (static_cast<uint32_t>(static_cast<uint8_t>(offer[1])) << 16) |
                                (static_cast<uint32_t>(static_cast<uint8_t>(offer[2])) << 8) |
                                static_cast<uint8_t>(offer[3]);
    uint8_t chosen;
    if ((layers & kLayerConfidentiality) && (flags_ & GSS_C_CONF_FLAG)) {
      chosen = kLayerConfidentiality;
    } else if ((layers & kLayerIntegrity) && (flags_ & GSS_C_INTEG_FLAG)) {
      chosen = kLayerIntegrity;
    } else if (layers & kLayerNone) {
      chosen = kLayerNone;
    } else {
      return absl::UnauthenticatedError(absl::StrCat(
          "SASL GSSAPI: the server offers no security layer we support (mask ", layers, ")"));
    }
    const Protection got = chosen == kLayerConfidentiality ? Protection::kPrivacy
                           : chosen == kLayerIntegrity     ? Protection::kIntegrity
                                                           : Protection::kAuthentication;
    if (got < min_protection_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "SASL GSSAPI: the server offers at most ", ProtectionName(got), ", weaker than ",
          ProtectionName(min_protection_), ", the minimum hadoop.rpc.protection on this side"));
    }
    const uint32_t our_max = chosen == kLayerNone ? 0 : kOurMaxBuffer;
    std::string answer(4, '\0');
    answer[0] = static_cast<char>(chosen);
    answer[1] = static_cast<char>((our_max >> 16) & 0xFF);
    answer[2] = static_cast<char>((our_max >> 8) & 0xFF);
    answer[3] = static_cast<char>(our_max & 0xFF);
    TONY_ASSIGN_OR_RETURN(std::string reply, raw.Wrap(answer));
    if (chosen != kLayerNone) {
      const bool conf = chosen == kLayerConfidentiality;
      OM_uint32 max_input = 64 * 1024;
      if (server_max != 0) {
        OM_uint32 minor = 0;
        OM_uint32 limit = 0;
        if (!GSS_ERROR(gss_wrap_size_limit(&minor, ctx_->ctx, conf ? 1 : 0, GSS_C_QOP_DEFAULT,
                                           server_max, &limit)) &&
            limit > 0) {
          max_input = limit;
        }
      }
      layer_ = std::make_unique<GssLayer>(ctx_, conf, max_input);
    }
    complete_ = true;
    return reply;
  }

  std::string server_;
  const Protection min_protection_;
  const std::shared_ptr<const KerberosLogin> login_;
  gss_cred_id_t cred_ = GSS_C_NO_CREDENTIAL;  // login_'s; GSS_C_NO_CREDENTIAL: the default
  gss_name_t target_ = GSS_C_NO_NAME;
  std::shared_ptr<GssContext> ctx_ = std::make_shared<GssContext>();
  OM_uint32 flags_ = 0;
  bool established_ = false;
  bool complete_ = false;
  std::unique_ptr<SaslSecurityLayer> layer_;
};

// "service/host@REALM" -> "service/host".
absl::string_view WithoutRealm(absl::string_view principal) {
  size_t at = principal.rfind('@');
  return at == absl::string_view::npos ? principal : principal.substr(0, at);
}

}  // namespace

absl::Status KerberosError(uint32_t major, uint32_t minor, absl::string_view what,
                           absl::string_view server) {
  const OM_uint32 routine = GSS_ROUTINE_ERROR(major);
  if (routine == GSS_S_CREDENTIALS_EXPIRED) {
    return absl::UnauthenticatedError(std::string(KrbCause(KRB5KRB_AP_ERR_TKT_EXPIRED, server)));
  }
  std::string cause = KrbCause(static_cast<krb5_error_code>(minor), server);
  if (!cause.empty()) return CauseStatus(static_cast<krb5_error_code>(minor), std::move(cause));
  if (routine == GSS_S_NO_CRED) {
    return absl::UnauthenticatedError(std::string(KrbCause(KRB5_FCC_NOFILE, server)));
  }
  std::string text = GssMessages(major, GSS_C_GSS_CODE);
  std::string minor_text = minor != 0 ? GssMessages(minor, GSS_C_MECH_CODE) : std::string();
  return absl::UnauthenticatedError(absl::StrCat("Kerberos: ", what, ": ", text,
                                                 minor_text.empty() ? "" : " (", minor_text,
                                                 minor_text.empty() ? "" : ")"));
}

absl::Status GssMessageStatus(uint32_t major, uint32_t minor, absl::string_view what) {
  if (GSS_ERROR(major)) return KerberosError(major, minor, what);
  // Several bits may be set at once; the first names the cause.
  static constexpr struct {
    OM_uint32 bit;
    const char* cause;
  } kRefused[] = {
      {GSS_S_DUPLICATE_TOKEN, "a replayed message (duplicate token)"},
      {GSS_S_OLD_TOKEN, "a replayed message (a token too old to check)"},
      {GSS_S_UNSEQ_TOKEN, "a message out of order (unsequenced token)"},
      {GSS_S_GAP_TOKEN, "a message after a missing one (gap token)"},
  };
  for (const auto& r : kRefused) {
    if (major & r.bit) {
      return absl::DataLossError(absl::StrCat("SASL GSSAPI: ", what, " refused ", r.cause));
    }
  }
  return absl::OkStatus();
}

std::string GssStatusText(uint32_t major, uint32_t minor) {
  std::string text = GssMessages(major, GSS_C_GSS_CODE);
  if (minor != 0) absl::StrAppend(&text, "; ", GssMessages(minor, GSS_C_MECH_CODE));
  return text;
}

std::string CanonicalHostName(absl::string_view host) {
  const std::string h(host);
  // IPv4 first, as Hadoop's JVMs run with java.net.preferIPv4Stack.
  for (int family : {AF_INET, AF_UNSPEC}) {
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(h.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) continue;
    char name[NI_MAXHOST];
    const bool named = getnameinfo(res->ai_addr, res->ai_addrlen, name, sizeof(name), nullptr, 0,
                                   NI_NAMEREQD) == 0;
    freeaddrinfo(res);
    if (named) return absl::AsciiStrToLower(name);
  }
  return absl::AsciiStrToLower(h);
}

std::string ResolveServerPrincipal(absl::string_view pattern, absl::string_view host,
                                   absl::string_view canonical_host) {
  // Hadoop replaces _HOST only as the whole host component: "service/_HOST@REALM".
  absl::string_view no_realm = WithoutRealm(pattern);
  size_t slash = no_realm.find('/');
  if (slash == absl::string_view::npos || no_realm.substr(slash + 1) != "_HOST") {
    return std::string(pattern);
  }
  std::string canonical =
      canonical_host.empty() ? CanonicalHostName(host) : absl::AsciiStrToLower(canonical_host);
  return absl::StrCat(no_realm.substr(0, slash + 1), canonical, pattern.substr(no_realm.size()));
}

std::string PrincipalShortName(absl::string_view principal) {
  absl::string_view p = WithoutRealm(principal);
  size_t slash = p.find('/');
  return std::string(slash == absl::string_view::npos ? p : p.substr(0, slash));
}

absl::StatusOr<KerberosIdentity> CurrentKerberosIdentity() {
  OM_uint32 minor = 0;
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
  OM_uint32 major = gss_acquire_cred(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs,
                                     GSS_C_INITIATE, &cred, nullptr, nullptr);
  if (GSS_ERROR(major)) return KerberosError(major, minor, "acquiring credentials");
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 lifetime = 0;
  major = gss_inquire_cred(&minor, cred, &name, &lifetime, nullptr, nullptr);
  OM_uint32 ignored = 0;
  gss_release_cred(&ignored, &cred);
  if (GSS_ERROR(major)) return KerberosError(major, minor, "inspecting credentials");
  gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
  major = gss_display_name(&minor, name, &text, nullptr);
  gss_release_name(&ignored, &name);
  if (GSS_ERROR(major)) return KerberosError(major, minor, "naming credentials");
  KerberosIdentity id;
  id.principal.assign(static_cast<const char*>(text.value), text.length);
  gss_release_buffer(&ignored, &text);
  if (lifetime == 0) {
    return absl::UnauthenticatedError(KrbCause(KRB5KRB_AP_ERR_TKT_EXPIRED, ""));
  }
  id.expires = absl::Now() + absl::Seconds(lifetime);
  return id;
}

absl::StatusOr<std::shared_ptr<const KerberosLogin>> KerberosLogin::FromKeytab(
    absl::string_view principal, absl::string_view keytab) {
  if (access(std::string(keytab).c_str(), R_OK) != 0) {
    return absl::UnauthenticatedError(
        absl::StrCat("cannot read keytab ", keytab, ": check --keytab"));
  }
  krb5_context ctx = nullptr;
  krb5_error_code rc = krb5_init_context(&ctx);
  if (rc != 0) {
    std::string cause = KrbCause(rc, "");
    return CauseStatus(
        rc, cause.empty() ? absl::StrCat("Kerberos: cannot initialise (error ", rc, ")") : cause);
  }
  krb5_principal princ = nullptr;
  krb5_keytab kt = nullptr;
  krb5_get_init_creds_opt* opt = nullptr;
  krb5_creds creds{};
  bool have_creds = false;
  krb5_ccache cc = nullptr;
  absl::Status status;
  // One cache per login: two logins of one process never share (or overwrite) tickets.
  static std::atomic<uint64_t> logins{0};
  const std::string ccname = absl::StrCat("MEMORY:libtony-", getpid(), "-", ++logins);
  const std::string kt_name =
      absl::StrContains(keytab, ":") ? std::string(keytab) : absl::StrCat("FILE:", keytab);
  do {
    if ((rc = krb5_parse_name(ctx, std::string(principal).c_str(), &princ)) != 0) {
      status = absl::UnauthenticatedError(
          absl::StrCat("'", principal, "' is not a Kerberos principal: check --principal"));
      break;
    }
    if ((rc = krb5_kt_resolve(ctx, kt_name.c_str(), &kt)) != 0) {
      status = Krb5Error(ctx, rc, "keytab");
      break;
    }
    if ((rc = krb5_get_init_creds_opt_alloc(ctx, &opt)) != 0) {
      status = Krb5Error(ctx, rc, "options");
      break;
    }
    if ((rc = krb5_get_init_creds_keytab(ctx, &creds, princ, kt, 0, nullptr, opt)) != 0) {
      status = Krb5Error(ctx, rc, absl::StrCat("login of ", principal, " from ", keytab));
      break;
    }
    have_creds = true;
    if ((rc = krb5_cc_resolve(ctx, ccname.c_str(), &cc)) != 0 ||
        (rc = krb5_cc_initialize(ctx, cc, princ)) != 0 ||
        (rc = krb5_cc_store_cred(ctx, cc, &creds)) != 0) {
      status = Krb5Error(ctx, rc, "storing the ticket");
      break;
    }
  } while (false);
  // A MEMORY cache lives on (process-wide) after its handle is closed.
  if (cc != nullptr) krb5_cc_close(ctx, cc);
  if (have_creds) krb5_free_cred_contents(ctx, &creds);
  if (opt != nullptr) krb5_get_init_creds_opt_free(ctx, opt);
  if (kt != nullptr) krb5_kt_close(ctx, kt);
  if (princ != nullptr) krb5_free_principal(ctx, princ);
  krb5_free_context(ctx);
  TONY_RETURN_IF_ERROR(status);
  std::shared_ptr<const KerberosLogin> login(
      new KerberosLogin(std::string(principal), kt_name, ccname));
  TONY_RETURN_IF_ERROR(login->Refresh().status());
  return login;
}

KerberosLogin::~KerberosLogin() {
  krb5_context ctx = nullptr;
  if (krb5_init_context(&ctx) != 0) return;
  krb5_ccache cc = nullptr;
  if (krb5_cc_resolve(ctx, ccache_.c_str(), &cc) == 0) krb5_cc_destroy(ctx, cc);
  krb5_free_context(ctx);
}

absl::StatusOr<std::string> KerberosLogin::FreshCcache() const {
  TONY_RETURN_IF_ERROR(Refresh().status());
  return ccache_;
}

absl::StatusOr<KerberosIdentity> KerberosLogin::Refresh() const {
  TONY_ASSIGN_OR_RETURN(gss_cred_id_t cred, AcquireLoginCred(*this));
  OM_uint32 minor = 0;
  OM_uint32 lifetime = 0;
  OM_uint32 major = gss_inquire_cred(&minor, cred, nullptr, &lifetime, nullptr, nullptr);
  OM_uint32 ignored = 0;
  gss_release_cred(&ignored, &cred);
  if (GSS_ERROR(major)) return KerberosError(major, minor, "inspecting credentials");
  if (lifetime == 0) {
    return absl::UnauthenticatedError(KrbCause(KRB5KRB_AP_ERR_TKT_EXPIRED, ""));
  }
  return KerberosIdentity{principal_, absl::Now() + absl::Seconds(lifetime)};
}

absl::StatusOr<std::unique_ptr<SaslMechanism>> NewGssapiClient(
    absl::string_view server_principal, const SaslOffer& offer, Protection min_protection,
    std::shared_ptr<const KerberosLogin> login) {
  const std::string advertised = absl::StrCat(offer.protocol, "/", offer.server_id);
  if (!absl::EqualsIgnoreCase(advertised, WithoutRealm(server_principal))) {
    return absl::UnauthenticatedError(
        absl::StrCat("server principal mismatch: the server is ", advertised,
                     ", the configuration expects ", server_principal,
                     " (check yarn.resourcemanager.principal / dfs.namenode.kerberos.principal)"));
  }
  auto mech = std::make_unique<GssapiClient>(std::string(server_principal), min_protection,
                                             std::move(login));
  TONY_RETURN_IF_ERROR(mech->Start());
  return std::unique_ptr<SaslMechanism>(std::move(mech));
}

}  // namespace tony::ipc

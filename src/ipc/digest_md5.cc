// Copyright libtony authors.

#include "ipc/digest_md5.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tony::ipc {
namespace {

using Bytes = std::string;

constexpr size_t kMacSize = 10;
constexpr size_t kTrailerSize = 6;  // message type 0x0001, sequence number

Bytes Md5(absl::string_view data) {
  unsigned char out[16];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_md5(), nullptr);
  return Bytes(reinterpret_cast<char*>(out), 16);
}

std::string Hex(absl::string_view bytes) { return absl::BytesToHexString(bytes); }

Bytes HmacMd5(absl::string_view key, absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_md5(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return Bytes(reinterpret_cast<char*>(out), len);
}

Bytes BigEndian32(uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  return Bytes(b, 4);
}

// RC4 lives in OpenSSL 3's legacy provider: loaded into a library context of our own, so the
// host's default context (and what it allows) stays as the host set it.
struct LegacyCiphers {
  OSSL_LIB_CTX* ctx = nullptr;
  EVP_CIPHER* rc4 = nullptr;
};

const LegacyCiphers& Legacy() {
  static const LegacyCiphers* legacy = [] {
    auto* l = new LegacyCiphers;  // never freed: the process's
    l->ctx = OSSL_LIB_CTX_new();
    if (l->ctx != nullptr && OSSL_PROVIDER_load(l->ctx, "legacy") != nullptr &&
        OSSL_PROVIDER_load(l->ctx, "default") != nullptr) {
      l->rc4 = EVP_CIPHER_fetch(l->ctx, "RC4", nullptr);
    }
    return l;
  }();
  return *legacy;
}

// The cipher and its block size. Only the two ciphers this client may use exist here: des,
// rc4-56 and rc4-40 (56 and 40 bits) are not implemented at all, so no option can reach them.
struct CipherInfo {
  const EVP_CIPHER* evp = nullptr;
  size_t block = 1;
};

std::optional<CipherInfo> FindCipher(absl::string_view name) {
  if (name == "3des") return CipherInfo{EVP_des_ede_cbc(), 8};
  if (name == "rc4" && Legacy().rc4 != nullptr) return CipherInfo{Legacy().rc4, 1};
  return std::nullopt;
}

// The ciphers RFC 2831 defines that are too weak to carry tokens and job secrets.
bool WeakCipher(absl::string_view name) {
  return name == "des" || name == "rc4-56" || name == "rc4-40";
}

// Checks a cipher list from `source` (an option or configuration key) and orders it 3des first.
absl::StatusOr<std::vector<std::string>> CheckCiphers(const std::vector<std::string>& ciphers,
                                                      absl::string_view source) {
  bool des3 = false, rc4 = false;
  for (const std::string& c : ciphers) {
    if (c == "3des") {
      des3 = true;
    } else if (c == "rc4") {
      rc4 = true;
    } else if (WeakCipher(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": '", c, "' is too weak and never used; list 3des (default), or 3des,rc4 ",
          "to also accept 128-bit RC4"));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": unknown DIGEST-MD5 cipher '", c, "' (use 3des, or 3des,rc4)"));
    }
  }
  if (!des3 && !rc4) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no cipher (use 3des, or 3des,rc4)"));
  }
  std::vector<std::string> out;
  if (des3) out.push_back("3des");
  if (rc4) out.push_back("rc4");
  return out;
}

// Seven key bytes spread over eight, seven bits each, with odd parity in the low bit (DES keys).
void Expand7To8(const unsigned char* in, unsigned char* out) {
  out[0] = in[0];
  for (int i = 1; i < 7; ++i) {
    out[i] = static_cast<unsigned char>((in[i - 1] << (8 - i)) | (in[i] >> i));
  }
  out[7] = static_cast<unsigned char>(in[6] << 1);
  for (int i = 0; i < 8; ++i) {
    unsigned char b = out[i] & 0xfe;
    int ones = __builtin_popcount(b);
    out[i] = static_cast<unsigned char>(b | ((ones % 2 == 0) ? 1 : 0));
  }
}

// One direction's cipher state: RC4's keystream and CBC's chaining go on across messages.
class CipherStream {
 public:
  CipherStream() = default;
  CipherStream(const CipherStream&) = delete;
  CipherStream& operator=(const CipherStream&) = delete;
  ~CipherStream() { EVP_CIPHER_CTX_free(ctx_); }

  absl::Status Init(absl::string_view cipher, absl::string_view kc, bool encrypt) {
    std::optional<CipherInfo> info = FindCipher(cipher);
    if (!info.has_value()) {
      return absl::UnimplementedError(absl::StrCat("cipher ", cipher, " is not available"));
    }
    const auto* k = reinterpret_cast<const unsigned char*>(kc.data());
    unsigned char key[16];
    const unsigned char* iv = nullptr;
    if (cipher == "3des") {
      Expand7To8(k, key);
      Expand7To8(k + 7, key + 8);
      iv = k + 8;
    } else {
      std::memcpy(key, k, 16);  // RC4: the whole Kc
    }
    ctx_ = EVP_CIPHER_CTX_new();
    if (ctx_ == nullptr ||
        EVP_CipherInit_ex(ctx_, info->evp, nullptr, key, iv, encrypt ? 1 : 0) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx_, 0) != 1) {
      return absl::InternalError(absl::StrCat("DIGEST-MD5: cannot set up ", cipher));
    }
    block_ = info->block;
    return absl::OkStatus();
  }

  size_t block() const { return block_; }

  absl::StatusOr<Bytes> Update(absl::string_view in) {
    Bytes out(in.size() + block_, '\0');
    int len = 0;
    if (EVP_CipherUpdate(ctx_, reinterpret_cast<unsigned char*>(out.data()), &len,
                         reinterpret_cast<const unsigned char*>(in.data()),
                         static_cast<int>(in.size())) != 1) {
      return absl::InternalError("DIGEST-MD5: cipher failed");
    }
    out.resize(static_cast<size_t>(len));
    return out;
  }

 private:
  EVP_CIPHER_CTX* ctx_ = nullptr;
  size_t block_ = 1;
};

// The negotiated layer. Each direction has its own lock, key, cipher state and sequence number.
class DigestLayer : public SaslSecurityLayer {
 public:
  absl::Status Init(absl::string_view qop, absl::string_view cipher, absl::string_view ha1,
                    int64_t server_maxbuf) {
    qop_ = std::string(qop);
    kic_ =
        Md5(absl::StrCat(ha1, "Digest session key to client-to-server signing key magic constant"));
    kis_ =
        Md5(absl::StrCat(ha1, "Digest session key to server-to-client signing key magic constant"));
    // Java computes its send size the same way: the server's buffer less what wrapping adds.
    const int64_t overhead = qop == "auth-conf" ? 26 : 16;
    max_input_ = static_cast<size_t>(std::max<int64_t>(server_maxbuf - overhead, 1));
    if (qop != "auth-conf") return absl::OkStatus();
    std::optional<CipherInfo> info = FindCipher(cipher);
    if (!info.has_value()) return absl::UnimplementedError(absl::StrCat("cipher ", cipher));
    // RFC 2831 2.4: 3des and rc4 key from all 16 bytes of H(A1).
    const Bytes kcc =
        Md5(absl::StrCat(ha1, "Digest H(A1) to client-to-server sealing key magic constant"));
    const Bytes kcs =
        Md5(absl::StrCat(ha1, "Digest H(A1) to server-to-client sealing key magic constant"));
    absl::MutexLock send(&send_mu_);
    absl::MutexLock receive(&receive_mu_);
    TONY_RETURN_IF_ERROR(encrypt_.Init(cipher, kcc, /*encrypt=*/true));
    return decrypt_.Init(cipher, kcs, /*encrypt=*/false);
  }

  absl::string_view qop() const override { return qop_; }
  size_t max_wrap_input() const override { return max_input_; }

  absl::StatusOr<std::string> Wrap(absl::string_view plain) override {
    absl::MutexLock lock(&send_mu_);
    const Bytes seq = BigEndian32(send_seq_);
    const Bytes mac = HmacMd5(kic_, absl::StrCat(seq, plain)).substr(0, kMacSize);
    Bytes out;
    if (qop_ == "auth-conf") {
      Bytes clear(plain);
      if (encrypt_.block() > 1) {
        // Padding between message and MAC, 1 to 8 bytes of its own length (RFC 2831 2.4).
        const size_t pad = encrypt_.block() - (plain.size() + kMacSize) % encrypt_.block();
        clear.append(pad, static_cast<char>(pad));
      }
      clear += mac;
      TONY_ASSIGN_OR_RETURN(out, encrypt_.Update(clear));
    } else {
      out = absl::StrCat(plain, mac);
    }
    absl::StrAppend(&out, absl::string_view("\x00\x01", 2), seq);
    ++send_seq_;
    return out;
  }

  absl::StatusOr<std::string> Unwrap(absl::string_view token) override {
    absl::MutexLock lock(&receive_mu_);
    if (token.size() < kMacSize + kTrailerSize) return Refused("a message too short to be one");
    const absl::string_view trailer = token.substr(token.size() - kTrailerSize);
    const Bytes seq = BigEndian32(receive_seq_);
    if (trailer.substr(0, 2) != absl::string_view("\x00\x01", 2)) {
      return Refused("an unknown message type");
    }
    if (trailer.substr(2) != seq) return Refused("a message out of sequence (replayed or lost)");
    absl::string_view body = token.substr(0, token.size() - kTrailerSize);
    Bytes clear;
    if (qop_ == "auth-conf") {
      if (body.size() % decrypt_.block() != 0) return Refused("a message of a bad length");
      TONY_ASSIGN_OR_RETURN(clear, decrypt_.Update(body));
      body = clear;
    }
    const absl::string_view mac = body.substr(body.size() - kMacSize);
    absl::string_view message = body.substr(0, body.size() - kMacSize);
    if (qop_ == "auth-conf" && decrypt_.block() > 1) {
      const unsigned char pad = message.empty() ? 0 : static_cast<unsigned char>(message.back());
      if (pad < 1 || pad > decrypt_.block() || pad > message.size()) {
        return Refused("bad padding");
      }
      for (size_t i = message.size() - pad; i < message.size(); ++i) {
        if (static_cast<unsigned char>(message[i]) != pad) return Refused("bad padding");
      }
      message.remove_suffix(pad);
    }
    const Bytes expected = HmacMd5(kis_, absl::StrCat(seq, message)).substr(0, kMacSize);
    if (CRYPTO_memcmp(expected.data(), mac.data(), kMacSize) != 0) {
      return Refused("a message whose MAC does not match (forged or altered)");
    }
    ++receive_seq_;
    return std::string(message);
  }

 private:
  absl::Status Refused(absl::string_view why) {
    return absl::DataLossError(absl::StrCat("DIGEST-MD5 ", qop_, ": refused ", why));
  }

  std::string qop_;
  Bytes kic_, kis_;
  size_t max_input_ = 65520;
  absl::Mutex send_mu_;
  CipherStream encrypt_ ABSL_GUARDED_BY(send_mu_);
  uint32_t send_seq_ ABSL_GUARDED_BY(send_mu_) = 0;
  absl::Mutex receive_mu_;
  CipherStream decrypt_ ABSL_GUARDED_BY(receive_mu_);
  uint32_t receive_seq_ ABSL_GUARDED_BY(receive_mu_) = 0;
};

int Rank(absl::string_view qop) {
  if (qop == "auth-conf") return 2;
  if (qop == "auth-int") return 1;
  return qop == "auth" ? 0 : -1;
}

// A quoted-string value with its backslash escapes (RFC 2831 uses RFC 2616's quoted-string).
std::string Quote(absl::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

class DigestMd5Mechanism : public SaslMechanism {
 public:
  explicit DigestMd5Mechanism(DigestMd5Options options) : options_(std::move(options)) {}

  absl::string_view name() const override { return "DIGEST-MD5"; }
  bool complete() const override { return state_ == State::kComplete; }
  std::unique_ptr<SaslSecurityLayer> TakeSecurityLayer() override { return std::move(layer_); }

  absl::StatusOr<std::string> Step(absl::string_view server_message) override {
    switch (state_) {
      case State::kChallenge:
        return Respond(server_message);
      case State::kRspauth:
        TONY_RETURN_IF_ERROR(CheckRspauth(server_message));
        state_ = State::kComplete;
        return std::string();
      case State::kComplete:
        break;
    }
    return absl::FailedPreconditionError("DIGEST-MD5 exchange already complete");
  }

 private:
  enum class State { kChallenge, kRspauth, kComplete };

  absl::Status ChooseProtection(const DigestChallenge& c) {
    std::vector<std::string> offered = c.qops.empty() ? std::vector<std::string>{"auth"} : c.qops;
    const int minimum = static_cast<int>(options_.min_protection);
    // The strongest protection offered (unknown qop values are skipped) ...
    qop_ = StrongestQop(offered, /*below=*/Rank("auth-conf") + 1);
    if (qop_.empty() || Rank(qop_) < minimum) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the server offers only ", absl::StrJoin(offered, ", "), ", weaker than ",
          ProtectionName(options_.min_protection), " (", ProtectionQop(options_.min_protection),
          "), the minimum hadoop.rpc.protection on this side asks for"));
    }
    if (qop_ != "auth-conf") return absl::OkStatus();
    // The list as the (unauthenticated) server sent it, escaped for logs and messages.
    const std::string listed =
        c.ciphers.empty() ? "none" : absl::CHexEscape(absl::StrJoin(c.ciphers, ", "));
    // ... with a cipher this side accepts: never the strongest offered on trust, since anyone
    // on the path may have rewritten the list.
    for (const std::string& mine : options_.ciphers) {
      if (std::find(c.ciphers.begin(), c.ciphers.end(), mine) != c.ciphers.end() &&
          FindCipher(mine).has_value()) {
        cipher_ = mine;
        TONY_LOG(INFO) << "DIGEST-MD5: confidentiality (auth-conf) with cipher " << cipher_
                       << " (the server offered " << listed << ")";
        return absl::OkStatus();
      }
    }
    const std::string why = absl::StrCat(
        "the server offers confidentiality (auth-conf) only with ciphers this side refuses (",
        listed, "; accepted: ", absl::StrJoin(options_.ciphers, ", "), "; ", kDigestCiphersKey,
        "=3des,rc4 also accepts rc4, while des, rc4-56 and rc4-40 are never used)");
    // A weaker qop the server also offers, if this side's minimum allows it: an attacker could
    // have struck auth-conf from the list just as well.
    const std::string weaker = StrongestQop(offered, /*below=*/Rank("auth-conf"));
    if (weaker.empty() || Rank(weaker) < minimum) {
      return absl::FailedPreconditionError(absl::StrCat("DIGEST-MD5: ", why));
    }
    TONY_LOG(WARNING) << "DIGEST-MD5: " << why << "; taking " << weaker
                      << ", which hadoop.rpc.protection on this side allows";
    qop_ = weaker;
    return absl::OkStatus();
  }

  // The strongest known qop in `offered` ranked below `below`; empty when none.
  static std::string StrongestQop(const std::vector<std::string>& offered, int below) {
    std::string best;
    for (const std::string& q : offered) {
      if (Rank(q) >= 0 && Rank(q) < below && (best.empty() || Rank(q) > Rank(best))) best = q;
    }
    return best;
  }

  absl::StatusOr<std::string> Respond(absl::string_view challenge) {
    TONY_ASSIGN_OR_RETURN(DigestChallenge c, ParseDigestChallenge(challenge));
    if (c.nonce.empty()) return absl::UnauthenticatedError("DIGEST-MD5 challenge without a nonce");
    TONY_RETURN_IF_ERROR(ChooseProtection(c));
    realm_ = c.realms.empty() ? std::string() : c.realms.front();
    nonce_ = c.nonce;
    cnonce_ = options_.cnonce;
    if (cnonce_.empty()) {
      unsigned char random[30];
      if (RAND_bytes(random, sizeof(random)) != 1) {
        return absl::InternalError("DIGEST-MD5: no random bytes for the client nonce");
      }
      cnonce_ = absl::Base64Escape(absl::string_view(reinterpret_cast<char*>(random), 30));
    }
    digest_uri_ = absl::StrCat(options_.service, "/", options_.host);
    server_maxbuf_ = c.maxbuf;
    const Bytes ss = Md5(absl::StrCat(options_.username, ":", realm_, ":", options_.password));
    ha1_ = Md5(absl::StrCat(ss, ":", nonce_, ":", cnonce_));
    std::vector<std::string> fields;
    if (c.utf8) fields.push_back("charset=utf-8");
    fields.push_back(absl::StrCat("username=", Quote(options_.username)));
    fields.push_back(absl::StrCat("realm=", Quote(realm_)));
    fields.push_back(absl::StrCat("nonce=", Quote(nonce_)));
    fields.push_back("nc=00000001");
    fields.push_back(absl::StrCat("cnonce=", Quote(cnonce_)));
    fields.push_back(absl::StrCat("digest-uri=", Quote(digest_uri_)));
    if (qop_ != "auth") fields.push_back("maxbuf=65536");
    fields.push_back(absl::StrCat("response=", ResponseValue("AUTHENTICATE")));
    fields.push_back(absl::StrCat("qop=", qop_));
    if (!cipher_.empty()) fields.push_back(absl::StrCat("cipher=", Quote(cipher_)));
    state_ = State::kRspauth;
    return absl::StrJoin(fields, ",");
  }

  // RFC 2831 2.1.2.1: the response (method "AUTHENTICATE") or the server's rspauth (method "").
  std::string ResponseValue(absl::string_view method) const {
    std::string a2 = absl::StrCat(method, ":", digest_uri_);
    if (qop_ != "auth") a2 += ":00000000000000000000000000000000";
    return Hex(Md5(
        absl::StrCat(Hex(ha1_), ":", nonce_, ":00000001:", cnonce_, ":", qop_, ":", Hex(Md5(a2)))));
  }

  absl::Status CheckRspauth(absl::string_view message) {
    TONY_ASSIGN_OR_RETURN(DigestChallenge r, ParseDigestChallenge(message));
    const std::string expected = ResponseValue("");
    if (!r.rspauth || r.rspauth_value.size() != expected.size() ||
        CRYPTO_memcmp(r.rspauth_value.data(), expected.data(), expected.size()) != 0) {
      return absl::UnauthenticatedError(
          "DIGEST-MD5: the server's rspauth does not prove it knows the token's password");
    }
    if (qop_ == "auth") return absl::OkStatus();
    auto layer = std::make_unique<DigestLayer>();
    TONY_RETURN_IF_ERROR(layer->Init(qop_, cipher_, ha1_, server_maxbuf_));
    layer_ = std::move(layer);
    return absl::OkStatus();
  }

  const DigestMd5Options options_;
  State state_ = State::kChallenge;
  std::string qop_, cipher_, realm_, nonce_, cnonce_, digest_uri_;
  Bytes ha1_;
  int64_t server_maxbuf_ = 65536;
  std::unique_ptr<SaslSecurityLayer> layer_;
};

// Splits "a=b, c=\"d,e\"" into directives; values unquoted.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SplitDirectives(
    absl::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == ',')) ++i;
  };
  for (skip(); i < text.size(); skip()) {
    const size_t eq = text.find('=', i);
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("DIGEST-MD5: a directive without a value: '", text.substr(i), "'"));
    }
    std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text.substr(i, eq - i)));
    i = eq + 1;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        value.push_back(text[i]);
      }
      if (i >= text.size()) return absl::InvalidArgumentError("DIGEST-MD5: unterminated quote");
      ++i;
    } else {
      const size_t end = std::min(text.find(',', i), text.size());
      value = std::string(absl::StripAsciiWhitespace(text.substr(i, end - i)));
      i = end;
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

void AppendList(absl::string_view value, std::vector<std::string>* out) {
  for (absl::string_view v : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    out->push_back(absl::AsciiStrToLower(absl::StripAsciiWhitespace(v)));
  }
}

}  // namespace

absl::StatusOr<DigestChallenge> ParseDigestChallenge(absl::string_view text) {
  TONY_ASSIGN_OR_RETURN(auto directives, SplitDirectives(text));
  DigestChallenge c;
  for (const auto& [key, value] : directives) {
    if (key == "realm") {
      c.realms.push_back(value);
    } else if (key == "nonce") {
      if (!c.nonce.empty()) return absl::InvalidArgumentError("DIGEST-MD5: two nonces");
      c.nonce = value;
    } else if (key == "qop") {
      AppendList(value, &c.qops);
    } else if (key == "cipher") {
      AppendList(value, &c.ciphers);
    } else if (key == "maxbuf") {
      if (!absl::SimpleAtoi(value, &c.maxbuf) || c.maxbuf < 16 || c.maxbuf > (1 << 24)) {
        return absl::InvalidArgumentError(absl::StrCat("DIGEST-MD5: bad maxbuf '", value, "'"));
      }
    } else if (key == "charset") {
      c.utf8 = absl::EqualsIgnoreCase(value, "utf-8");
    } else if (key == "rspauth") {
      c.rspauth = true;
      c.rspauth_value = absl::AsciiStrToLower(value);
    }
    // algorithm (md5-sess, the only one), stale and unknown directives are ignored (2.1.1).
  }
  return c;
}

absl::StatusOr<std::vector<std::string>> ParseDigestCiphers(absl::string_view value) {
  std::vector<std::string> ciphers;
  for (absl::string_view c : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    ciphers.push_back(absl::AsciiStrToLower(absl::StripAsciiWhitespace(c)));
  }
  if (ciphers.empty()) return std::vector<std::string>{"3des"};
  return CheckCiphers(ciphers, kDigestCiphersKey);
}

absl::StatusOr<std::unique_ptr<SaslMechanism>> NewDigestMd5Mechanism(DigestMd5Options options) {
  if (options.username.empty()) return absl::InvalidArgumentError("DIGEST-MD5 without a user");
  TONY_ASSIGN_OR_RETURN(options.ciphers, CheckCiphers(options.ciphers, "DigestMd5Options.ciphers"));
  return std::unique_ptr<SaslMechanism>(std::make_unique<DigestMd5Mechanism>(std::move(options)));
}

bool DigestCipherAvailable(absl::string_view cipher) { return FindCipher(cipher).has_value(); }

}  // namespace tony::ipc

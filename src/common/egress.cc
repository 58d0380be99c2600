// Copyright libtony authors.

#include "common/egress.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tony {
namespace {

constexpr char kVariable[] = "TONY_ALLOWED_NETWORKS";

bool PrefixMatches(const unsigned char* a, const unsigned char* b, int prefix) {
  const int whole = prefix / 8;
  if (std::memcmp(a, b, whole) != 0) return false;
  const int rest = prefix % 8;
  if (rest == 0) return true;
  const unsigned char mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

}  // namespace

absl::StatusOr<NetworkAllowList> NetworkAllowList::Parse(absl::string_view spec) {
  NetworkAllowList list;
  list.spec_ = std::string(spec);
  for (absl::string_view item : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    Block block;
    absl::string_view address = item;
    int max_prefix = 32;
    const size_t slash = item.find('/');
    if (slash != absl::string_view::npos) address = item.substr(0, slash);
    const std::string text(address);
    if (inet_pton(AF_INET, text.c_str(), block.bytes) == 1) {
      block.family = AF_INET;
    } else if (inet_pton(AF_INET6, text.c_str(), block.bytes) == 1) {
      block.family = AF_INET6;
      max_prefix = 128;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(kVariable, ": '", item, "' is not an IPv4 or IPv6 address or CIDR block"));
    }
    block.prefix = max_prefix;
    if (slash != absl::string_view::npos &&
        (!absl::SimpleAtoi(item.substr(slash + 1), &block.prefix) || block.prefix < 0 ||
         block.prefix > max_prefix)) {
      return absl::InvalidArgumentError(
          absl::StrCat(kVariable, ": '", item, "' has a bad prefix length (0..", max_prefix, ")"));
    }
    list.blocks_.push_back(block);
  }
  return list;
}

bool NetworkAllowList::Allows(const sockaddr* addr) const {
  if (addr == nullptr) return false;
  int family = addr->sa_family;
  const unsigned char* bytes = nullptr;
  if (family == AF_INET) {
    bytes = reinterpret_cast<const unsigned char*>(
        &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr);
  } else if (family == AF_INET6) {
    const in6_addr* a6 = &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
    bytes = reinterpret_cast<const unsigned char*>(a6);
    if (IN6_IS_ADDR_V4MAPPED(a6)) {
      family = AF_INET;
      bytes += 12;
    }
  } else {
    return false;
  }
  for (const Block& b : blocks_) {
    if (b.family == family && PrefixMatches(b.bytes, bytes, b.prefix)) return true;
  }
  return false;
}

std::string LocalHostName(absl::string_view fallback) {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return std::string(fallback);
  return name;
}

std::string SockaddrToString(const sockaddr* addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr == nullptr) return "(no address)";
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, buf, sizeof(buf));
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, buf, sizeof(buf));
  } else {
    return absl::StrCat("(address family ", addr->sa_family, ")");
  }
  return buf;
}

absl::Status CheckEgress(const sockaddr* addr, absl::string_view peer) {
  const char* spec = std::getenv(kVariable);
  if (spec == nullptr || *spec == '\0') return absl::OkStatus();
  absl::StatusOr<NetworkAllowList> list = NetworkAllowList::Parse(spec);
  if (!list.ok()) {
    return absl::PermissionDeniedError(
        absl::StrCat("not connecting to ", peer, ": ", list.status().message()));
  }
  if (list->Allows(addr)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("not connecting to ", peer, " at ",
                                                  SockaddrToString(addr), ": outside ", kVariable,
                                                  "=", list->spec()));
}

absl::Status CheckEgressToHost(absl::string_view host, absl::string_view peer) {
  const char* spec = std::getenv(kVariable);
  if (spec == nullptr || *spec == '\0') return absl::OkStatus();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string name(host);
  if (int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found); rc != 0) {
    // Nothing to connect to: the client's own resolution fails the same way, with its message.
    return absl::OkStatus();
  }
  absl::Status status;
  for (addrinfo* a = found; a != nullptr && status.ok(); a = a->ai_next) {
    status = CheckEgress(a->ai_addr, peer);
  }
  ::freeaddrinfo(found);
  return status;
}

}  // namespace tony

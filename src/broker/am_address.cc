// Copyright libtony authors.

#include "broker/am_address.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tony::broker {

std::string AmAddressName(const AmAddress& a) {
  size_t colon = a.address.rfind(':');
  return absl::StrCat(a.attempt, "_", a.address.substr(0, colon), "_", a.address.substr(colon + 1));
}

std::optional<AmAddress> ParseAmAddressName(absl::string_view name) {
  size_t first = name.find('_');
  size_t last = name.rfind('_');
  if (first == absl::string_view::npos || last == first || last == first + 1) return std::nullopt;
  AmAddress out;
  int port = 0;
  if (!absl::SimpleAtoi(name.substr(0, first), &out.attempt) || out.attempt < 1 ||
      !absl::SimpleAtoi(name.substr(last + 1), &port) || port <= 0 || port > 65535) {
    return std::nullopt;
  }
  out.address = absl::StrCat(name.substr(first + 1, last - first - 1), ":", port);
  return out;
}

std::optional<AmAddress> LatestAmAddress(const std::vector<std::string>& names) {
  std::optional<AmAddress> best;
  for (const std::string& n : names) {
    std::optional<AmAddress> a = ParseAmAddressName(n);
    if (a && (!best || a->attempt > best->attempt)) best = std::move(a);
  }
  return best;
}

}  // namespace tony::broker

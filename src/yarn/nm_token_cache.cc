// Copyright libtony authors.

#include "yarn/nm_token_cache.h"

namespace tony::yarn {

void NmTokenCache::Set(const std::string& node, ipc::Token token) {
  absl::MutexLock lock(&mu_);
  tokens_[node] = std::move(token);
}

std::optional<ipc::Token> NmTokenCache::Get(const std::string& node) const {
  absl::MutexLock lock(&mu_);
  auto it = tokens_.find(node);
  if (it == tokens_.end()) return std::nullopt;
  return it->second;
}

bool NmTokenCache::Contains(const std::string& node) const {
  absl::MutexLock lock(&mu_);
  return tokens_.count(node) > 0;
}

void NmTokenCache::Remove(const std::string& node) {
  absl::MutexLock lock(&mu_);
  tokens_.erase(node);
}

size_t NmTokenCache::size() const {
  absl::MutexLock lock(&mu_);
  return tokens_.size();
}

}  // namespace tony::yarn

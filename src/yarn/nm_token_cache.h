// Copyright libtony authors.
//
// NMTokens by NodeManager address. The RM hands out an NMToken once per (attempt, node), in
// allocate or register responses; the AM must keep it to talk to that node's NodeManager. A
// newer token for a node replaces the old one.

#ifndef TONY_YARN_NM_TOKEN_CACHE_H_
#define TONY_YARN_NM_TOKEN_CACHE_H_

#include <map>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "ipc/token.h"

namespace tony::yarn {

// Thread-safe; shared by AmRmClient (writer) and NmClient (reader).
class NmTokenCache {
 public:
  // node: the NodeManager's "host:port" (NodeId::ToString()).
  void Set(const std::string& node, ipc::Token token);
  std::optional<ipc::Token> Get(const std::string& node) const;
  bool Contains(const std::string& node) const;
  void Remove(const std::string& node);
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, ipc::Token> tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::yarn

#endif  // TONY_YARN_NM_TOKEN_CACHE_H_

// Copyright libtony authors.
//
// An in-memory NameNode and DataNode on loopback for unit tests of what the submitter stages
// (artifact_cache_test, yarn_submit_test). Thread-safe: requests arrive on server threads.

#ifndef TONY_TESTS_SUBMIT_IN_MEMORY_HDFS_H_
#define TONY_TESTS_SUBMIT_IN_MEMORY_HDFS_H_

#include <openssl/evp.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "submit/artifact_cache.h"
#include "tests/http/test_http_server.h"

namespace tony::submit::test_hdfs {

using Reply = ::tony::testing::TestHttpServer::Reply;
using Request = ::tony::testing::TestHttpServer::Request;
using ::tony::testing::TestHttpServer;

inline constexpr char kPrefix[] = "/webhdfs/v1";

inline std::string Decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int byte = 0;
    if (s[i] == '%' && i + 2 < s.size() && absl::SimpleHexAtoi(s.substr(i + 1, 2), &byte)) {
      out.push_back(static_cast<char>(byte));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// An in-memory NameNode and DataNode on loopback: a tree of directories and files with modes,
// owners and extended attributes, enough of WebHDFS for the cache (GETFILESTATUS, MKDIRS,
// two-step CREATE, RENAME, DELETE, SETXATTR, GETXATTRS) and for reading aggregated logs
// (LISTSTATUS, two-step OPEN). Requests act as user "u".
class InMemoryHdfs {
 public:
  InMemoryHdfs()
      : datanode_([this](const Request& r) { return DataNode(r); }),
        namenode_([this](const Request& r) { return NameNode(r); }) {
    for (const char* dir : {"/", "/user", "/user/u"}) nodes_[dir] = {true, 0755, "", 1, "u", {}};
  }

  std::string namenode() const { return absl::StrCat("127.0.0.1:", namenode_.port()); }

  void MakeDir(const std::string& path, int mode, const std::string& owner = "u") {
    absl::MutexLock lock(&mu_);
    nodes_[path] = {true, mode, "", ++clock_, owner, {}};
  }
  void SetMode(const std::string& path, int mode) {
    absl::MutexLock lock(&mu_);
    nodes_.at(path).mode = mode;
  }
  // A file as another client left it: `owner`'s, with the SHA-256 of `recorded_for` (of `data`
  // itself by default; "" for none) recorded as the cache does.
  void PutFile(const std::string& path, const std::string& data, const std::string& owner = "u",
               std::optional<std::string> recorded_for = std::nullopt) {
    absl::MutexLock lock(&mu_);
    Node n{false, 0644, data, ++clock_, owner, {}};
    const std::string hashed = recorded_for.value_or(data);
    if (!hashed.empty()) n.xattrs[kSha256XAttr] = Sha256(hashed);
    nodes_[path] = std::move(n);
  }
  std::optional<std::string> Data(const std::string& path) {
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return std::nullopt;
    return it->second.data;
  }
  // Paths under `dir`, recursively.
  std::vector<std::string> Under(const std::string& dir) {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [path, node] : nodes_) {
      if (absl::StartsWith(path, dir + "/")) out.push_back(path);
    }
    return out;
  }
  int creates() {
    absl::MutexLock lock(&mu_);
    return creates_;
  }
  bool Exists(const std::string& path) {
    absl::MutexLock lock(&mu_);
    return nodes_.count(path) > 0;
  }
  // Runs (without the lock) before a RENAME is carried out: another client's doing meanwhile.
  std::function<void()> before_rename;
  // Sees every NameNode request first (without the lock; on a server thread) and may answer it
  // instead: e.g. hold it (Reply::delay) or cancel the client meanwhile. Set before use.
  std::function<std::optional<Reply>(const std::string& op, const std::string& path)> intercept;

 private:
  struct Node {
    bool dir = false;
    int mode = 0;
    std::string data;
    int64_t mtime = 0;
    std::string owner = "u";
    std::map<std::string, std::string> xattrs;
  };

  static std::string Sha256(const std::string& data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
    return std::string(reinterpret_cast<char*>(out), len);
  }

  static Reply Json(std::string body) {
    Reply r;
    r.body = std::move(body);
    return r;
  }
  static Reply Remote(int status, const std::string& exception, const std::string& message) {
    Reply r;
    r.status = status;
    r.body = absl::StrCat(R"({"RemoteException":{"exception":")", exception,
                          R"(","javaClassName":"org.apache.hadoop.x.)", exception,
                          R"(","message":")", message, R"("}})");
    return r;
  }
  static int ModeParam(const Request& r, int fallback) {
    int mode = fallback;
    if (auto p = r.Param("permission")) {
      mode = static_cast<int>(std::strtol(p->c_str(), nullptr, 8));
    }
    return mode;
  }

  Reply NameNode(const Request& r) {
    const std::string op = r.Param("op").value_or("");
    std::string path = Decode(r.path.substr(sizeof(kPrefix) - 1));
    if (path.empty()) path = "/";
    if (op == "RENAME" && before_rename) before_rename();
    if (intercept) {
      if (std::optional<Reply> reply = intercept(op, path)) return *std::move(reply);
    }
    absl::MutexLock lock(&mu_);
    if (op == "GETFILESTATUS") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      const Node& n = it->second;
      return Json(absl::StrFormat(
          R"({"FileStatus":{"length":%d,"modificationTime":%d,"pathSuffix":"","permission":"%o","type":"%s","owner":"%s"}})",
          n.data.size(), n.mtime, n.mode, n.dir ? "DIRECTORY" : "FILE", n.owner));
    }
    if (op == "SETXATTR") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      if (it->second.owner != "u") return Remote(403, "AccessControlException", "not the owner");
      const std::string param = r.Param("xattr.value").value_or("");
      absl::string_view value = param;
      if (!absl::ConsumePrefix(&value, "0x")) return Remote(400, "IllegalArgumentException", "hex");
      const std::string name = Decode(r.Param("xattr.name").value_or(""));
      const bool exists = it->second.xattrs.count(name) > 0;
      if (r.Param("flag") == "CREATE" && exists) {
        return Remote(400, "IOException", "XAttr: " + name + " already exists");
      }
      it->second.xattrs[name] = absl::HexStringToBytes(value);
      return Json("");
    }
    if (op == "GETXATTRS") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      const std::string name = Decode(r.Param("xattr.name").value_or(""));
      auto x = it->second.xattrs.find(name);
      if (x == it->second.xattrs.end()) {
        return Remote(403, "IOException", "At least one of the attributes provided was not found.");
      }
      return Json(absl::StrCat(R"({"XAttrs":[{"name":")", name, R"(","value":"0x)",
                               absl::BytesToHexString(x->second), R"("}]})"));
    }
    if (op == "MKDIRS") {
      for (std::string p = path; p != "/" && !nodes_.count(p); p = Parent(p)) {
        nodes_[p] = {true, ModeParam(r, 0755), "", ++clock_, "u", {}};
      }
      return Json(R"({"boolean":true})");
    }
    if (op == "LISTSTATUS") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      std::string entries;
      const std::string prefix = path == "/" ? "/" : path + "/";
      for (auto c = nodes_.lower_bound(prefix);
           c != nodes_.end() && absl::StartsWith(c->first, prefix); ++c) {
        const std::string name = c->first.substr(prefix.size());
        if (name.find('/') != std::string::npos) continue;
        absl::StrAppend(
            &entries, entries.empty() ? "" : ",",
            absl::StrFormat(R"({"length":%d,"modificationTime":%d,"pathSuffix":"%s",)"
                            R"("permission":"%o","type":"%s","owner":"%s"})",
                            c->second.data.size(), c->second.mtime, name, c->second.mode,
                            c->second.dir ? "DIRECTORY" : "FILE", c->second.owner));
      }
      return Json(absl::StrCat(R"({"FileStatuses":{"FileStatus":[)", entries, "]}}"));
    }
    if (op == "CREATE" || op == "OPEN") {
      if (op == "OPEN" && !nodes_.count(path)) {
        return Remote(404, "FileNotFoundException", "no " + path);
      }
      Reply reply;
      reply.status = 307;
      reply.headers = {{"Location", absl::StrCat(datanode_.url(), r.target)}};
      return reply;
    }
    if (op == "RENAME") {
      const std::string to = Decode(r.Param("destination").value_or(""));
      if (!nodes_.count(path) || nodes_.count(to)) return Json(R"({"boolean":false})");
      nodes_[to] = nodes_[path];
      nodes_.erase(path);
      return Json(R"({"boolean":true})");
    }
    if (op == "SETPERMISSION") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      it->second.mode = ModeParam(r, it->second.mode);
      return Json("");
    }
    if (op == "DELETE") {
      if (!nodes_.erase(path)) return Json(R"({"boolean":false})");
      if (r.Param("recursive") == "true") {
        for (auto it = nodes_.lower_bound(path + "/");
             it != nodes_.end() && absl::StartsWith(it->first, path + "/");) {
          it = nodes_.erase(it);
        }
      }
      return Json(R"({"boolean":true})");
    }
    return Remote(400, "IllegalArgumentException", "op " + op);
  }

  Reply DataNode(const Request& r) {
    const std::string path = Decode(r.path.substr(sizeof(kPrefix) - 1));
    absl::MutexLock lock(&mu_);
    if (r.Param("op") == "OPEN") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      return Json(it->second.data);
    }
    if (r.Param("overwrite") == "false" && nodes_.count(path)) {
      return Remote(403, "FileAlreadyExistsException", path + " already exists");
    }
    if (!nodes_.count(Parent(path))) return Remote(404, "FileNotFoundException", "no parent");
    ++creates_;
    nodes_[path] = {false, ModeParam(r, 0644), r.body, ++clock_, "u", {}};
    Reply reply;
    reply.status = 201;
    return reply;
  }

  static std::string Parent(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
  }

  absl::Mutex mu_;
  std::map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
  int64_t clock_ ABSL_GUARDED_BY(mu_) = 100;
  int creates_ ABSL_GUARDED_BY(mu_) = 0;
  TestHttpServer datanode_;
  TestHttpServer namenode_;
};

}  // namespace tony::submit::test_hdfs

#endif  // TONY_TESTS_SUBMIT_IN_MEMORY_HDFS_H_

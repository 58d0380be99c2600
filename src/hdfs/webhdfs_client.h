// Copyright libtony authors.
//
// A WebHDFS (REST) client for the files libtony stages on HDFS: mkdirs, upload (streamed from a
// local file), stat, read, list, delete, set permission. Paths are plain absolute paths
// ("/user/x/f") or URIs of the configured file system ("hdfs://nn:8020/user/x/f").
//
// Errors: Hadoop's RemoteException documents become absl codes (FileNotFoundException →
// NotFound, AccessControlException → PermissionDenied, SafeModeException → Unavailable "NameNode
// is in safe mode", FileAlreadyExistsException → AlreadyExists, ...; see remote_exception.h); an
// unreachable NameNode is Unavailable naming its address. With several NameNodes (HA) a request
// that finds a NameNode unreachable or in standby moves on to the next one.
//
// Authentication: on insecure clusters requests carry ?user.name=<user>; on Kerberos clusters
// the client authenticates to the NameNode with SPNEGO (the process's Kerberos credentials), or,
// inside a job's containers, with the job's HDFS delegation token (?delegation=). Redirects to
// DataNodes carry the delegation token the NameNode puts into them.
//
// Thread-safety: thread-safe; one client may serve many threads.

#ifndef TONY_HDFS_WEBHDFS_CLIENT_H_
#define TONY_HDFS_WEBHDFS_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/configuration.h"
#include "http/client.h"
#include "http/json.h"
#include "ipc/token.h"

namespace tony::hdfs {

// The PEM file of CA certificates the cluster's HTTPS endpoints chain to: libcurl cannot read
// Hadoop's JKS trust stores (ssl-client.xml), so libtony's clients take this key from the
// configuration (core-site.xml) instead. Unset: the system's CA store.
inline constexpr char kCaFileKey[] = "tony.ssl.ca-file";

enum class FileType { kFile, kDirectory, kSymlink };

struct FileStatus {
  // Absolute path (for List: the listed directory joined with the entry's name).
  std::string path;
  // The last path component.
  std::string name;
  FileType type = FileType::kFile;
  int64_t length = 0;
  // Milliseconds since the epoch, exactly as the NameNode reports them: YARN compares a local
  // resource's timestamp with this value.
  int64_t modification_time_ms = 0;
  int64_t access_time_ms = 0;
  // Permission bits, e.g. 0644 (sticky bit 01000 included).
  int permission = 0;
  std::string owner;
  std::string group;
  int replication = 0;
  int64_t block_size = 0;

  bool is_directory() const { return type == FileType::kDirectory; }
};

struct UploadOptions {
  // Replace an existing file; without it an existing file is AlreadyExists. Default: true.
  bool overwrite = true;
  // Permission of the new file. Default: the NameNode's (0644 less its umask).
  std::optional<int> permission;
  // Default: the cluster's dfs.replication.
  std::optional<int> replication;
};

class WebHdfsClient {
 public:
  struct Options {
    // NameNode web addresses, "host:port", tried in order (several for HA). Required.
    std::vector<std::string> namenodes;
    // "http" or "https". Default: "http".
    std::string scheme = "http";
    // HTTPS: the CA certificates (PEM file) the NameNodes' and DataNodes' certificates chain to
    // (tony.ssl.ca-file). Default: "" (the system's CA store).
    std::string ca_file;
    // fs.defaultFS, e.g. "hdfs://nn:8020": hdfs:// paths must name this file system. Empty:
    // any hdfs:// authority is accepted. Default: empty.
    std::string default_fs;
    // The user.name of requests. Default: empty, meaning conf::HadoopUserName().
    std::string user;
    // Kerberos cluster: SPNEGO to the NameNode instead of user.name. Default: false.
    bool spnego = false;
    // With spnego: the GSS-API credential cache to authenticate from, asked before each
    // request (a keytab login's, which renews its tickets there when asked:
    // ipc::KerberosLogin). Default: none, the process's default credentials (KRB5CCNAME).
    std::function<absl::StatusOr<std::string>()> spnego_ccache;
    // An HDFS delegation token (EncodeTokenUrlString form): sent as delegation= instead of
    // user.name or SPNEGO. Default: empty.
    std::string delegation;
    // Connecting to a NameNode or DataNode. Default: 5 s.
    absl::Duration connect_timeout = absl::Seconds(5);
    // A metadata request (everything but moving file data). Default: 30 s.
    absl::Duration request_timeout = absl::Seconds(30);
    // Moving one file's data (upload or read). Default: 30 min.
    absl::Duration transfer_timeout = absl::Minutes(30);
  };

  // The NameNode addresses, scheme and default file system of a Hadoop configuration; spnego
  // on Kerberos clusters (hadoop.security.authentication=kerberos).
  static absl::StatusOr<Options> OptionsFromConfiguration(const conf::Configuration& conf);

  // InvalidArgument without NameNodes or with a bad scheme.
  static absl::StatusOr<std::unique_ptr<WebHdfsClient>> Create(Options options);

  const Options& options() const { return options_; }

  // A client like this one whose every request (NameNode and DataNode, uploads included) also
  // ends by `deadline`, with DeadlineExceeded naming what did not answer; once it has passed,
  // nothing more is asked. For a whole operation of many requests (a job's staging) under one
  // caller's deadline. It has its own connections.
  std::unique_ptr<WebHdfsClient> BoundedBy(absl::Time deadline) const;

  // A delegation token for the current user (GETDELEGATIONTOKEN) that `renewer` (a principal
  // such as the ResourceManager's, or a short name) may renew, as an HDFS_DELEGATION_TOKEN for
  // the NameNode RPC address `rpc_service` ("ip:port"), the form Hadoop's RPC clients select
  // (e.g. `hdfs dfs` inside a container with HADOOP_TOKEN_FILE_LOCATION).
  absl::StatusOr<ipc::Token> GetDelegationToken(absl::string_view renewer,
                                                absl::string_view rpc_service) const;

  // Creates the directory and its missing parents. OK if it already exists.
  absl::Status Mkdirs(absl::string_view path, std::optional<int> permission = std::nullopt) const;

  // Streams a local file to `path` (CREATE: NameNode → 307 → DataNode → 201) and returns the
  // new file's status (its modification time is what YARN localization checks).
  absl::StatusOr<FileStatus> Upload(const std::string& local_path, absl::string_view path,
                                    const UploadOptions& options = {}) const;
  // As Upload, from memory: for small files.
  absl::StatusOr<FileStatus> UploadString(std::string data, absl::string_view path,
                                          const UploadOptions& options = {}) const;
  // Replaces `path` with `data` so that a reader sees the old contents or the new, never a
  // truncated file (an overwriting CREATE empties the file until its upload completes): uploads
  // a temporary file beside it, then renames it over `path` (RenameReplacing). A failed call
  // leaves `path` as it was and no temporary file.
  absl::StatusOr<FileStatus> ReplaceWithString(std::string data, absl::string_view path,
                                               const UploadOptions& options = {}) const;

  // Appends `data` to `path` (APPEND: NameNode -> 307 -> DataNode -> 200), creating the file
  // with `options` (CREATE, never overwriting) when it does not exist. Each call opens and closes
  // the file: for small, infrequent writes such as the job's event log. A call that failed may
  // have appended part of `data`.
  absl::Status AppendString(const std::string& data, absl::string_view path,
                            const UploadOptions& options = {}) const;

  // GETFILESTATUS. NotFound if the path does not exist.
  absl::StatusOr<FileStatus> Stat(absl::string_view path) const;
  // The home directory of the user the NameNode takes this client for ("/user/alice"): on a
  // Kerberos cluster, the principal's name after the cluster's auth_to_local rules.
  absl::StatusOr<std::string> HomeDirectory() const;
  absl::StatusOr<bool> Exists(absl::string_view path) const;

  // LISTSTATUS of a directory, sorted by name as the NameNode returns it; a file lists itself.
  absl::StatusOr<std::vector<FileStatus>> List(absl::string_view path) const;

  // Reads a whole file into memory; ResourceExhausted beyond `max_bytes`. Ends by `deadline`
  // too (DeadlineExceeded naming the NameNode or DataNode).
  absl::StatusOr<std::string> ReadToString(absl::string_view path,
                                           int64_t max_bytes = int64_t{64} << 20,
                                           absl::Time deadline = absl::InfiniteFuture()) const;
  // Reads a whole file into `local_path`, written to a temporary sibling and renamed, so that
  // `local_path` never holds a partial file.
  absl::Status ReadToFile(absl::string_view path, const std::string& local_path) const;

  // Deletes a file or (with `recursive`) a directory tree. Returns false if nothing was there.
  // Ends by `deadline` too.
  absl::StatusOr<bool> Delete(absl::string_view path, bool recursive,
                              absl::Time deadline = absl::InfiniteFuture()) const;

  absl::Status SetPermission(absl::string_view path, int permission) const;
  // Sets the owner and/or the group of `path` (SETOWNER; an empty one stays as it is). Only the
  // superuser may change an owner; a file's owner may give it a group it belongs to.
  absl::Status SetOwner(absl::string_view path, absl::string_view owner,
                        absl::string_view group) const;

  // Extended attributes (the NameNode's dfs.namenode.xattrs.enabled, on by default): `name`
  // with its namespace ("user.tony.sha256"), `value` any bytes (sent hex-encoded). Only the
  // file's owner (or the superuser) may set a "user." attribute. Replaces an existing one.
  absl::Status SetXAttr(absl::string_view path, absl::string_view name,
                        absl::string_view value) const;
  // The attribute's value; nullopt when the file has none of that name.
  absl::StatusOr<std::optional<std::string>> GetXAttr(absl::string_view path,
                                                      absl::string_view name) const;

  // Renames a file or directory, atomically on the NameNode. Returns false, as HDFS does, when
  // nothing moved (no `from`, or `to` already exists): a rename never replaces a file.
  absl::StatusOr<bool> Rename(absl::string_view from, absl::string_view to) const;
  // Renames file `from` to `to`, replacing `to` if it is there, in one NameNode operation
  // (HDFS's rename with Options.Rename.OVERWRITE; WebHDFS `renameoptions=OVERWRITE`). Errors,
  // as HDFS's exceptions, when `from` is missing or `to` is a directory.
  absl::Status RenameReplacing(absl::string_view from, absl::string_view to) const;

  // The absolute path of `path` on this file system: strips and checks the scheme and
  // authority of a URI, drops duplicate and trailing slashes.
  absl::StatusOr<std::string> ResolvePath(absl::string_view path) const;

 private:
  explicit WebHdfsClient(Options options);

  // One WebHDFS request to the NameNode(s) for `op` on the resolved `path`, with HA failover.
  // `extra` is appended to the query ("&k=v..."). The response may have any HTTP status. Each
  // request ends by `deadline` as well as after request_timeout.
  absl::StatusOr<http::Response> CallNameNode(http::Method method, const std::string& path,
                                              absl::string_view op, absl::string_view extra,
                                              absl::Time deadline = absl::InfiniteFuture()) const;
  // CallNameNode for a request answered with JSON on success.
  absl::StatusOr<http::Json> CallJson(http::Method method, const std::string& path,
                                      absl::string_view op, absl::string_view extra,
                                      absl::Time deadline = absl::InfiniteFuture()) const;
  // The DataNode location of a CREATE or OPEN (the NameNode's 307).
  absl::StatusOr<std::string> Redirect(http::Method method, const std::string& path,
                                       absl::string_view op, absl::string_view extra,
                                       absl::Time deadline = absl::InfiniteFuture()) const;
  // Sends a file's bytes (request.url: where the NameNode redirected) to the DataNode; `what`
  // names the operation for the caller's errors. Transport errors come back named.
  absl::StatusOr<http::Response> SendToDataNode(http::Request& request, http::Method method,
                                                absl::Duration timeout, absl::string_view op,
                                                const std::string& path, std::string* what) const;
  absl::StatusOr<FileStatus> UploadRequest(http::Request request, absl::string_view path,
                                           const UploadOptions& options) const;

  Options options_;
  std::string user_;
  http::Client http_;
  // Every request ends by it too (BoundedBy).
  absl::Time bound_ = absl::InfiniteFuture();
  // Index into options_.namenodes of the NameNode that answered last (the active one).
  mutable std::atomic<size_t> active_{0};
};

// Parses a WebHDFS FileStatus JSON object. `dir` is the path it belongs to (for List, the
// listed directory; for Stat, the path itself).
absl::StatusOr<FileStatus> ParseFileStatus(const http::Json& json, absl::string_view dir);

// Why a DataNode URL from a NameNode's Location (a redirect) is refused, or "" when it may be
// used with `scheme`: no user information, a host that is no link-local, multicast or
// unspecified address in any spelling, a numeric port, no control character or backslash.
std::string BadDataNodeUrl(absl::string_view url, absl::string_view scheme);

}  // namespace tony::hdfs

#endif  // TONY_HDFS_WEBHDFS_CLIENT_H_

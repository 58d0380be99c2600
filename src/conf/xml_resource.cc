// Copyright libtony authors.

#include "conf/xml_resource.h"

#include <expat.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tony::conf {
namespace {

// Guards against include cycles (a.xml includes b.xml includes a.xml).
constexpr int kMaxIncludeDepth = 10;
// Hadoop's core-default.xml, the largest resource there is, has about 150 KB.
constexpr int64_t kMaxResourceBytes = 16 << 20;

absl::StatusOr<std::vector<XmlProperty>> ParseWithDepth(absl::string_view xml,
                                                        const std::string& name,
                                                        const std::string& base_dir, int depth);

absl::StatusOr<std::vector<XmlProperty>> ParseFileWithDepth(const std::string& path, int depth) {
  // Only regular files of sane size: an include of /dev/zero or a FIFO would read forever.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot read ", path, ": not a regular file"));
    }
    if (st.st_size > kMaxResourceBytes) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot read ", path, ": ", st.st_size,
                       " bytes; a configuration file may have at most ", kMaxResourceBytes));
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string message = absl::StrCat("cannot read ", path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES) return absl::PermissionDeniedError(message);
    return absl::FailedPreconditionError(message);
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  std::string dir;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  return ParseWithDepth(buffer.str(), path, dir, depth);
}

absl::string_view LocalName(const XML_Char* name) {
  absl::string_view n(name);
  if (size_t colon = n.find(':'); colon != absl::string_view::npos) n.remove_prefix(colon + 1);
  return n;
}

class Parser {
 public:
  Parser(const std::string& name, const std::string& base_dir, int depth)
      : name_(name), base_dir_(base_dir), depth_(depth) {}

  absl::StatusOr<std::vector<XmlProperty>> Run(absl::string_view xml) {
    XML_Parser parser = XML_ParserCreate(nullptr);
    if (parser == nullptr) return absl::ResourceExhaustedError("XML_ParserCreate failed");
    parser_ = parser;
    XML_SetUserData(parser, this);
    XML_SetElementHandler(parser, &Parser::OnStart, &Parser::OnEnd);
    XML_SetCharacterDataHandler(parser, &Parser::OnText);
    XML_Status result = XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), XML_TRUE);
    if (result != XML_STATUS_OK && error_.ok()) {
      error_ = absl::InvalidArgumentError(absl::StrCat(
          name_, ":", XML_GetCurrentLineNumber(parser), ":", XML_GetCurrentColumnNumber(parser) + 1,
          ": malformed XML: ", XML_ErrorString(XML_GetErrorCode(parser))));
    }
    XML_ParserFree(parser);
    if (!error_.ok()) return error_;
    return std::move(properties_);
  }

 private:
  struct Include {
    std::string href;
    bool loaded = false;
    bool fallback_seen = false;
  };

  std::string Here() const {
    return absl::StrCat(name_, ":", XML_GetCurrentLineNumber(parser_), ":",
                        XML_GetCurrentColumnNumber(parser_) + 1);
  }

  void Fail(absl::Status status) {
    if (error_.ok()) error_ = std::move(status);
    XML_StopParser(parser_, XML_FALSE);
  }

  void Start(absl::string_view element, const XML_Char** attrs) {
    if (skip_depth_ > 0) {
      ++skip_depth_;
      return;
    }
    // A copy: the push below may move the strings of stack_.
    const std::string parent = stack_.empty() ? std::string() : stack_.back();
    stack_.emplace_back(element);
    if (parent.empty()) {
      if (element != "configuration") {
        Fail(absl::InvalidArgumentError(
            absl::StrCat(Here(), ": root element is <", element, ">, expected <configuration>")));
      }
      return;
    }
    if (element == "property") {
      if (in_property_) {
        Fail(absl::InvalidArgumentError(absl::StrCat(Here(), ": <property> inside <property>")));
        return;
      }
      in_property_ = true;
      current_ = XmlProperty();
      current_.location = absl::StrCat(name_, ":", XML_GetCurrentLineNumber(parser_));
      for (int i = 0; attrs[i] != nullptr; i += 2) {
        absl::string_view key = attrs[i];
        if (key == "name") current_.name = std::string(absl::StripAsciiWhitespace(attrs[i + 1]));
        if (key == "value") current_.value = attrs[i + 1];
        if (key == "final") current_.final = absl::StripAsciiWhitespace(attrs[i + 1]) == "true";
      }
      return;
    }
    if (in_property_) {
      collecting_ = element == "name" || element == "value" || element == "final";
      text_.clear();
      return;
    }
    if (element == "include") {
      StartInclude(attrs);
      return;
    }
    if (element == "fallback") {
      if (parent != "include" || includes_.empty()) {
        Fail(absl::InvalidArgumentError(absl::StrCat(Here(), ": <fallback> outside <include>")));
        return;
      }
      if (includes_.back().loaded) {
        // The include worked: the fallback's content is ignored.
        stack_.pop_back();
        skip_depth_ = 1;
        return;
      }
      includes_.back().fallback_seen = true;
    }
    // <configuration> nested in an include's fallback, or unknown elements: nothing to do.
  }

  void StartInclude(const XML_Char** attrs) {
    Include include;
    for (int i = 0; attrs[i] != nullptr; i += 2) {
      if (absl::string_view(attrs[i]) == "href") include.href = attrs[i + 1];
    }
    if (include.href.empty()) {
      Fail(absl::InvalidArgumentError(absl::StrCat(Here(), ": <include> without href")));
      return;
    }
    if (depth_ >= kMaxIncludeDepth) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat(Here(), ": includes nested deeper than ", kMaxIncludeDepth, " (a cycle?)")));
      return;
    }
    std::string path = include.href;
    if (absl::StartsWith(path, "file://")) path = path.substr(7);
    if (path.empty() || path[0] != '/') {
      path = base_dir_.empty() ? path : absl::StrCat(base_dir_, "/", path);
    }
    auto included = ParseFileWithDepth(path, depth_ + 1);
    if (included.ok()) {
      include.loaded = true;
      for (XmlProperty& p : *included) properties_.push_back(std::move(p));
    } else if (!absl::IsNotFound(included.status())) {
      Fail(absl::Status(included.status().code(),
                        absl::StrCat(Here(), ": in included file: ", included.status().message())));
      return;
    }
    includes_.push_back(std::move(include));
  }

  void End(absl::string_view element) {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return;
    }
    if (stack_.empty()) return;
    stack_.pop_back();
    if (in_property_ && element == "property") {
      in_property_ = false;
      if (current_.name.empty()) {
        Fail(absl::InvalidArgumentError(
            absl::StrCat(current_.location, ": <property> without a <name>")));
        return;
      }
      properties_.push_back(std::move(current_));
      return;
    }
    if (in_property_) {
      if (collecting_) {
        if (element == "name") current_.name = std::string(absl::StripAsciiWhitespace(text_));
        if (element == "value") current_.value = text_;
        if (element == "final") current_.final = absl::StripAsciiWhitespace(text_) == "true";
      }
      collecting_ = false;
      return;
    }
    if (element == "include" && !includes_.empty()) {
      Include include = std::move(includes_.back());
      includes_.pop_back();
      if (!include.loaded && !include.fallback_seen) {
        Fail(absl::NotFoundError(absl::StrCat(Here(), ": included file '", include.href,
                                              "' does not exist and there is no <fallback>")));
      }
    }
  }

  static void OnStart(void* self, const XML_Char* name, const XML_Char** attrs) {
    static_cast<Parser*>(self)->Start(LocalName(name), attrs);
  }
  static void OnEnd(void* self, const XML_Char* name) {
    static_cast<Parser*>(self)->End(LocalName(name));
  }
  static void OnText(void* self, const XML_Char* s, int len) {
    auto* p = static_cast<Parser*>(self);
    if (p->collecting_ && p->skip_depth_ == 0) p->text_.append(s, len);
  }

  const std::string& name_;
  const std::string& base_dir_;
  const int depth_;
  XML_Parser parser_ = nullptr;
  absl::Status error_;
  std::vector<std::string> stack_;
  std::vector<Include> includes_;
  int skip_depth_ = 0;
  bool in_property_ = false;
  bool collecting_ = false;
  XmlProperty current_;
  std::string text_;
  std::vector<XmlProperty> properties_;
};

absl::StatusOr<std::vector<XmlProperty>> ParseWithDepth(absl::string_view xml,
                                                        const std::string& name,
                                                        const std::string& base_dir, int depth) {
  Parser parser(name, base_dir, depth);
  return parser.Run(xml);
}

}  // namespace

absl::StatusOr<std::vector<XmlProperty>> ParseXmlResource(absl::string_view xml,
                                                          const std::string& name,
                                                          const std::string& base_dir) {
  return ParseWithDepth(xml, name, base_dir, 0);
}

absl::StatusOr<std::vector<XmlProperty>> ParseXmlResourceFile(const std::string& path) {
  return ParseFileWithDepth(path, 0);
}

}  // namespace tony::conf

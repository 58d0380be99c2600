// Copyright libtony authors.
//
// Parses one Hadoop configuration resource (core-site.xml and friends) into its properties, in
// document order. Accepts what Hadoop's own parser accepts: <property> with <name>, <value>,
// <final> children or name/value/final attributes, nested <configuration> elements, and
// XInclude (<xi:include href="..."> with an optional <xi:fallback>), hrefs relative to the
// including file. Errors carry file:line:column.
//
// Thread-safety: stateless functions; safe to call concurrently.

#ifndef TONY_CONF_XML_RESOURCE_H_
#define TONY_CONF_XML_RESOURCE_H_

#include <optional>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace tony::conf {

struct XmlProperty {
  std::string name;
  // Unset when the property has no <value>: Hadoop ignores such properties.
  std::optional<std::string> value;
  bool final = false;
  // "file:line" of the <property> element, for diagnostics.
  std::string location;
};

// Parses `xml`; `name` is used in error messages and `base_dir` resolves relative XInclude hrefs
// (empty: the current directory).
absl::StatusOr<std::vector<XmlProperty>> ParseXmlResource(absl::string_view xml,
                                                          const std::string& name,
                                                          const std::string& base_dir);

// Reads and parses a file. NotFound if it does not exist.
absl::StatusOr<std::vector<XmlProperty>> ParseXmlResourceFile(const std::string& path);

}  // namespace tony::conf

#endif  // TONY_CONF_XML_RESOURCE_H_

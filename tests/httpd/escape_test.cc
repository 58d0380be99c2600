// Copyright libtony authors.

#include "httpd/escape.h"

#include "gtest/gtest.h"

namespace tony::httpd {
namespace {

TEST(HtmlEscapeTest, LeavesNoMarkupInTextOrQuotedAttributes) {
  EXPECT_EQ(HtmlEscape("worker:0 <b>\"a\" & 'b'</b>"),
            "worker:0 &lt;b&gt;&quot;a&quot; &amp; 'b'&lt;/b&gt;");
  EXPECT_EQ(HtmlEscape("&amp;"), "&amp;amp;");  // escaped again: the text is never markup
  EXPECT_EQ(HtmlEscape(""), "");
}

TEST(PrometheusLabelTest, EscapesBackslashQuoteAndNewlineOnly) {
  EXPECT_EQ(PrometheusLabel("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(PrometheusLabel("<RUNNING> & 'x'"), "<RUNNING> & 'x'");
  EXPECT_EQ(PrometheusLabel(""), "");
}

}  // namespace
}  // namespace tony::httpd

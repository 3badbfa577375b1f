// Key -> subject tokens, lease ID hex and Natcd-Key header escaping
// (adapters/nats/codec/subject.h). Reference: DESIGN.md "Live event subjects".

#include "adapters/nats/codec/subject.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace natcd::nats {
namespace {

std::string RoundTrip(const std::string& key) {
  std::string back = "unchanged";
  EXPECT_TRUE(SubjectTokensToKey(KeyToSubjectTokens(key), &back)) << KeyToSubjectTokens(key);
  return back;
}

// A subject token as NATS sees it: non-empty, no whitespace, no '.', and
// not a wildcard.
void ExpectValidTokens(const std::string& tokens) {
  ASSERT_FALSE(tokens.empty());
  size_t start = 0;
  for (;;) {
    const size_t dot = tokens.find('.', start);
    const std::string token = tokens.substr(start, dot == std::string::npos ? dot : dot - start);
    EXPECT_FALSE(token.empty()) << tokens;
    EXPECT_NE(token, "*") << tokens;
    EXPECT_NE(token, ">") << tokens;
    for (char c : token) {
      EXPECT_TRUE(c >= 0x21 && c <= 0x7e) << tokens;
      EXPECT_NE(c, '*') << tokens;
      EXPECT_NE(c, '>') << tokens;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
}

TEST(Subject, DesignExamples) {
  EXPECT_EQ(KeyToSubjectTokens("/registry/pods/default/web-1"), "registry.pods.default.web-1");
  EXPECT_EQ(KeyToSubjectTokens("/svc/10.0.0.1:80"), "svc.10%2E0%2E0%2E1:80");
  EXPECT_EQ(EventSubject("natcd", "/registry/pods/default/web-1"),
            "natcd.ev.registry.pods.default.web-1");
  EXPECT_EQ(EventSubject("natcd", "/svc/10.0.0.1:80"), "natcd.ev.svc.10%2E0%2E0%2E1:80");
  EXPECT_EQ(EventSubject("a.b", "/x"), "a.b.ev.x");
}

TEST(Subject, AwkwardKeys) {
  struct Case {
    std::string key;
    std::string tokens;
  };
  const Case cases[] = {
      {"/a.b", "a%2Eb"},
      {"/a b", "a%20b"},
      {"/a*", "a%2A"},
      {"/*", "%2A"},
      {"/>", "%3E"},
      {"/a>b", "a%3Eb"},
      {"/100%", "100%25"},
      {"/%", "%25"},  // a literal '%' segment is not the empty-segment token
      {"/a//b", "a.%.b"},
      {"/a/", "a.%"},
      {"//a", "%.a"},
      {"///", "%.%.%"},
      {"/", "%"},
      {"/a/b/c/", "a.b.c.%"},
      {"/tab\there", "tab%09here"},
      {"/nl\r\n", "nl%0D%0A"},
      {std::string("/nul\0x", 6), "nul%00x"},
      {"/\xff", "%FF"},
      {"/\x7f", "%7F"},
      {"/caf\xc3\xa9", "caf%C3%A9"},
      {"/\xf0\x9f\x98\x80", "%F0%9F%98%80"},
      {"/~!\"#$&'()+,-:;<=?@[\\]^_`{|}", "~!\"#$&'()+,-:;<=?@[\\]^_`{|}"},
      {"/UPPER/lower/0123", "UPPER.lower.0123"},
  };
  for (const Case& c : cases) {
    const std::string tokens = KeyToSubjectTokens(c.key);
    EXPECT_EQ(tokens, c.tokens) << c.key;
    ExpectValidTokens(tokens);
    EXPECT_EQ(RoundTrip(c.key), c.key);
  }
}

// Keys without a leading '/' share the subject of the '/' form (documented
// in subject.h); the inverse returns the '/' form. The empty key, which is
// not a valid key, maps like "/".
TEST(Subject, LeadingSlashIsOptional) {
  EXPECT_EQ(KeyToSubjectTokens("foo"), "foo");
  EXPECT_EQ(KeyToSubjectTokens("foo"), KeyToSubjectTokens("/foo"));
  EXPECT_EQ(KeyToSubjectTokens("services/user/a"), "services.user.a");
  EXPECT_EQ(RoundTrip("foo/bar"), "/foo/bar");
  EXPECT_EQ(KeyToSubjectTokens(""), "%");
  EXPECT_EQ(RoundTrip(""), "/");
  // Only one leading '/' is dropped.
  EXPECT_EQ(KeyToSubjectTokens("//"), "%.%");
}

TEST(Subject, LongKey) {
  std::string key = "/";
  for (int i = 0; i < 10 * 1024; ++i) key.push_back(static_cast<char>("ab./ *%"[i % 7]));
  const std::string tokens = KeyToSubjectTokens(key);
  ExpectValidTokens(tokens);
  EXPECT_EQ(RoundTrip(key), key);
  // 10 KiB of escapes triples in size.
  const std::string dots = "/" + std::string(10 * 1024, '.');
  EXPECT_EQ(KeyToSubjectTokens(dots).size(), 3u * 10 * 1024);
  EXPECT_EQ(RoundTrip(dots), dots);
}

TEST(Subject, RandomKeysRoundTrip) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    std::string key = "/";
    const size_t len = rng() % 40;
    for (size_t j = 0; j < len; ++j) {
      // Bias towards the interesting bytes.
      static const char kSpecial[] = {'/', '.', '*', '>', '%', ' ', '\0', '\xff', 'a'};
      key.push_back(rng() % 2 ? kSpecial[rng() % sizeof kSpecial] : static_cast<char>(rng()));
    }
    const std::string tokens = KeyToSubjectTokens(key);
    ExpectValidTokens(tokens);
    std::string back;
    ASSERT_TRUE(SubjectTokensToKey(tokens, &back)) << tokens;
    ASSERT_EQ(back, key);

    const std::string header = KeyToHeaderValue(key);
    std::string from_header;
    ASSERT_TRUE(HeaderValueToKey(header, &from_header)) << header;
    ASSERT_EQ(from_header, key);
  }
}

TEST(Subject, InverseRejectsNonCanonical) {
  std::string key = "unchanged";
  for (const char* bad :
       {"",   ".", "a.", ".a",  "a..b", "a.*", "a.>",  "a*",   "a b",  "%41",  "%2e",
        "%2", "%", "a%", "%ZZ", "%%",   "a%2", "a.%.", "\x7f", "\xff", "a\tb", "%2E%"}) {
    // ("%" alone is valid: the empty segment. Test it separately.)
    if (std::string(bad) == "%") continue;
    EXPECT_FALSE(SubjectTokensToKey(bad, &key)) << bad;
    EXPECT_EQ(key, "unchanged");
  }
  ASSERT_TRUE(SubjectTokensToKey("%", &key));
  EXPECT_EQ(key, "/");
  ASSERT_TRUE(SubjectTokensToKey("%.%", &key));
  EXPECT_EQ(key, "//");
}

TEST(LeaseIdHex, FormatsLikeEtcdctl) {
  EXPECT_EQ(LeaseIdHex(0x694d7a1a2b3c4d5e), "694d7a1a2b3c4d5e");
  EXPECT_EQ(LeaseIdHex(1), "0000000000000001");
  EXPECT_EQ(LeaseIdHex(0), "0000000000000000");
  EXPECT_EQ(LeaseIdHex(INT64_MAX), "7fffffffffffffff");
  EXPECT_EQ(LeaseIdHex(-1), "ffffffffffffffff");
  EXPECT_EQ(LeaseIdHex(INT64_MIN), "8000000000000000");
}

TEST(LeaseIdHex, Parses) {
  int64_t id = 0;
  ASSERT_TRUE(ParseLeaseIdHex("694d7a1a2b3c4d5e", &id));
  EXPECT_EQ(id, 0x694d7a1a2b3c4d5e);
  ASSERT_TRUE(ParseLeaseIdHex("694D7A1A2B3C4D5E", &id));
  EXPECT_EQ(id, 0x694d7a1a2b3c4d5e);
  ASSERT_TRUE(ParseLeaseIdHex("1f", &id));
  EXPECT_EQ(id, 31);
  ASSERT_TRUE(ParseLeaseIdHex("ffffffffffffffff", &id));
  EXPECT_EQ(id, -1);
  for (int64_t v : {int64_t{0}, int64_t{1}, INT64_MAX, INT64_MIN, int64_t{-2}, int64_t{12345}}) {
    ASSERT_TRUE(ParseLeaseIdHex(LeaseIdHex(v), &id));
    EXPECT_EQ(id, v);
  }
  id = 7;
  for (const char* bad : {"", "0x1", "-1", "+1", "g", "1 ", " 1", "12345678901234567", "1.2"}) {
    EXPECT_FALSE(ParseLeaseIdHex(bad, &id)) << bad;
    EXPECT_EQ(id, 7);
  }
}

TEST(HeaderValue, Escaping) {
  EXPECT_EQ(KeyToHeaderValue("/registry/pods/default/web-1"), "/registry/pods/default/web-1");
  EXPECT_EQ(KeyToHeaderValue("/svc/10.0.0.1:80"), "/svc/10.0.0.1:80");
  EXPECT_EQ(KeyToHeaderValue("/svc/a b%"), "/svc/a%20b%25");
  EXPECT_EQ(KeyToHeaderValue("\r\n"), "%0D%0A");
  EXPECT_EQ(KeyToHeaderValue(std::string("\0\xff", 2)), "%00%FF");
  EXPECT_EQ(KeyToHeaderValue(" lead"), "%20lead");
  EXPECT_EQ(KeyToHeaderValue(""), "");
  // Every byte value round-trips and the value holds only visible ASCII.
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  const std::string value = KeyToHeaderValue(all);
  for (char c : value) EXPECT_TRUE(c >= 0x21 && c <= 0x7e);
  std::string back;
  ASSERT_TRUE(HeaderValueToKey(value, &back));
  EXPECT_EQ(back, all);

  back = "unchanged";
  for (const char* bad : {"%", "%4", "%41", "%zz", "%0d", "a b", "a\r\n", "\xff"}) {
    EXPECT_FALSE(HeaderValueToKey(bad, &back)) << bad;
    EXPECT_EQ(back, "unchanged");
  }
}

}  // namespace
}  // namespace natcd::nats

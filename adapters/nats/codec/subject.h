// Keys and lease IDs as they appear in NATS subjects and headers.
//
// Live events are published on `P.ev.<key tokens>` (DESIGN.md, "Live event
// subjects"). The key becomes subject tokens like this:
//
//   1. drop one leading '/';
//   2. split the rest at every '/' (so "a//b" has an empty middle segment and
//      a trailing '/' gives an empty last segment);
//   3. each segment becomes one token: the bytes 0x21-0x7E other than '.',
//      '*', '>' and '%' stand as themselves, every other byte (space,
//      control bytes, 0x7F-0xFF, and those four) is written %XX with
//      uppercase hex; an empty segment is the token "%".
//
//   /registry/pods/default/web-1  ->  registry.pods.default.web-1
//   /svc/10.0.0.1:80              ->  svc.10%2E0%2E0%2E1:80
//   /a//b/                        ->  a.%.b.%
//
// So every token is non-empty, holds no whitespace, and is never a
// wildcard: a subscriber's `natcd.ev.services.user.>` matches exactly the
// keys under "/services/user/". Multi-byte UTF-8 is escaped byte by byte.
//
// The mapping is one-to-one on keys that start with '/' (the usual shape of
// etcd keys). A key without a leading '/' shares the subject of the same key
// with one: "foo" and "/foo" both publish on `P.ev.foo`. That is the rule as
// designed (a subscriber to `P.ev.services.>` sees both spellings); the
// event's exact key is always in the Natcd-Key header. The inverse,
// SubjectTokensToKey, therefore returns the '/' form. Edge cases:
//
//   key "/"  ->  "%"   (one empty segment)   and "%" -> "/"
//   key ""   ->  "%"   as well; the empty key is not a valid key (etcd's
//                      ErrEmptyKey), so it never has an event of its own.
//
// Length: escaping can triple a key's length, and a subject travels in the
// NATS protocol's control line, which nats-server limits (max_control_line,
// 4 KiB by default). A longer line is not just dropped: the server answers
// "Maximum Control Line Exceeded" and nats.c closes the connection for good,
// without reconnecting (seen with nats-server 2.9.10 and nats.c 3.4.1). So
// publishers must not publish a subject longer than kEventSubjectBytesMax.
//
// Thread safety: all functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace natcd::nats {

// Longest subject natcd publishes live events on: nats-server's default
// max_control_line (4096) less room for the rest of an HPUB line (verb,
// header and payload sizes). A deployment that lowers max_control_line needs
// a smaller bound.
inline constexpr size_t kEventSubjectBytesMax = 4000;

// The subject tokens of `key` (without the `P.ev.` prefix). Never empty.
std::string KeyToSubjectTokens(std::string_view key);

// The full live-event subject: prefix + ".ev." + KeyToSubjectTokens(key).
std::string EventSubject(std::string_view prefix, std::string_view key);

// The inverse of KeyToSubjectTokens: "registry.pods.default.web-1" ->
// "/registry/pods/default/web-1". Accepts only the canonical form that
// KeyToSubjectTokens produces (no empty token, no literal '*', '>' or byte
// outside 0x21-0x7E, every %XX uppercase and only for a byte that must be
// escaped), so each key has exactly one token string. On success stores the
// key (always starting with '/') in *key and returns true; otherwise returns
// false and leaves *key unchanged.
[[nodiscard]] bool SubjectTokensToKey(std::string_view tokens, std::string* key);

// A lease ID as etcdctl prints it: 16 lowercase hex digits of the ID's
// 64-bit two's-complement pattern ("%016x"), e.g. 694d7a1a2b3c4d5e. Used in
// `P.lease.keepalive.<id>` and the Natcd-Lease header.
std::string LeaseIdHex(int64_t id);

// The subject of a watch group (PROTOCOL.md, "Watch groups"):
// prefix + ".watch.group." + member ID + "." + group ID, both IDs as
// LeaseIdHex prints them.
std::string WatchGroupSubject(std::string_view prefix, uint64_t member_id, int64_t group_id);

// Parses 1 to 16 hex digits (either case, no sign, no "0x") into *id, the
// inverse of LeaseIdHex. Returns false and leaves *id unchanged otherwise.
[[nodiscard]] bool ParseLeaseIdHex(std::string_view hex, int64_t* id);

// The key as the value of the Natcd-Key header. NATS header values are text
// lines: they cannot hold CR or LF, and leading or trailing blanks may be
// trimmed. So the key is percent-escaped: bytes 0x21-0x7E other than '%'
// stand as themselves; every other byte (space, control bytes, 0x7F-0xFF,
// and '%') is %XX with uppercase hex. "/svc/a b%" -> "/svc/a%20b%25". Typical
// keys ("/registry/pods/default/web-1") are unchanged.
std::string KeyToHeaderValue(std::string_view key);

// The inverse of KeyToHeaderValue. Accepts only its canonical output (so
// "%41" for "A" is rejected). Returns false and leaves *key unchanged on a
// malformed value.
[[nodiscard]] bool HeaderValueToKey(std::string_view value, std::string* key);

}  // namespace natcd::nats

// Online backups (P.maint.snapshot): the client pulls the backup's stream
// chunk by chunk from the member that took it, checks the SHA-256 at its
// end, and hands the bytes on (to a caller's handler, or into a file).
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SNAPSHOT_SHA_BYTES 32
// The first reply waits for the copy: a large database takes a while.
#define SNAPSHOT_FIRST_TIMEOUT_FACTOR 12
#define SNAPSHOT_FIRST_TIMEOUT_MIN_MS 60000

static void _hex(char out[65], const unsigned char* digest) {
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < SNAPSHOT_SHA_BYTES; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  out[64] = '\0';
}

// The stream so far: everything but the last 32 bytes seen is hashed; the
// last 32 are held back, since they may be the trailer.
typedef struct _streamCheck {
  EVP_MD_CTX* md;
  unsigned char tail[SNAPSHOT_SHA_BYTES];
  size_t tail_len;
} _streamCheck;

static void _checkAdd(_streamCheck* c, const unsigned char* p, size_t n) {
  if (c->tail_len + n <= SNAPSHOT_SHA_BYTES) {
    memcpy(c->tail + c->tail_len, p, n);
    c->tail_len += n;
    return;
  }
  // Out of tail + p, all but the last 32 bytes are database bytes.
  size_t excess = c->tail_len + n - SNAPSHOT_SHA_BYTES;
  size_t from_tail = excess < c->tail_len ? excess : c->tail_len;
  EVP_DigestUpdate(c->md, c->tail, from_tail);
  memmove(c->tail, c->tail + from_tail, c->tail_len - from_tail);
  c->tail_len -= from_tail;
  size_t from_p = excess - from_tail;
  EVP_DigestUpdate(c->md, p, from_p);
  memcpy(c->tail + c->tail_len, p + from_p, n - from_p);
  c->tail_len += n - from_p;
}

static natcdStatus _snapshotRequest(Natcd__V1__SnapshotResponse** out, natcdClient* client,
                                    const char* suffix, uint64_t id, uint64_t offset, bool done,
                                    const _requestOpts* o) {
  Natcd__V1__SnapshotRequest req;
  natcd__v1__snapshot_request__init(&req);
  req.snapshot_id = id;
  req.offset = offset;
  req.done = done;
  ProtobufCMessage* reply = NULL;
  natcdStatus s =
      _request(&reply, client, suffix, &req.base, &natcd__v1__snapshot_response__descriptor, o);
  *out = (Natcd__V1__SnapshotResponse*)reply;
  return s;
}

natcdStatus natcdMaint_Snapshot(natcdSnapshotInfo* info, natcdClient* client, uint64_t member_id,
                                natcdSnapshotHandler handler, void* closure) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(handler != NULL);
  if (info != NULL) memset(info, 0, sizeof *info);
  char suffix[64];
  if (member_id != 0) {
    snprintf(suffix, sizeof suffix, "to.%016" PRIx64 ".maint.snapshot", member_id);
  } else {
    snprintf(suffix, sizeof suffix, "maint.snapshot");
  }
  int64_t first_timeout = client->timeout_ms * SNAPSHOT_FIRST_TIMEOUT_FACTOR;
  if (first_timeout < SNAPSHOT_FIRST_TIMEOUT_MIN_MS) first_timeout = SNAPSHOT_FIRST_TIMEOUT_MIN_MS;
  // Not retried: a second start would copy again. Chunk reads are (an
  // offset asked again gives the same bytes).
  _requestOpts first_opts = {.write = false, .timeout_ms = first_timeout, .retries = 0};
  Natcd__V1__SnapshotResponse* r = NULL;
  natcdStatus s = _snapshotRequest(&r, client, suffix, 0, 0, false, &first_opts);
  if (s != natcdStatus_OK) {
    if (r != NULL) protobuf_c_message_free_unpacked(&r->base, NULL);
    return s;
  }
  _streamCheck check = {.md = EVP_MD_CTX_new(), .tail_len = 0};
  if (check.md == NULL || EVP_DigestInit_ex(check.md, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(check.md);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return _setError(natcdStatus_NoMemory, "out of memory (sha256)");
  }
  natcdHeader header;
  _headerFromProto(&header, r->header);
  const uint64_t id = r->snapshot_id;
  const uint64_t total = r->total_bytes;
  // Every later chunk comes from the member that holds the backup.
  snprintf(suffix, sizeof suffix, "to.%016" PRIx64 ".maint.snapshot", header.member_id);
  uint64_t offset = 0;
  for (;;) {
    if (r->snapshot_id != id || r->offset != offset || r->total_bytes != total ||
        r->offset + r->blob.len + r->remaining_bytes != total ||
        (r->blob.len == 0 && r->remaining_bytes > 0)) {
      s = _setError(natcdStatus_ProtocolError,
                    "snapshot chunk does not follow: backup %" PRIu64 " offset %" PRIu64
                    " of %" PRIu64 " bytes, wanted %" PRIu64 " of %" PRIu64,
                    r->snapshot_id, r->offset, r->total_bytes, offset, total);
      break;
    }
    _checkAdd(&check, r->blob.data, r->blob.len);
    if (r->blob.len > 0 && !handler(r->blob.data, r->blob.len, closure)) {
      s = _setError(natcdStatus_Canceled, "snapshot stopped by its handler");
      break;
    }
    offset += r->blob.len;
    if (r->remaining_bytes == 0) break;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = NULL;
    s = _snapshotRequest(&r, client, suffix, id, offset, false, NULL);
    if (s != natcdStatus_OK) break;
  }
  if (r != NULL) protobuf_c_message_free_unpacked(&r->base, NULL);
  if (s == natcdStatus_OK) {
    unsigned char digest[SNAPSHOT_SHA_BYTES];
    unsigned int n = 0;
    EVP_DigestFinal_ex(check.md, digest, &n);
    char want[65], got[65];
    _hex(want, check.tail);
    _hex(got, digest);
    if (check.tail_len != SNAPSHOT_SHA_BYTES || memcmp(digest, check.tail, sizeof digest) != 0) {
      s = _setError(natcdStatus_ProtocolError,
                    "snapshot checksum mismatch: the stream ends with sha256 %s, its data has %s",
                    want, got);
    } else if (info != NULL) {
      info->header = header;
      info->total_bytes = total;
      memcpy(info->sha256_hex, want, sizeof want);
    }
  }
  EVP_MD_CTX_free(check.md);
  // The member drops the backup now rather than after its idle timeout:
  // published, not requested (nothing to wait for, even when the member
  // is gone).
  Natcd__V1__SnapshotRequest bye;
  natcd__v1__snapshot_request__init(&bye);
  bye.snapshot_id = id;
  bye.done = true;
  (void)_publish(client, suffix, &bye.base);
  return s;
}

typedef struct _fileSink {
  int fd;
  int err;  // errno of a failed write
} _fileSink;

static bool _writeToFile(const void* data, size_t len, void* closure) {
  _fileSink* f = closure;
  const char* p = data;
  while (len > 0) {
    ssize_t n = write(f->fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      f->err = errno;
      return false;
    }
    p += n;
    len -= (size_t)n;
  }
  return true;
}

natcdStatus natcdMaint_SnapshotSave(natcdSnapshotInfo* info, natcdClient* client,
                                    uint64_t member_id, const char* path) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(path != NULL && path[0] != '\0');
  size_t n = strlen(path) + sizeof ".part";
  char* part = malloc(n);
  if (part == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  snprintf(part, n, "%s.part", path);
  _fileSink sink = {.fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), .err = 0};
  if (sink.fd < 0) {
    natcdStatus s =
        _setError(natcdStatus_InvalidArg, "cannot create %s: %s", part, strerror(errno));
    free(part);
    return s;
  }
  natcdStatus s = natcdMaint_Snapshot(info, client, member_id, _writeToFile, &sink);
  if (sink.err != 0) s = _setError(natcdStatus_Internal, "write %s: %s", part, strerror(sink.err));
  if (s == natcdStatus_OK && fsync(sink.fd) != 0) {
    s = _setError(natcdStatus_Internal, "fsync %s: %s", part, strerror(errno));
  }
  if (close(sink.fd) != 0 && s == natcdStatus_OK) {
    s = _setError(natcdStatus_Internal, "close %s: %s", part, strerror(errno));
  }
  if (s == natcdStatus_OK && rename(part, path) != 0) {
    s = _setError(natcdStatus_Internal, "rename %s to %s: %s", part, path, strerror(errno));
  }
  if (s != natcdStatus_OK) unlink(part);
  free(part);
  return s;
}

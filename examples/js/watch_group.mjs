// A watch in a watch group, followed by a plain NATS client in another
// language: Node.js with the npm `nats` package (nats.js), no natcd library.
// It speaks the protocol of docs/PROTOCOL.md ("Watches", "Watch groups") in
// JSON: create the watch with group = true on an inbox of its own, take the
// history there, subscribe the group subject it is offered and say so in
// the ack, then, from the join's groupSeq on, read the group's messages
// (published once by natcd for every watch of the same keys). A gap in seq
// or groupSeq, a cancel, or silence means a new watch from the last revision
// printed + 1: no event is lost or printed twice.
//
// RUN (nats.js comes from tests/js/node_modules: `make deps` installs it):
//   node examples/js/watch_group.mjs nats://127.0.0.1:4222 /registry/pods/
//
// OUTPUT (one line each; exits 0 on SIGINT/SIGTERM, 1 on a fatal error):
//   watching /registry/pods/ from revision 14
//   joined group natcd.watch.group.<member>.<group> at revision 13
//   PUT /registry/pods/a = 1 @14
//   DELETE /registry/pods/a @15
//   resumed from revision 16: groupSeq gap
//
// Options: --prefix P (natcd's subject prefix, default natcd),
// --from REV (first revision to print; default: from now).
import { createRequire } from "node:module";

const require = createRequire(new URL("../../tests/js/package.json", import.meta.url));
const { connect, createInbox, headers } = require("nats");

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const prefix = option("--prefix", "natcd");
const from = Number(option("--from", "0"));
const [url, key] = args;
if (!url || !key || !prefix || !(from >= 0)) {
  console.error("usage: node watch_group.mjs <nats url> <key prefix> [--prefix P] [--from REV]");
  process.exit(2);
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const b64 = (bytes) => Buffer.from(bytes).toString("base64");
const keyBytes = Buffer.from(key);
// The prefix's range end: the key with its last byte + 1 (as etcd's --prefix).
const endBytes = Buffer.from(keyBytes);
endBytes[endBytes.length - 1] += 1;
const json = headers();
json.set("Content-Type", "application/json"); // JSON in and out, not protobuf

let nc;
let lastRev = from > 0 ? from - 1 : 0; // every event up to it was printed
let watch = null; // the current stream
let resuming = false;

const stop = async (code) => {
  if (nc) await nc.close().catch(() => {});
  process.exit(code);
};
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

const publishJson = (suffix, body) =>
  nc.publish(`${prefix}.${suffix}`, enc.encode(JSON.stringify(body)), { headers: json });

function ack(w, seq, extra = {}) {
  publishJson("watch.ack", { watchId: w.id, seq: String(seq), ...extra });
}

// One P.watch.create from `start` (0: now) on a new inbox; the stream's
// messages are handled as they come.
async function create(start) {
  const inbox = createInbox();
  const w = { id: null, next: 1, groupId: null, groupSub: null, joined: false, groupNext: 0 };
  w.pending = []; // group messages before the join
  w.frags = []; // events of a revision split in fragments, so far
  w.early = []; // messages that came before the create reply
  watch = w;
  w.sub = nc.subscribe(inbox, { callback: (err, msg) => !err && onInbox(w, msg) });
  const request = {
    key: b64(keyBytes),
    rangeEnd: b64(endBytes),
    startRevision: String(start),
    group: true,
    deliverSubject: inbox,
  };
  const reply = await nc.request(`${prefix}.watch.create`, enc.encode(JSON.stringify(request)), {
    timeout: 5000,
    headers: json,
  });
  const error = reply.headers?.get("Nats-Service-Error");
  if (error) throw new Error(error);
  const r = JSON.parse(dec.decode(reply.data));
  if (r.canceled) throw new Error(`watch canceled at creation: ${r.cancelReason}`);
  w.id = r.watchId; // int64: a JSON string
  w.heartbeatMs = Number(r.heartbeatMs ?? 5000);
  w.lastActivity = Date.now();
  if (start === 0) lastRev = Number(r.header?.revision ?? 0);
  for (const msg of w.early.splice(0)) onInbox(w, msg);
  return w;
}

// Drops the stream and watches again from lastRev + 1, for as long as it takes.
async function resume(why) {
  if (resuming) return;
  resuming = true;
  const old = watch;
  watch = null;
  if (old) {
    old.sub.unsubscribe();
    old.groupSub?.unsubscribe();
    if (old.id) publishJson("watch.cancel", { watchId: old.id });
  }
  for (;;) {
    try {
      watch = await create(lastRev + 1);
      console.log(`resumed from revision ${lastRev + 1}: ${why}`);
      break;
    } catch (err) {
      if (/compacted/i.test(err.message)) {
        console.error(`error: ${err.message}`);
        await stop(1);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  resuming = false;
}

// Events, progress and cancel: what a watch's and a group's messages share.
// False when the stream must be resumed.
function handle(w, r) {
  if (r.fragment && !r.canceled) {
    w.frags.push(...(r.events ?? []));
    return true;
  }
  const events = w.frags.concat(r.events ?? []);
  w.frags = [];
  for (const ev of events) {
    const rev = Number(ev.kv.modRevision);
    if (rev <= lastRev) continue; // delivered before a resume
    const k = Buffer.from(ev.kv.key ?? "", "base64").toString();
    if (ev.type === "DELETE") console.log(`DELETE ${k} @${rev}`);
    else console.log(`PUT ${k} = ${Buffer.from(ev.kv.value ?? "", "base64")} @${rev}`);
  }
  // Whole revisions: everything up to the last event's revision is printed.
  if (events.length > 0) lastRev = Math.max(lastRev, Number(events.at(-1).kv.modRevision));
  else if (!r.canceled) lastRev = Math.max(lastRev, Number(r.header?.revision ?? 0)); // a bookmark
  if (r.canceled) {
    resume(`canceled: ${r.cancelReason ?? ""}`);
    return false;
  }
  return true;
}

function onInbox(w, msg) {
  if (w !== watch) return; // a stream being dropped
  if (w.id === null) {
    w.early.push(msg);
    return;
  }
  w.lastActivity = Date.now();
  const r = JSON.parse(dec.decode(msg.data));
  if (Number(r.seq ?? 0) !== w.next) return resume("seq gap");
  w.next++;
  const control = r.groupId && !r.canceled && !(r.events?.length > 0);
  if (!control) {
    if (handle(w, r)) ack(w, r.seq);
    return;
  }
  if (r.groupSubject) {
    // The offer: subscribe, then ack saying so (same connection: the
    // server has the subscription before natcd hears the ack).
    w.groupSub?.unsubscribe();
    w.pending = [];
    w.groupId = r.groupId;
    w.groupSubject = r.groupSubject;
    w.groupSub = nc.subscribe(r.groupSubject, { callback: (err, m) => !err && onGroup(w, m) });
    lastRev = Math.max(lastRev, Number(r.header?.revision ?? 0));
    ack(w, r.seq, { groupSubscribed: true, groupId: r.groupId });
    return;
  }
  if (r.groupId !== w.groupId || !w.groupSub) return resume("a join to an unknown group");
  // The join: the group continues the stream from groupSeq.
  w.joined = true;
  w.groupNext = Number(r.groupSeq);
  lastRev = Math.max(lastRev, Number(r.header?.revision ?? 0));
  console.log(`joined group ${w.groupSubject} at revision ${lastRev}`);
  ack(w, r.seq);
  const pending = w.pending;
  w.pending = [];
  for (const p of pending) if (!onGroupMessage(w, p)) return;
}

function onGroup(w, msg) {
  if (w !== watch) return;
  w.lastActivity = Date.now();
  const r = JSON.parse(dec.decode(msg.data));
  if (!w.joined) {
    w.pending.push(r);
    if (w.pending.length > 10000) resume("too far behind before the join");
    return;
  }
  onGroupMessage(w, r);
}

function onGroupMessage(w, r) {
  const seq = Number(r.groupSeq ?? 0);
  if (seq < w.groupNext) return true; // before the join: the inbox had it
  if (seq !== w.groupNext) {
    resume("groupSeq gap"); // NATS dropped group messages for us
    return false;
  }
  w.groupNext++;
  if (!handle(w, r)) return false;
  // Acking the group's heartbeats (and only them) keeps the watch a member.
  if (!(r.events?.length > 0) && !r.canceled) ack(w, r.groupSeq, { groupId: r.groupId });
  return true;
}

try {
  nc = await connect({ servers: url, name: "natcd watch_group example" });
  watch = await create(from);
  console.log(`watching ${key} from revision ${lastRev + 1}`);
  // Silence for 3 heartbeats: the stream is gone (natcd or NATS lost it).
  setInterval(() => {
    if (watch && !resuming && Date.now() - watch.lastActivity > 3 * watch.heartbeatMs) {
      resume("silence");
    }
  }, 200);
} catch (err) {
  console.error(`error: ${err.message}`);
  await stop(1);
}

// A client nobody here wrote: the npm `etcd3` package (microsoft/etcd3),
// knowing nothing of natcd but etcd's v3 gRPC API. Its lock and election
// are its own recipes over KV, Lease and Watch (it has no v3lock or
// v3election client), so they exercise txn compares on create revisions,
// lease-bound keys and watches from a revision as etcd serves them.
//
//   node etcd3_client.mjs <host:port> <key prefix> [<proxy host:port>]
//
// With a proxy (a TCP relay to the same endpoint that the caller can cut
// and heal), the reconnect check watches and keeps a lease alive through it and asks, on
// stdout, for the relay to be cut ({"await":"cut"}) then healed
// ({"await":"heal"}), waiting for "cut" and "healed" lines on stdin.
//
// Prints one JSON object per line, a check at a time:
//   {"check":"<name>","ok":true,...details}    one check passed
//   {"check":"<name>","ok":false,"error":"…","class":"…"}  it failed (the
//                                              script goes on with the next)
//   {"done":true,"failed":N}
// and exits 0 only when every check passed. Each check is bounded (a hung
// call fails it); the whole script gives up after 60 s. Auth is not
// exercised: natcd does not serve etcd's Auth service yet.
import etcd3 from "etcd3";
import { createInterface } from "node:readline";

const {
  Etcd3,
  EtcdError,
  EtcdLeaseInvalidError,
  EtcdLockFailedError,
  GRPCInvalidArgumentError,
  GRPCOutOfRangeError,
} = etcd3;

const [endpoint, prefix = "/etcd3js/", proxy] = process.argv.slice(2);
if (!endpoint) {
  process.stderr.write("usage: node etcd3_client.mjs <host:port> <key prefix>\n");
  process.exit(2);
}
const print = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const giveUp = setTimeout(() => {
  print({ error: "timeout: the script did not finish within 60 s" });
  process.exit(3);
}, 60000);

// No retries and no circuit breaker: etcd3 retries "recoverable" errors
// (UNAVAILABLE, INTERNAL, …) three times by default, which would hide a
// natcd error behind a later success. Unary calls get a deadline.
const noRetry = { execute: async (fn) => fn({ signal: new AbortController().signal }) };
const client = new Etcd3({
  hosts: `http://${endpoint}`,
  dialTimeout: 5000,
  faultHandling: { host: () => noRetry, global: noRetry },
  defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 10000 }),
});

class CheckFailed extends Error {}
function expect(cond, what) {
  if (!cond) throw new CheckFailed(what);
}
function expectEq(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new CheckFailed(`${what}: got ${a}, want ${e}`);
}

// Resolves once pred() holds (polled every 20 ms), rejects after ms.
async function waitFor(pred, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > end) throw new CheckFailed(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

// A promise's settlement, or a CheckFailed after ms.
function within(ms, promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// What a promise rejected with (etcd3 picks its error class from etcd's
// message by substring, else from the gRPC code), or null when it
// resolved.
async function rejection(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return e;
  }
}
// etcd3's error classes keep Error's name, so toString() does not tell them apart.
const className = (e) => e?.constructor?.name ?? String(e);

let failed = 0;
async function check(name, fn) {
  const started = Date.now();
  try {
    const details = (await within(20000, fn(), name)) ?? {};
    print({ check: name, ok: true, ms: Date.now() - started, ...details });
  } catch (e) {
    failed++;
    print({ check: name, ok: false, error: String(e?.stack ?? e), class: className(e) });
  }
}

const key = (k) => prefix + k;

await check("kv", async () => {
  await client.put(key("kv/a")).value("1");
  await client.put(key("kv/b")).value("2");
  const put = await client.put(key("kv/c")).value("3").exec();
  expect(Number(put.header.revision) > 0, "a put's header has its revision");
  expectEq(await client.get(key("kv/a")).string(), "1", "get kv/a");
  expectEq(await client.get(key("kv/missing")).string(), null, "get of a missing key");
  expectEq(
    await client.getAll().prefix(key("kv/")).strings(),
    { [key("kv/a")]: "1", [key("kv/b")]: "2", [key("kv/c")]: "3" },
    "getAll().prefix().strings()",
  );
  expectEq(
    await client.getAll().prefix(key("kv/")).sort("Key", "Descend").limit(2).keys(),
    [key("kv/c"), key("kv/b")],
    "getAll sorted descending with a limit",
  );
  const prev = await client.put(key("kv/a")).value("1b").getPrevious();
  expectEq(prev.value.toString(), "1", "put's previous value");
  const kv = (await client.get(key("kv/a")).exec()).kvs[0];
  expectEq([kv.version, kv.value.toString()], ["2", "1b"], "version and value after two puts");
  const del = await client.delete().key(key("kv/a")).exec();
  expectEq(del.deleted, "1", "delete().key() deleted");
  expectEq(await client.get(key("kv/a")).exists(), false, "kv/a exists after delete");
  const gone = await client.delete().prefix(key("kv/")).getPrevious();
  expectEq(
    gone.map((p) => p.key.toString()),
    [key("kv/b"), key("kv/c")],
    "delete().prefix().getPrevious()",
  );
  return { revision: put.header.revision };
});

await check("txn", async () => {
  const k = key("txn/k");
  const txn = () =>
    client.if(k, "Mod", "==", 0).then(client.put(k).value("first")).else(client.get(k)).commit();
  const first = await txn();
  expectEq(first.succeeded, true, "first txn (key absent) succeeded");
  const second = await txn();
  expectEq(second.succeeded, false, "second txn (key present) succeeded");
  expectEq(
    second.responses[0].response_range.kvs[0].value.toString(),
    "first",
    "the else branch's get",
  );
  // Two compares, both branches multi-op.
  const both = await client
    .if(k, "Value", "==", "first")
    .and(k, "Version", ">", 0)
    .then(client.put(key("txn/x")).value("x"), client.put(key("txn/y")).value("y"))
    .else(client.delete().key(k))
    .commit();
  expectEq(both.succeeded, true, "two-compare txn succeeded");
  expectEq(both.responses.length, 2, "responses of the then branch");
  // etcd refuses two writes of one key in a txn with INVALID_ARGUMENT;
  // etcd3 has no class for its message, so it classes it by the code.
  const dup = await rejection(
    client
      .if(k, "Mod", ">", 0)
      .then(client.put(key("txn/x")).value("1"), client.put(key("txn/x")).value("2"))
      .commit(),
  );
  expect(
    dup instanceof GRPCInvalidArgumentError,
    `duplicate-key txn: want GRPCInvalidArgumentError, got ${className(dup)}: ${dup}`,
  );
  expect(
    String(dup.message).includes("etcdserver: duplicate key given in txn request"),
    `duplicate-key txn message: ${dup.message}`,
  );
  return {};
});

await check("count", async () => {
  for (let i = 0; i < 5; i++) await client.put(key(`count/${i}`)).value(String(i));
  expectEq(await client.getAll().prefix(key("count/")).count(), 5, "count of the prefix");
  expectEq(await client.getAll().prefix(key("count/none/")).count(), 0, "count of an empty prefix");
  // getAll() alone is every key (etcd's "\0" to "\0" range).
  const all = await client.getAll().count();
  expect(all >= 5, `count of every key: ${all}`);
  return { all };
});

await check("put_options", async () => {
  const k = key("opts/k");
  const lease = client.lease(30);
  await lease.put(k).value("v1");
  const id = await lease.grant();
  // ignoreLease(): a new value with the lease kept.
  await client.put(k).value("v2").ignoreLease();
  let kv = (await client.get(k).serializable(true).exec()).kvs[0];
  expectEq([kv.value.toString(), kv.version, kv.lease], ["v2", "2", id], "after ignoreLease()");
  // touch(): ignore_value, a new version with the value kept; no lease
  // given and ignore_lease unset, so etcd detaches the lease.
  await client.put(k).touch();
  kv = (await client.get(k).exec()).kvs[0];
  expectEq([kv.value.toString(), kv.version, kv.lease], ["v2", "3", "0"], "after touch()");
  // touch() of a missing key: etcd's "key not found" (INVALID_ARGUMENT).
  const touched = await rejection(client.put(key("opts/missing")).touch());
  expect(
    touched instanceof GRPCInvalidArgumentError &&
      touched.message.includes("etcdserver: key not found"),
    `touch() of a missing key: ${className(touched)}: ${touched}`,
  );
  // A put bound to a lease that does not exist: "requested lease not found".
  const bogus = await rejection(client.put(key("opts/x")).value("x").lease("123456789"));
  expect(
    bogus instanceof EtcdLeaseInvalidError,
    `put with an unknown lease: ${className(bogus)}: ${bogus}`,
  );
  // A namespace prefixes every key it is given and strips it from replies.
  const ns = client.namespace(key("opts/ns/"));
  await ns.put("a").value("1");
  expectEq(await client.get(key("opts/ns/a")).string(), "1", "a namespaced put");
  expectEq(await ns.getAll().keys(), ["a"], "a namespace's keys");
  // Detached by touch(), the key outlives its old lease.
  await lease.revoke();
  expectEq(await client.get(k).string(), "v2", "the detached key after revoke");
  return {};
});

await check("stm", async () => {
  // etcd3's software transactions: read, write, commit on mod revisions,
  // retried on conflict. Two concurrent increments both land.
  const k = key("stm/counter");
  await client.put(k).value("0");
  const inc = () =>
    client.stm().transact(async (tx) => {
      const v = Number(await tx.get(k).string());
      await sleep(10);
      // A builder runs when awaited: that records the write in the STM.
      await tx.put(k).value(String(v + 1));
    });
  await Promise.all([inc(), inc()]);
  expectEq(await client.get(k).string(), "2", "counter after two concurrent increments");
  return {};
});

await check("lease_keepalive", async () => {
  const ttl = 2;
  const lease = client.lease(ttl);
  let renewed = 0;
  let lost = null;
  lease.on("keepaliveSucceeded", (res) => {
    if (Number(res.TTL) > 0) renewed++;
  });
  lease.on("lost", (e) => (lost = e));
  const id = await lease.grant();
  const k = key("lease/alive");
  await lease.put(k).value("v");
  const ttlInfo = await client.leaseClient.leaseTimeToLive({ ID: id, keys: true });
  expectEq(ttlInfo.grantedTTL, String(ttl), "granted TTL");
  expectEq(
    ttlInfo.keys.map((b) => b.toString()),
    [k],
    "the lease's keys",
  );
  // Kept alive (etcd3 renews every TTL/3) well past twice its TTL.
  const until = Date.now() + 2500 * ttl;
  await waitFor(() => Date.now() >= until && renewed >= 4, 4000 * ttl, "keep-alives past the TTL");
  expect(lost === null, `lease lost while kept alive: ${lost}`);
  expectEq(await client.get(k).string(), "v", "the key of a kept-alive lease, past its TTL");
  const left = await client.leaseClient.leaseTimeToLive({ ID: id });
  expect(Number(left.TTL) > 0, `TTL left of a kept-alive lease: ${left.TTL}`);
  await lease.revoke();
  expectEq(await client.get(k).exists(), false, "the key after revoke");
  // A revoked lease: TimeToLive answers TTL -1 (no error), a keep-alive
  // answers TTL 0 (etcd3: EtcdLeaseInvalidError), and revoking it again is
  // etcd's "requested lease not found" (etcd3 maps it by substring).
  const after = await client.leaseClient.leaseTimeToLive({ ID: id });
  expectEq(after.TTL, "-1", "TimeToLive of a revoked lease");
  const again = await rejection(client.leaseClient.leaseRevoke({ ID: id }));
  expect(
    again instanceof EtcdLeaseInvalidError,
    `revoke of a revoked lease: want EtcdLeaseInvalidError, got ${className(again)}: ${again}`,
  );
  const once = await rejection(lease.keepaliveOnce());
  expect(
    once instanceof EtcdLeaseInvalidError,
    `keepaliveOnce of a revoked lease: want EtcdLeaseInvalidError, got ${className(once)}: ${once}`,
  );
  return { id, renewed };
});

await check("lease_expires", async () => {
  // The control for the check above: not kept alive, the lease expires and
  // takes its key with it.
  const lease = client.lease(1, { autoKeepAlive: false });
  const id = await lease.grant();
  const k = key("lease/expiring");
  await lease.put(k).value("v");
  expectEq(await client.get(k).string(), "v", "the key before expiry");
  await waitFor(async () => !(await client.get(k).exists()), 8000, "the expired lease's key to go");
  const after = await client.leaseClient.leaseTimeToLive({ ID: id });
  expectEq(after.TTL, "-1", "TimeToLive of an expired lease");
  return { id };
});

// Shared by the watch and watch_resume checks: the revision of the first
// write the live watcher saw, and the events in order.
let firstRevision = null;
let liveEvents = [];

const eventOf = (type, kv, prev) => ({
  type,
  key: kv.key.toString(),
  value: kv.value.toString(),
  rev: kv.mod_revision,
  prev: prev ? prev.value.toString() : null,
});

await check("watch", async () => {
  const p = key("watch/");
  const events = [];
  const watcher = await client.watch().prefix(p).withPreviousKV().create();
  watcher.on("put", (kv, prev) => events.push(eventOf("put", kv, prev)));
  watcher.on("delete", (kv, prev) => events.push(eventOf("delete", kv, prev)));
  let errored = null;
  watcher.on("error", (e) => (errored = e));
  // A second watcher on the same stream: puts only, on one key.
  const putsOnly = [];
  const second = await client.watch().key(p + "1").only("put").create();
  second.on("put", (kv) => putsOnly.push(kv.value.toString()));
  expect(watcher.id !== second.id, `two watches on one stream share id ${watcher.id}`);

  const r1 = await client.put(p + "1").value("a").exec();
  await client.put(p + "2").value("b");
  await client.put(p + "1").value("a2");
  await client.delete().key(p + "1");
  await waitFor(() => events.length >= 4 && putsOnly.length >= 2, 5000, "4 watch events");
  expect(errored === null, `watcher error: ${errored}`);
  expectEq(
    events.map((e) => [e.type, e.key, e.value, e.prev]),
    [
      ["put", p + "1", "a", null],
      ["put", p + "2", "b", null],
      ["put", p + "1", "a2", "a"],
      ["delete", p + "1", "", "a2"],
    ],
    "events in order (type, key, value, previous value)",
  );
  expectEq(events[0].rev, r1.header.revision, "the first event's revision");
  for (let i = 1; i < events.length; i++) {
    expect(Number(events[i].rev) > Number(events[i - 1].rev), "revisions increase");
  }
  expectEq(putsOnly, ["a", "a2"], "the put-only watcher on one key");
  // lastRevision() is where a resumed watch starts: past every event seen.
  const resumeAt = Number(watcher.lastRevision());
  expect(resumeAt > Number(events[3].rev), `lastRevision() ${resumeAt} <= ${events[3].rev}`);
  await within(5000, second.cancel(), "cancel of the second watcher");
  await within(5000, watcher.cancel(), "cancel of the first watcher");
  firstRevision = r1.header.revision;
  liveEvents = events;
  return { watchId: String(watcher.id), revision: firstRevision };
});

await check("watch_resume", async () => {
  expect(firstRevision !== null, "the watch check recorded no revision");
  const p = key("watch/");
  // Started from the first write's revision after all of them happened:
  // the history replays, then live events follow on the same watcher.
  const events = [];
  const watcher = client.watch().prefix(p).withPreviousKV().startRevision(firstRevision).watcher();
  watcher.on("put", (kv, prev) => events.push(eventOf("put", kv, prev)));
  watcher.on("delete", (kv, prev) => events.push(eventOf("delete", kv, prev)));
  await within(5000, new Promise((r) => watcher.once("connected", r)), "watch created");
  await waitFor(() => events.length >= 4, 5000, "4 replayed events");
  expectEq(events, liveEvents, "replayed history equals the live events");
  await client.put(p + "3").value("c");
  await waitFor(() => events.length >= 5, 5000, "a live event after the replay");
  expectEq([events[4].type, events[4].key, events[4].value], ["put", p + "3", "c"], "live event");
  // From a later revision: only what came after it.
  const later = [];
  const w2 = client.watch().prefix(p).startRevision(liveEvents[2].rev).watcher();
  w2.on("data", (res) => res.events.forEach((e) => later.push(e.kv.mod_revision)));
  await waitFor(() => later.length >= 3, 5000, "3 events from a later revision");
  expectEq(later, [liveEvents[2].rev, liveEvents[3].rev, events[4].rev], "revisions replayed");
  await within(5000, watcher.cancel(), "cancel");
  await within(5000, w2.cancel(), "cancel");
  return {};
});

// The caller's answers on stdin, one line each.
const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function awaitCaller(what, answer) {
  print({ await: what });
  const line = await within(10000, stdinLines.next(), `the caller's "${answer}"`);
  expectEq(line.value, answer, `the caller's answer to ${what}`);
}

if (proxy) {
  await check("reconnect", async () => {
    // etcd3 resumes its watchers when the stream breaks: re-created from
    // the revision after the last response it had, so what was written
    // while it was cut off arrives once, in order, and nothing twice. Its
    // lease keep-alive stream is opened again too, and the lease lives on.
    // A short constant backoff keeps the reconnect quick.
    const quick = { duration: 100, next: () => quick };
    const viaProxy = new Etcd3({
      hosts: `http://${proxy}`,
      dialTimeout: 5000,
      faultHandling: { host: () => noRetry, global: noRetry, watchBackoff: quick },
    });
    try {
      const p = key("reconnect/");
      const seen = [];
      let disconnects = 0;
      let connects = 0;
      const lease = viaProxy.lease(5);
      let renewed = 0;
      let lost = null;
      lease.on("keepaliveSucceeded", () => renewed++);
      lease.on("lost", (e) => (lost = e));
      await lease.put(p + "leased").value("alive");
      const watcher = await viaProxy.watch().prefix(p).create();
      watcher.on("put", (kv) => seen.push(kv.value.toString()));
      watcher.on("disconnected", () => disconnects++);
      watcher.on("connected", () => connects++);
      await client.put(p + "k").value("before");
      await waitFor(() => seen.length >= 1, 5000, "the event before the cut");
      await awaitCaller("cut", "cut");
      await waitFor(() => disconnects >= 1, 5000, "the watcher to see the stream break");
      await client.put(p + "k").value("during-1");
      await client.put(p + "j").value("during-2");
      await awaitCaller("heal", "healed");
      const renewedBeforeHeal = renewed;
      await waitFor(() => seen.length >= 3, 10000, "the events written while cut off");
      await client.put(p + "k").value("after");
      await waitFor(() => seen.length >= 4, 5000, "the event after the reconnect");
      // Anything resent twice would show up by now, ahead of this marker.
      await client.put(p + "k").value("marker");
      await waitFor(() => seen.length >= 5, 5000, "the marker");
      expectEq(seen, ["before", "during-1", "during-2", "after", "marker"], "events, each once");
      expect(connects >= 1, "no 'connected' after the reconnect");
      await within(5000, watcher.cancel(), "cancel");
      await waitFor(() => renewed > renewedBeforeHeal, 10000, "a keep-alive after the reconnect");
      expect(lost === null, `lease lost across the cut: ${lost}`);
      expectEq(await client.get(p + "leased").string(), "alive", "the leased key after the cut");
      await lease.revoke();
      return { disconnects, connects, renewed };
    } finally {
      viaProxy.close();
    }
  });
}

await check("lock", async () => {
  const name = key("lock/x");
  const holder = await client.lock(name).ttl(5).acquire();
  // etcd3's lock is a try-lock: a second acquire fails at once.
  const started = Date.now();
  const second = await rejection(client.lock(name).ttl(5).acquire());
  const ms = Date.now() - started;
  expect(
    second instanceof EtcdLockFailedError,
    `second acquire: want EtcdLockFailedError, got ${className(second)}: ${second}`,
  );
  expect(ms < 3000, `second acquire took ${ms} ms`);
  const leaseId = await holder.leaseId();
  const kv = (await client.get(name).exec()).kvs[0];
  expectEq(kv.lease, leaseId, "the lock key's lease");
  await holder.release();
  expectEq(await client.get(name).exists(), false, "the lock key after release");
  // Released, it can be taken again; do() releases it after the function.
  const ran = await client.lock(name).ttl(5).do(async () => "inside");
  expectEq(ran, "inside", "lock().do()'s result");
  expectEq(await client.get(name).exists(), false, "the lock key after do()");
  return { failFastMs: ms };
});

await check("election", async () => {
  const election = client.election(key("election/e").replace(/\//g, "_"), 5);
  const observer = await election.observe();
  const seen = [];
  observer.on("change", (leader) => seen.push(leader ?? null));
  let observerError = null;
  observer.on("error", (e) => (observerError = e));

  const alice = election.campaign("alice");
  await within(5000, alice.wait(), "alice elected");
  expectEq(await election.leader(), "alice", "leader() with alice campaigning");
  await waitFor(() => observer.leader() === "alice", 5000, "the observer to see alice");

  // Bob waits behind alice until she resigns.
  const bob = election.campaign("bob");
  let bobElected = false;
  bob.on("elected", () => (bobElected = true));
  let bobError = null;
  bob.on("error", (e) => (bobError = e));
  // Bob's key exists (he is queued) and he is not leader.
  await waitFor(
    async () => (await client.getAll().prefix(`election/${election.name}/`).count()) === 2,
    5000,
    "bob's campaign key",
  );
  expect(!bobElected, "bob elected while alice leads");
  await alice.resign();
  await waitFor(() => bobElected, 5000, "bob elected after alice resigned");
  expectEq(await election.leader(), "bob", "leader() after alice resigned");
  await waitFor(() => observer.leader() === "bob", 5000, "the observer to see bob");
  await bob.proclaim("bob-2");
  await waitFor(() => observer.leader() === "bob-2", 5000, "the observer to see bob's proclamation");
  await bob.resign();
  expectEq(await election.leader(), undefined, "leader() with nobody campaigning");
  expect(bobError === null, `bob's campaign error: ${bobError}`);
  expect(observerError === null, `observer error: ${observerError}`);
  await within(5000, observer.cancel(), "observer cancel");
  expectEq(
    seen.filter((v) => v !== null),
    ["alice", "bob", "bob-2"],
    "leaders the observer announced",
  );
  return {};
});

await check("maintenance", async () => {
  // etcd3's maintenance and cluster clients: the version natcd claims is
  // etcd's (3.5.x), and the member lists this endpoint among its client URLs.
  const status = await client.maintenance.status();
  expect(/^3\.5\./.test(status.version), `Status version ${status.version}`);
  expect(status.leader !== "0", "Status has a leader");
  const members = (await client.cluster.memberList({})).members;
  expect(members.length >= 1, "MemberList has members");
  const urls = members.flatMap((m) => m.clientURLs);
  expect(urls.includes(`http://${endpoint}`), `client URLs ${JSON.stringify(urls)}`);
  return { version: status.version };
});

await check("compaction", async () => {
  // Last: compaction drops the history the watch checks replayed. After
  // it, a read at an old revision is OUT_OF_RANGE with etcd's message, and
  // a watch from it is canceled (etcd3 emits an error on the watcher).
  const k = key("compact/k");
  const old = (await client.put(k).value("1").exec()).header.revision;
  const now = (await client.put(k).value("2").exec()).header.revision;
  await client.kv.compact({ revision: now, physical: true });
  expectEq(await client.get(k).revision(now).string(), "2", "read at the compaction revision");
  const read = await rejection(client.get(k).revision(old).string());
  expect(
    read instanceof GRPCOutOfRangeError &&
      read.message.includes("etcdserver: mvcc: required revision has been compacted"),
    `read at a compacted revision: ${className(read)}: ${read}`,
  );
  const future = await rejection(client.get(k).revision(Number(now) + 1000).string());
  expect(
    future instanceof GRPCOutOfRangeError &&
      future.message.includes("etcdserver: mvcc: required revision is a future revision"),
    `read at a future revision: ${className(future)}: ${future}`,
  );
  const watcher = client.watch().key(k).startRevision(old).watcher();
  const canceled = await within(
    5000,
    new Promise((resolve) => watcher.once("error", resolve)),
    "the compacted watch's cancel",
  );
  expect(canceled instanceof EtcdError, `compacted watch: ${className(canceled)}: ${canceled}`);
  return { compacted: now };
});

clearTimeout(giveUp);
print({ done: true, failed });
client.close();
process.exit(failed === 0 ? 0 : 1);

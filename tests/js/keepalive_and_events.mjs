// A natcd client written with nats.js, knowing nothing of natcd but its
// subjects: it renews a lease through natcd.lease.keepalive.<hex id> and
// follows natcd.ev.> — what any NATS client in any language can do.
//
//   node keepalive_and_events.mjs <nats url> <lease id in hex> [events to wait for]
//
// Prints one JSON object per line:
//   {"ready":true}                           subscribed; writes may start
//   {"keepalive":"request","id":"…","ttl":"…"} the reply to a keepalive request (JSON)
//   {"keepalive":"publish"}                  a plain publish (no reply) was sent
//   {"subject":"…","op":"PUT","revision":"…","key":"…","value":"…"}  one live event
//   {"done":true} / {"error":"…"}
// and exits once the events arrived and both keepalives were sent (or after
// 10 s).
import { connect, headers } from "nats";

const [url, leaseHex, wanted = "2"] = process.argv.slice(2);
const print = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const nc = await connect({ servers: url, name: "natcd nats.js test" });
const giveUp = setTimeout(async () => {
  print({ error: "timeout" });
  await nc.close();
  process.exit(2);
}, 10000);

const sub = nc.subscribe("natcd.ev.>");
let events = 0;
const eventsDone = (async () => {
  for await (const m of sub) {
    print({
      subject: m.subject,
      op: m.headers?.get("Natcd-Op") ?? "",
      revision: m.headers?.get("Natcd-Revision") ?? "",
      key: m.headers?.get("Natcd-Key") ?? "",
      value: dec.decode(m.data),
    });
    if (++events >= Number(wanted)) break;
  }
})();
await nc.flush();
print({ ready: true });

const subject = `natcd.lease.keepalive.${leaseHex}`;
const h = headers();
h.set("Content-Type", "application/json");
const reply = await nc.request(subject, enc.encode("renew please"), { timeout: 3000, headers: h });
const body = JSON.parse(dec.decode(reply.data));
print({ keepalive: "request", id: body.ID ?? "", ttl: body.TTL ?? "" });

await sleep(1200);
nc.publish(subject, enc.encode("beat"));
await nc.flush();
print({ keepalive: "publish" });

await eventsDone;
clearTimeout(giveUp);
print({ done: true });
await nc.drain();

// A lease kept alive by a plain NATS client in another language: Node.js
// with the npm `nats` package (nats.js), no natcd library. It requests
// natcd.lease.keepalive.<lease id in hex> (asking for a JSON reply), learns
// the TTL from the reply, and renews every TTL/3 until stopped.
//
// RUN (nats.js comes from tests/js/node_modules: `make deps` installs it):
//   node examples/js/renew_lease.mjs nats://127.0.0.1:4222 694d7a1a2b3c4d5e
//
// OUTPUT (one line per reply; exits 0 on SIGINT/SIGTERM, 1 if the lease is gone):
//   renewed 694d7a1a2b3c4d5e: ttl 6
//   renewed 694d7a1a2b3c4d5e: ttl 6
//   ...
//
// Options: --prefix P (natcd's subject prefix, default natcd).
import { createRequire } from "node:module";

const require = createRequire(new URL("../../tests/js/package.json", import.meta.url));
const { connect, headers } = require("nats");

const args = process.argv.slice(2);
let prefix = "natcd";
const p = args.indexOf("--prefix");
if (p >= 0) prefix = args.splice(p, 2)[1];
const [url, leaseHex] = args;
if (!url || !/^[0-9a-fA-F]{1,16}$/.test(leaseHex ?? "") || !prefix) {
  console.error("usage: node renew_lease.mjs <nats url> <lease id in hex> [--prefix P]");
  process.exit(2);
}

const subject = `${prefix}.lease.keepalive.${leaseHex.toLowerCase()}`;
const h = headers();
h.set("Content-Type", "application/json");  // reply in JSON, not protobuf
const dec = new TextDecoder();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let nc;
let stopping = false;
const stop = async (code) => {
  stopping = true;
  if (nc) await nc.close().catch(() => {});
  process.exit(code);
};
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

try {
  nc = await connect({ servers: url, name: "natcd renew_lease example" });
  while (!stopping) {
    let ttl = 0;
    try {
      const reply = await nc.request(subject, new Uint8Array(), { timeout: 2000, headers: h });
      const error = reply.headers?.get("Nats-Service-Error");
      if (error) throw new Error(error);
      ttl = Number(JSON.parse(dec.decode(reply.data)).TTL ?? 0);  // int64: a JSON string
      if (ttl <= 0) {
        console.error(`lease ${leaseHex} not found (expired or revoked)`);
        await stop(1);
      }
      console.log(`renewed ${leaseHex}: ttl ${ttl}`);
    } catch (err) {
      if (stopping) break;
      console.error(`renewal failed: ${err.message}; retrying`);  // natcd down, timeout...
    }
    await sleep(ttl > 0 ? (ttl * 1000) / 3 : 500);
  }
} catch (err) {
  console.error(`error: ${err.message}`);
  await stop(1);
}

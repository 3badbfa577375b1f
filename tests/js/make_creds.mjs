// Writes an operator-mode nats-server config and a user credentials file
// (JWT + nkey seed) into the directory given as argv[2].
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
const require = createRequire(import.meta.url);
const nkeys = require("@nats-io/nkeys");
const jwt = require("@nats-io/jwt");

const dir = process.argv[2];
const operator = nkeys.createOperator();
const account = nkeys.createAccount();
const user = nkeys.createUser();
const operatorJwt = await jwt.encodeOperator("natcd-test", operator);
const accountJwt = await jwt.encodeAccount("NATCD", account,
  { limits: { conn: -1, subs: -1, data: -1, payload: -1, leaf: -1, imports: -1, exports: -1, wildcards: true } },
  { signer: operator });
const userJwt = await jwt.encodeUser("natcd", user, account);
const accountPub = account.getPublicKey();
writeFileSync(`${dir}/server.conf`,
  `operator: ${operatorJwt}\nresolver: MEMORY\nresolver_preload: {\n  ${accountPub}: ${accountJwt}\n}\n`);
writeFileSync(`${dir}/user.creds`, jwt.fmtCreds(userJwt, user));

// The child of the crash test: writes in a loop with durable commits and
// prints "acked <n> <revision>" after each Commit returned OK, until it is
// killed. Usage: crash_writer <db-path> <seed>
#include <stdio.h>
#include <stdlib.h>

#include <random>
#include <string>

#include "natcd/engine.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <db-path> <seed>\n", argv[0]);
    return 2;
  }
  natcd::SystemClock clock;
  natcd::EngineOptions options;
  options.db_path = argv[1];
  options.sync = true;
  options.clock = &clock;
  auto engine = natcd::Engine::Open(options);
  if (!engine.ok()) {
    fprintf(stderr, "open: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  std::mt19937 rng(static_cast<uint32_t>(atoi(argv[2])));
  long n = 0;
  for (;;) {
    // A group commit of 1..64 puts, plus a txn whose two writes must never
    // be seen apart.
    int batch = 1 + static_cast<int>(rng() % 64);
    for (int i = 0; i < batch; ++i, ++n) {
      natcd::PutRequest put{"k" + std::to_string(n), "v" + std::to_string(n)};
      if (!(*engine)->Put(put).ok()) return 1;
    }
    natcd::TxnRequest txn;
    std::string value = std::to_string(n);
    txn.success = {natcd::RequestOp{natcd::PutRequest{"pair/a", value}},
                   natcd::RequestOp{natcd::PutRequest{"pair/b", value}}};
    if (!(*engine)->Txn(txn).ok()) return 1;
    natcd::Status s = (*engine)->Commit();
    if (!s.ok()) {
      fprintf(stderr, "commit: %s\n", s.ToString().c_str());
      return 1;
    }
    printf("acked %ld %lld\n", n, static_cast<long long>((*engine)->revision()));
    fflush(stdout);
  }
}

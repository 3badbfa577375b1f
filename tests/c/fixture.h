// Test fixture for the C client: a real nats-server and a real natcd as
// child processes, on a free loopback port, with natcd's data in a fresh
// temporary directory.
//
//   natcdFixture fx;
//   natcdFixture_Init(&fx, extra_natcd_args);  // NULL-terminated, copied
//   natcdFixture_StartNats(&fx);               // free port on 127.0.0.1
//   natcdFixture_StartNatcd(&fx);              // waits for "serving"
//   natcdFixture_KillNatcd(&fx);               // SIGKILL: a crash
//   natcdFixture_RestartNats(&fx);             // same port
//   natcdFixture_Destroy(&fx);                 // kills both, removes the dir
//
// Binaries: $NATCD_BIN (set by `make check-client`), else build/bin/natcd;
// $NATCD_NATS_SERVER, else nats-server from PATH, /usr/sbin, /usr/bin.
// Children get PR_SET_PDEATHSIG(SIGKILL): they die with the test process.
// Every wait is bounded (start: 15 s).
#ifndef NATCD_TESTS_C_FIXTURE_H_
#define NATCD_TESTS_C_FIXTURE_H_

#include <stdbool.h>
#include <sys/types.h>

#define NATCD_FIXTURE_MAX_ARGS 32

typedef struct natcdFixture {
  char dir[256];  // temporary: data/, nats.log, natcd.log
  char data_dir[320];
  char nats_log[320];
  char natcd_log[320];
  int port;
  char url[64];  // nats://127.0.0.1:<port>
  pid_t nats_pid;
  pid_t natcd_pid;
  char* natcd_args[NATCD_FIXTURE_MAX_ARGS];  // extra flags for natcd
  int n_natcd_args;
} natcdFixture;

// Makes the temporary directory and picks a port. false on failure.
bool natcdFixture_Init(natcdFixture* fx, const char* const* natcd_args);
// Replaces natcd's extra flags (for the next StartNatcd).
void natcdFixture_SetNatcdArgs(natcdFixture* fx, const char* const* natcd_args);
bool natcdFixture_StartNats(natcdFixture* fx);
void natcdFixture_StopNats(natcdFixture* fx);  // SIGTERM, SIGKILL after 5 s
bool natcdFixture_RestartNats(natcdFixture* fx);
bool natcdFixture_StartNatcd(natcdFixture* fx);
void natcdFixture_KillNatcd(natcdFixture* fx);  // SIGKILL
void natcdFixture_StopNatcd(natcdFixture* fx);  // SIGTERM: clean shutdown
// Prints the tail of both logs to stderr (after a failure).
void natcdFixture_DumpLogs(const natcdFixture* fx);
void natcdFixture_Destroy(natcdFixture* fx);

// Starts `argv` (argv[0] an absolute path) as a child with stdout/stderr to
// log_path. Returns its pid, or -1.
pid_t natcdFixture_Spawn(char* const argv[], const char* log_path);
// Waits for a child to exit, at most timeout_ms; SIGKILLs it after that.
// Returns its wait status, or -1.
int natcdFixture_Reap(pid_t pid, int timeout_ms);

// Monotonic milliseconds, and a sleep.
long long natcdFixture_NowMs(void);
void natcdFixture_SleepMs(long long ms);

#endif  // NATCD_TESTS_C_FIXTURE_H_

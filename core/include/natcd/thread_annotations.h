// Clang's thread-safety annotations (-Wthread-safety), as leveldb and
// Abseil use them: fields say which lock guards them, functions which lock
// they need. Under g++ they expand to nothing; `make check-thread-safety`
// compiles the annotated code with clang so the compiler holds them.
#pragma once

#if defined(__clang__)
#define NATCD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define NATCD_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) NATCD_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY NATCD_THREAD_ANNOTATION(scoped_lockable)
#ifndef GUARDED_BY  // Abseil (under grpc++) defines the same legacy names
#define GUARDED_BY(x) NATCD_THREAD_ANNOTATION(guarded_by(x))
#endif
#ifndef PT_GUARDED_BY  // Abseil (under grpc++) defines the same legacy names
#define PT_GUARDED_BY(x) NATCD_THREAD_ANNOTATION(pt_guarded_by(x))
#endif
#define REQUIRES(...) NATCD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) NATCD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) NATCD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) NATCD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) NATCD_THREAD_ANNOTATION(assert_capability(x))
#ifndef NO_THREAD_SAFETY_ANALYSIS  // Abseil (under grpc++) defines the same legacy names
#define NO_THREAD_SAFETY_ANALYSIS NATCD_THREAD_ANNOTATION(no_thread_safety_analysis)
#endif

// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with
// the thread-safety annotations (thread_annotations.h), so that clang checks
// every access to a GUARDED_BY field (libstdc++'s own types carry none).
//
// ThreadRole: a capability held by "being on a thread", for state confined
// to one thread rather than guarded by a lock (Chromium's thread roles):
// the thread's entry point asserts it, the confined functions require it,
// and the confined fields are GUARDED_BY it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "natcd/thread_annotations.h"

namespace natcd {

class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  // Waits for a notification (spurious wake-ups too: loop on the condition);
  // `mu` is held again on return.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's
  }
  // Waits at most `timeout` for a notification; `mu` is held again on return.
  void WaitFor(Mutex* mu, std::chrono::milliseconds timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait_for(lock, timeout);
    lock.release();  // still held: the caller's
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

class CAPABILITY("thread role") ThreadRole {
 public:
  // The calling thread plays the role from here on (its entry point).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
};

}  // namespace natcd

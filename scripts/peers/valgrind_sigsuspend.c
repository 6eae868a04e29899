// Preloaded into tether-bench when scripts/bench-counts.sh runs it under valgrind: a `sigsuspend` that passes the
// kernel a copy of the mask instead of the caller's own.
//
// Why: a Swift program whose main is async parks its main thread in libdispatch's `_dispatch_sig_thread`, which
// calls `sigsuspend` with a mask in read-only memory. Valgrind 3.19 (Debian 12's) edits the mask in place before the
// system call, faults on the read-only page and stops with "VALGRIND INTERNAL ERROR: Valgrind received a signal 11".
// The copy is on the stack, which valgrind may edit; the process waits exactly as before. It runs once per process
// (the main thread parks once), so it does not change the counts per unit of work.
//
//   cc -O2 -shared -fPIC -o valgrind_sigsuspend.so valgrind_sigsuspend.c
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}

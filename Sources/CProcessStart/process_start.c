#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

// Blocks SIGINT, SIGTERM and SIGUSR1 before any shared library's initialiser runs (an executable's
// preinit array runs first): linking libav* and its ~150 libraries takes ~35 ms to reach main, and
// a job started with `&` from a script inherits SIGINT ignored, which the kernel discards unless
// it is blocked. Held, it waits for livemux's signal thread (SignalHandling).
static void lm_hold_stop_signals(int argc, char **argv, char **envp) {
    (void)argc; (void)argv; (void)envp;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    // The system call itself: a sanitizer's runtime intercepts sigprocmask, and may not be
    // initialised yet (its own preinit function can come after this one). The kernel's mask is
    // the first 8 bytes of glibc's sigset_t.
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, 0, _NSIG / 8);
}

__attribute__((section(".preinit_array"), used))
static void (*const lm_preinit)(int, char **, char **) = lm_hold_stop_signals;

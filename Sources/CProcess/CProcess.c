#define _GNU_SOURCE
#include "CProcess.h"

#include <signal.h>
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int authctl_forbid_core_dumps(void) {
    int result = 0;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) result = -1;
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) result = -1;
    return result;
}

static const int deferred_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define DEFERRED_COUNT (sizeof deferred_signals / sizeof deferred_signals[0])

static volatile sig_atomic_t arrived = 0;
static int depth = 0;
static struct sigaction previous[DEFERRED_COUNT];

static void record(int signo) {
    if (arrived == 0) arrived = signo;
}

void authctl_defer_termination_signals(void) {
    if (depth++ > 0) return;
    arrived = 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = record;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (size_t i = 0; i < DEFERRED_COUNT; i++) {
        sigaction(deferred_signals[i], &action, &previous[i]);
    }
}

int authctl_release_termination_signals(void) {
    if (depth == 0 || --depth > 0) return 0;
    for (size_t i = 0; i < DEFERRED_COUNT; i++) {
        sigaction(deferred_signals[i], &previous[i], NULL);
    }
    int signo = arrived;
    arrived = 0;
    return signo;
}

int authctl_pending_termination_signal(void) {
    return arrived;
}

int authctl_spawn_detached(const char *path, char *const argv[], char *const envp[]) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    // The child: only async-signal-safe calls until execve.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int signo = 1; signo < NSIG; signo++) {
        if (signo != SIGKILL && signo != SIGSTOP) signal(signo, SIG_DFL);
    }
    if (setsid() < 0) _exit(127);
    int null = open("/dev/null", O_RDWR);
    if (null < 0) _exit(127);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
        for (int fd = 3; fd < 65536; fd++) close(fd);
    }
    execve(path, argv, envp);
    _exit(127);
}

/// Closes every descriptor from `low` up, but `keep`: close_range where the kernel has it
/// (5.9), else one by one.
static void close_from_except(int low, int keep) {
    if (keep > low) {
        if (syscall(SYS_close_range, (unsigned)low, (unsigned)(keep - 1), 0U) != 0) {
            for (int fd = low; fd < keep; fd++) close(fd);
        }
    }
    int from = keep >= low ? keep + 1 : low;
    if (syscall(SYS_close_range, (unsigned)from, ~0U, 0U) != 0) {
        for (int fd = from; fd < 65536; fd++) close(fd);
    }
}

// fork and execve rather than posix_spawn: closing every other descriptor in the child needs
// posix_spawn_file_actions_addclosefrom_np, which glibc has only since 2.34, and the portable
// build runs on 2.31. A close-on-exec pipe carries execve's errno back, so a program that
// cannot start is still an error here (-1 and errno), as posix_spawn reports it.
int authctl_spawn_piped(const char *path, char *const argv[], char *const envp[], int input, int output) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(report[0]);
        close(report[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        // The child: only async-signal-safe calls until execve.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int signo = 1; signo < NSIG; signo++) {
            if (signo != SIGKILL && signo != SIGSTOP) signal(signo, SIG_DFL);
        }
        close(report[0]);
        int failure = 0;
        if (dup2(input, 0) < 0 || dup2(output, 1) < 0) failure = errno;
        int null = failure == 0 ? open("/dev/null", O_WRONLY) : -1;
        if (failure == 0 && (null < 0 || dup2(null, 2) < 0)) failure = errno;
        if (failure == 0) {
            close_from_except(3, report[1]);
            execve(path, argv, envp);
            failure = errno;
        }
        ssize_t ignored = write(report[1], &failure, sizeof failure);
        (void)ignored;
        _exit(127);
    }
    close(report[1]);
    int failure = 0;
    ssize_t got;
    do {
        got = read(report[0], &failure, sizeof failure);
    } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof failure) {
        // execve failed: reap the child that reported it.
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        errno = failure;
        return -1;
    }
    return pid;
}

#define _GNU_SOURCE
#include "CProcess.h"

#include <signal.h>
#include <spawn.h>
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>

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

int authctl_spawn_piped(const char *path, char *const argv[], char *const envp[], int input, int output) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    if (posix_spawn_file_actions_init(&actions) != 0) return -1;
    if (posix_spawnattr_init(&attributes) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_adddup2(&actions, input, 0);
    posix_spawn_file_actions_adddup2(&actions, output, 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    pid_t pid = -1;
    int failed = posix_spawn(&pid, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (failed != 0) {
        errno = failed;
        return -1;
    }
    return pid;
}

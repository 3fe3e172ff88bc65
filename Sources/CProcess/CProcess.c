#include "CProcess.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

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

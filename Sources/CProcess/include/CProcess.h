// CProcess: process-level safeguards authctl's executable needs from C.
//
// Why this exists: prctl() is a C variadic function, which Swift cannot call, and a signal handler
// must only touch a `volatile sig_atomic_t` (a Swift global may be initialised lazily, which is not
// async-signal-safe). Names are prefixed `authctl_` so they cannot collide with libc's.

#ifndef AUTHCTL_CPROCESS_H
#define AUTHCTL_CPROCESS_H

#ifdef __cplusplus
extern "C" {
#endif

/// Makes the process not dumpable (PR_SET_DUMPABLE 0: no core dump, even to a core_pattern pipe,
/// and no ptrace or /proc/PID/mem by other processes of the same user) and sets RLIMIT_CORE to 0,
/// soft and hard. Returns 0, or -1 with errno when either call failed.
int authctl_forbid_core_dumps(void);

/// From now on SIGINT, SIGTERM and SIGHUP are recorded instead of acted on (the first one is
/// kept), in whichever thread the kernel delivers them to. Calls nest; only the outermost acts.
void authctl_defer_termination_signals(void);

/// Ends what `authctl_defer_termination_signals` began (outermost call): the previous dispositions
/// are restored. Returns the signal that arrived meanwhile, 0 when none did; the caller re-raises it.
int authctl_release_termination_signals(void);

/// The signal recorded since `authctl_defer_termination_signals`, 0 when none arrived; unlike
/// the release, it leaves the deferral in place (a long run checks it between two steps).
int authctl_pending_termination_signal(void);

/// Starts `path` with `argv` and `envp` detached from the caller: a new session (setsid), standard
/// input, output and error on /dev/null, every other descriptor closed, no signal blocked (the
/// key agent must not inherit a terminal, a pipe a caller waits on, or a secret's descriptor).
/// Returns the child's pid, or -1 with errno.
int authctl_spawn_detached(const char *path, char *const argv[], char *const envp[]);

/// Starts `path` with `argv` and `envp` (fork and execve) talking over two descriptors: `input` becomes
/// its standard input, `output` its standard output, standard error goes to /dev/null, every other
/// descriptor is closed, no signal blocked (a pinentry must not inherit a secret's descriptor).
/// Returns the child's pid, or -1 with errno.
int authctl_spawn_piped(const char *path, char *const argv[], char *const envp[], int input, int output);

#ifdef __cplusplus
}
#endif

#endif

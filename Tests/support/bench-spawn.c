/* bench-spawn: runs one command and prints its wall-clock time, peak memory and CPU time.
 *
 *     bench-spawn COMMAND [ARGS...]    ->  on stderr, last line:
 *         "bench-spawn <ns> <maxrss KiB> <exit status> <user+sys CPU µs>"
 *
 * Why a C program: ru_maxrss survives exec, so a child forked (or vforked) from a large process
 * (the Python driver, 60 MiB with boto3 loaded) reports at least the parent's size. Forked from
 * this small program, the command's own peak is what wait4 reports. Standard input, output and
 * the environment are passed through. Built and run by Tests/support/bench.py (`make bench`). */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench-spawn COMMAND [ARGS...]\n");
        return 64;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = fork();
    if (pid < 0) { perror("bench-spawn: fork"); return 71; }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("bench-spawn: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) { perror("bench-spawn: wait4"); return 71; }
    clock_gettime(CLOCK_MONOTONIC, &end);
    long long ns = (end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    long long cpu_us = (long long)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL
        + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
    fprintf(stderr, "\nbench-spawn %lld %ld %d %lld\n", ns, usage.ru_maxrss, code, cpu_us);
    return 0;
}

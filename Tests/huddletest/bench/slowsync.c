/* A slow disk for benchmarks: every fsync and fdatasync of the process takes SLOWSYNC_MS
 * milliseconds longer (LD_PRELOAD). SQLite's durable commits wait for one; the rest of a node
 * should not. Built by bench/machine.py; never linked into Huddle. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void slow(void) {
    const char *text = getenv("SLOWSYNC_MS");
    long ms = text ? atol(text) : 50;
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    slow();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    slow();
    return real(fd);
}

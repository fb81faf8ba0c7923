/* A disk whose fsync costs nothing, for the benchmark that asks how much of a message's way is
 * the writer's durable commit: every fsync and fdatasync of the process returns at once, having
 * flushed nothing (LD_PRELOAD). Built by bench/machine.py; never linked into Huddle. */
int fsync(int fd) { (void)fd; return 0; }
int fdatasync(int fd) { (void)fd; return 0; }

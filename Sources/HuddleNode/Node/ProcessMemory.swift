#if canImport(CMalloc)
import CMalloc
#endif

/// How the node's process gives memory back.
enum ProcessMemory {
    /// Gives back to the system the pages its allocator holds free, in every heap (`malloc_trim`).
    ///
    /// A catch-up allocates and frees much beside what it keeps: each pulled frame (a few hundred
    /// KiB), the arrays each batch is decoded and checked in. glibc keeps what is freed for later
    /// use, and once such a block is freed it serves the next ones from its heaps too (its
    /// threshold for a mapping of their own rises to the largest freed). The sink of a
    /// 20,001-event pull kept ~250 B an event more that way (`Scripts/bench --only ingest`).
    ///
    /// Called once a pull of at least a batch ends, and on the timer's first quiet turn after a
    /// batch or more was taken in live (``Node/giveBackFreedOnceQuiet()``): it costs nothing per
    /// allocation. A fixed threshold (`M_MMAP_THRESHOLD`) instead kept ~70 B an event less, but
    /// each large block then took a fresh mapping and its page faults: the pull ran 10–25 %
    /// slower, and so did a piped burst's lines.
    static func giveBackFreed() {
        #if canImport(CMalloc)
        _ = malloc_trim(0)
        #endif
    }
}

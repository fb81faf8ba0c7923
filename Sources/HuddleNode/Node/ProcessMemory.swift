#if canImport(CMalloc)
import CMalloc
#endif

/// How the node's process gives memory back.
enum ProcessMemory {
    /// Every allocation of 128 KiB or more gets a mapping of its own, given back whole when freed.
    ///
    /// glibc raises that threshold each time such a block is freed, up to 32 MiB, and then serves
    /// the next large blocks from its heaps, where what is freed mostly stays. A catch-up makes
    /// many: each frame pulled or served (up to 4 MiB), the arrays a batch is decoded and checked
    /// in. The sink of a 20,001-event pull kept ~300 B an event more that way, and its source
    /// ~170 B (`Scripts/bench --only ingest`); the pull was no slower with the threshold fixed.
    /// (A `malloc_trim` once a pull ended gave back less.)
    static func returnLargeBlocks() {
        #if canImport(CMalloc)
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        #endif
    }
}

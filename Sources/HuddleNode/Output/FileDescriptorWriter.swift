import Foundation

/// Writes all of `bytes` to a file descriptor: retries after EINTR and partial writes, and waits
/// out a full non-blocking descriptor. Returns `false` if the reader went away (EPIPE, EIO...).
/// The one place the node writes text to stdout or a terminal.
func writeAll(_ bytes: [UInt8], to fileDescriptor: Int32) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { buffer in
            write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if written > 0 {
            offset += written
        } else if written < 0, errno == EINTR {
            continue
        } else if written < 0, errno == EAGAIN {
            usleep(1000)  // a non-blocking descriptor that is full: wait for the reader
        } else {
            return false
        }
    }
    return true
}

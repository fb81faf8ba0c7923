/// Why the node's store could not be opened, read or written, in words that name the file and
/// say what to do.
///
/// ```swift
/// do {
///     let store = try HuddleStore(directory: "/tmp/nowhere", readOnly: true)
/// } catch let error as StoreError {
///     print(error)   // "no Huddle data in /tmp/nowhere (start a node with this data dir first)"
/// }
/// ```
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The data directory does not exist and could not be created.
    case cannotCreateDirectory(path: String, reason: String)
    /// The data directory or the database file cannot be written (permissions, read-only disk).
    case notWritable(path: String, reason: String)
    /// Another store (another node, or this one opened twice) has the data directory open
    /// read-write. Two nodes sharing one identity would sign different events with the same ids.
    case inUse(directory: String)
    /// A file is where the database should be, but it is not a Huddle database.
    case notHuddleDatabase(path: String)
    /// The database was written by a newer Huddle whose format this one does not know.
    case newerFormat(path: String)
    /// A read-only open found a database that a node has not yet upgraded to this format.
    case outdatedFormat(path: String)
    /// A read-only open found no database in the directory.
    case noData(directory: String)
    /// The stored identity key is unusable. It is never replaced silently: that would change the
    /// node id and orphan every event the node signed.
    case corruptIdentity(path: String, reason: String)
    /// A stored event row does not decode, or decodes to an event other than its row's.
    case corruptEvent(path: String, room: String, origin: String, seq: UInt64, reason: String)
    /// A write was attempted on a store opened read-only.
    case readOnly(path: String)
    /// Any other SQLite failure (disk full, I/O error, a lock held too long…).
    case database(path: String, message: String)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let reason):
            "cannot create the data directory \(path): \(reason)"
        case .notWritable(let path, let reason):
            "cannot write to \(path): \(reason)"
        case .inUse(let directory):
            "another Huddle node is using the data dir \(directory) (stop it, or give this one another --data-dir)"
        case .notHuddleDatabase(let path):
            "\(path) is not a Huddle database (move it away or choose another data dir)"
        case .newerFormat(let path):
            "\(path) was written by a newer version of Huddle; upgrade huddle to use it"
        case .outdatedFormat(let path):
            "\(path) is in an older format; start the node once with this data dir to upgrade it"
        case .noData(let directory):
            "no Huddle data in \(directory) (start a node with this data dir first)"
        case .corruptIdentity(let path, let reason):
            "the identity key in \(path) is corrupt (\(reason)); refusing to replace it, since that would "
                + "change this node's id. Move the data dir away to start over as a new node"
        case .corruptEvent(let path, let room, let origin, let seq, let reason):
            "the stored event \(origin)#\(seq) of room \"\(room)\" in \(path) is corrupt: \(reason)"
        case .readOnly(let path):
            "\(path) is open read-only"
        case .database(let path, let message):
            "database error in \(path): \(message)"
        }
    }
}

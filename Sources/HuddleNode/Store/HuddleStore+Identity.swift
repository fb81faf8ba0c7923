import Foundation
import GRDB
public import HuddleCore

extension HuddleStore {
    /// The node's identity: the stored one, or on first start a new one from `generate`, stored
    /// before it is returned. Every later call, in this process or after a restart, returns the
    /// same identity.
    ///
    /// - Throws: ``StoreError/corruptIdentity(path:reason:)`` if a key is stored but unusable; it
    ///   is never replaced, since a new key means a new node id.
    ///   ``StoreError/readOnly(path:)`` on a read-only store that has no identity yet.
    public func loadOrCreateIdentity(
        generate: () -> NodeIdentity = NodeIdentity.generate
    ) throws -> NodeIdentity {
        if let stored = try storedIdentity() { return stored }
        let fresh = generate()
        return try write { db in
            // Another process may have stored one since the read above: it wins.
            if let stored = try Self.identity(in: db, path: path) { return stored }
            try db.execute(
                sql: "INSERT INTO identity (id, private_key, node_id) VALUES (1, ?, ?)",
                arguments: [Data(fresh.privateKeyBytes), fresh.id.hex])
            return fresh
        }
    }

    /// The stored identity, or `nil` if the node never started with this data dir.
    public func storedIdentity() throws -> NodeIdentity? {
        try read { db in try Self.identity(in: db, path: path) }
    }

    /// The nick the node last ran under, or `nil`.
    public var nick: String? {
        get throws { try metaValue("nick") }
    }

    /// Remembers the nick (`nil` forgets it).
    public func setNick(_ nick: String?) throws {
        try setMetaValue("nick", nick)
    }

    private static func identity(in db: Database, path: String) throws -> NodeIdentity? {
        guard let row = try Row.fetchOne(db, sql: "SELECT private_key, node_id FROM identity WHERE id = 1") else {
            return nil
        }
        guard let key = Data.fromDatabaseValue(row["private_key"]) else {
            throw StoreError.corruptIdentity(path: path, reason: "the key is not a blob")
        }
        let identity: NodeIdentity
        do {
            identity = try NodeIdentity(privateKeyBytes: [UInt8](key))
        } catch {
            throw StoreError.corruptIdentity(path: path, reason: error.description)
        }
        let recorded = String.fromDatabaseValue(row["node_id"])
        guard recorded == identity.id.hex else {
            throw StoreError.corruptIdentity(
                path: path, reason: "the key gives node id \(identity.id), not the recorded \(recorded ?? "(none)")")
        }
        return identity
    }

    // MARK: Settings

    func metaValue(_ key: String) throws -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
        }
    }

    func setMetaValue(_ key: String, _ value: String?) throws {
        try write { db in try Self.setMetaValue(key, value, in: db) }
    }

    static func setMetaValue(_ key: String, _ value: String?, in db: Database) throws {
        if let value {
            try db.execute(
                sql: """
                    INSERT INTO meta (key, value) VALUES (?, ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """,
                arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: [key])
        }
    }
}

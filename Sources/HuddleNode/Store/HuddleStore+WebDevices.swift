import Foundation
import GRDB
public import HuddleCore

extension HuddleStore {
    /// The phones and tablets paired with this node's page, oldest first: a phone paired last
    /// Sunday opens its page again without a new code.
    public func webDevices() throws -> [WebDevice] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, key, paired_at FROM web_device ORDER BY paired_at, id").compactMap { row in
                guard let key = Data.fromDatabaseValue(row[2]), key.count == 32 else { return nil }
                return WebDevice(id: row[0], name: row[1], key: Array(key), pairedAt: .milliseconds(sinceEpoch: row[3]))
            }
        }
    }

    /// A paired device kept (``StoreWrite/webDevice(_:)``, written by the node's ``StoreWriter``).
    static func keepWebDevice(_ device: WebDevice, in db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO web_device (id, name, key, paired_at) VALUES (?, ?, ?, ?)",
            arguments: [device.id, device.name, Data(device.key), device.pairedAt.millisecondsSinceEpoch])
    }
}

import ArgumentParser
import Foundation

/// A private room's passphrase, from the first line of a file (never from the command line,
/// where `ps` would show it).
enum Passphrase {
    /// The first line of `path`, without its line ending. Throws, in words, when the file is
    /// missing, a directory, unreadable, or its first line is blank.
    static func read(from path: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ValidationError("--passphrase-file \(path): there is no such file; put the passphrase on its first line")
        }
        guard !isDirectory.boolValue else {
            throw ValidationError("--passphrase-file \(path): that is a directory; give the file that holds the passphrase")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--passphrase-file \(path): cannot read it (check its permissions: chmod 600 and your own)")
        }
        let firstLine = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .first.map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) } ?? ""
        guard !firstLine.allSatisfy(\.isWhitespace) else {
            throw ValidationError("--passphrase-file \(path): its first line is blank; put the passphrase there")
        }
        return firstLine
    }
}

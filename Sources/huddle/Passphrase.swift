import ArgumentParser
import Foundation

/// A private room's passphrase from `--passphrase-file`: the file's first line, so that
/// `echo secret > file` and an editor's trailing newline both work. Never taken on the command
/// line, where `ps` and shell history would show it.
enum Passphrase {
    static func read(from path: String) throws -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("--passphrase-file \(path): cannot read it (\(error.localizedDescription))")
        }
        let firstLine = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .first.map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) } ?? ""
        guard !firstLine.isEmpty else {
            throw ValidationError("--passphrase-file \(path): its first line is empty; put the passphrase there")
        }
        return firstLine
    }
}

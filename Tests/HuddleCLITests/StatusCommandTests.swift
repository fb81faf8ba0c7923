import Foundation
import Testing

@testable import huddle

/// A fresh directory for one test, removed afterwards. Short, for Unix socket paths.
struct ScratchDirectory: ~Copyable {
    let path: String

    init() throws {
        var template = Array("/tmp/hcli-XXXXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite struct StatusCommandTests {
    init() { BrokenPipes.ignored }

    @Test func noNodeIsOneClearLineAndExitStatus1() async throws {
        let directory = try ScratchDirectory()
        let result = try await HuddleBinary.run(["status", "--name", "nobody-here", "--data-dir", directory.path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "Error: no Huddle node is running with data dir \(directory.path) "
                + "(start one with `huddle run --name nobody-here --data-dir \(directory.path)`)\n")
    }

    @Test func staleSocketFileIsNoNodeToo() async throws {
        let directory = try ScratchDirectory()
        try leaveStaleSocket(at: directory.path + "/control.sock")
        let result = try await HuddleBinary.run(["status", "--json", "--data-dir", directory.path])
        #expect(result.status == 1)
        // With --json the error is JSON on stdout, where a script reads.
        #expect(result.stdout.hasPrefix(#"{"type":"error","message":"no Huddle node is running with data dir "#))
        #expect(result.stdout.contains("huddle run --name NICK --data-dir \(directory.path)"))
    }

    @Test func nameAloneFindsTheDefaultDataDir() async throws {
        let home = try ScratchDirectory()
        // XDG_RUNTIME_DIR too: nodes running on this machine (another test's alice) record where
        // their data is there, and --name finds a running one.
        let result = try await HuddleBinary.run(
            ["status", "--name", "alice"], environment: ["XDG_DATA_HOME": home.path, "XDG_RUNTIME_DIR": home.path])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("data dir \(home.path)/huddle/alice (start one with `huddle run --name alice`)"))
    }

    @Test func neitherNameNorDataDirIsAUsageError() async throws {
        let result = try await HuddleBinary.run(["status"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("give --name NICK or --data-dir DIR"))
        #expect(result.stderr.contains("Usage: huddle status"))
    }

    @Test func parsesInProcess() throws {
        #expect(throws: (any Error).self) { try Huddle.parseAsRoot(["status"]) }
        let status = try #require(try Huddle.parseAsRoot(["status", "--name", "bob", "--json"]) as? Huddle.Status)
        #expect(status.json)
        #expect(status.location.name == "bob")
        #expect(status.location.startCommand == "huddle run --name bob")
        let odd = try #require(
            try Huddle.parseAsRoot(["status", "--name", "bo b", "--data-dir", "/tmp/it's"]) as? Huddle.Status)
        #expect(odd.location.directory == "/tmp/it's")
        #expect(odd.location.startCommand == #"huddle run --name 'bo b' --data-dir '/tmp/it'\''s'"#)
    }

    @Test func helpListsTheSubcommands() async throws {
        let result = try await HuddleBinary.run(["--help"])
        for name in ["status", "send", "history"] { #expect(result.stdout.contains("  \(name) ")) }
    }
}

/// Leaves a socket file nobody listens on, as a node killed with SIGKILL does.
func leaveStaleSocket(at path: String) throws {
    #if canImport(Glibc)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_UNIX, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw POSIXError(.EIO) }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0 else { throw POSIXError(.EIO) }
}

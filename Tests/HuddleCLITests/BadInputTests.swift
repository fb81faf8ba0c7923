import Foundation
import Testing

/// Every error a person can cause on the command line: a non-zero exit before anything starts,
/// one line that says what happened and what to do, no internal names, and JSON with `--json`.
@Suite struct BadInputTests {
    /// A directory no node runs in, and a file whose first line is blank.
    static let scratch: URL = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-bad-input-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? "   \nsecond line\n".write(to: directory.appendingPathComponent("blank"), atomically: true, encoding: .utf8)
        return directory
    }()

    static let cases: [(arguments: [String], says: String)] = [
        (["run", "--name", "bob", "--port", "-1"], "--port must be between 0 and 65535"),
        (["run", "--name", "bob", "--port", "70000"], "--port must be between 0 and 65535"),
        (["run", "--name", "bob", "--port", "seven"], "--port"),
        (["run", "--name", "big al"], "a nick cannot contain spaces"),
        (["run", "--name", ""], "a nick cannot be blank"),
        (["run", "--name", "bob\u{7}"], "a nick cannot contain control characters"),
        (["run", "--name", "bob#1"], "a nick cannot contain '#'"),
        (["run", "--name", "bob", "--room", ""], "a room name cannot be blank"),
        (["run", "--name", "bob", "--room", "super bowl"], "a room name cannot contain spaces"),
        (["run", "--name", "bob", "--room", "@bob"], "a room name cannot start with @"),
        (["run", "--name", "bob", "--room", "x", "--passphrase-file", "/"], "that is a directory"),
        (["run", "--name", "bob", "--room", "x", "--passphrase-file", "/no/such/file"], "there is no such file"),
        (["run", "--name", "bob", "--room", "x", "--passphrase-file", scratch.appendingPathComponent("blank").path],
         "its first line is blank"),
        (["run", "--name", "bob", "--peer", "nowhere"], "expected HOST:PORT"),
        (["run", "--name", "bob", "--log-level", "loud"], "--log-level must be one of"),
        (["run", "--name", "bob", "--interface", "wlan-nowhere"], "--interface \"wlan-nowhere\": no interface has that name; this machine has"),
        (["run", "--name", "bob", "--bogus"], "Unknown option '--bogus'"),
        (["status", "--data-dir", scratch.path], "no Huddle node is running"),
        (["history", "--data-dir", scratch.path, "--room", "superbowl", "--limit", "0"], "--limit must be a positive"),
        (["align", "/no/such.wav", "/no/such.wav"], "/no/such.wav: there is no such file"),
        (["align", "/", "/"], "that is a directory, not a WAV file"),
        (["align", scratch.appendingPathComponent("blank").path, "/"], "blank: not a WAV file"),
        (["align", "a.wav", "b.wav", "--max-lag", "0"], "--max-lag must be between 0 and 600 seconds"),
        (["align", "a.wav", "b.wav", "--method", "magic"], "--method must be features or xcorr"),
        (["align", "a.wav", "b.wav", "--block-ms", "0"], "--block-ms must be between 1 and 10000"),
    ]

    @Test(arguments: 0..<cases.count)
    func saysWhatHappenedAndExitsNonZero(_ index: Int) async throws {
        let (arguments, says) = Self.cases[index]
        let plain = try await HuddleBinary.run(arguments)
        #expect(plain.status != 0, "\(arguments)")
        #expect(plain.stderr.contains(says), "\(arguments): \(plain.stderr)")
        #expect(plain.stdout.isEmpty, "\(arguments): \(plain.stdout)")
        for implementation in ["NSCocoaErrorDomain", "errno", "descriptor:", "Swift.", "HuddleNode."] {
            #expect(!plain.stderr.contains(implementation), "\(arguments): \(plain.stderr)")
        }

        let json = try await HuddleBinary.run(arguments + ["--json"])
        #expect(json.status == plain.status, "\(arguments)")
        let lines = json.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments): \(json.stdout)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any], "\(arguments)")
        #expect(object["type"] as? String == "error")
        #expect((object["message"] as? String)?.contains(says) == true, "\(arguments): \(json.stdout)")
    }

    @Test func aPortInUseNamesThePortAndWhatToDo() async throws {
        let socket = try BoundPort()
        let result = try await HuddleBinary.run([
            "run", "--name", "bob", "--no-mdns", "--no-console", "--port", "\(socket.port)",
            "--data-dir", Self.scratch.appendingPathComponent("port").path,
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("port \(socket.port) is already in use"), "\(result.stderr)")
        #expect(result.stderr.contains("--port"))
        #expect(!result.stderr.contains("errno"))
    }
}

/// A TCP and UDP port held by this test process.
private final class BoundPort {
    let udp: Int32
    let port: UInt16

    init() throws {
        let udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.udp = udp
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = INADDR_ANY
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(udp, pointer, length) == 0 && getsockname(udp, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(udp) }
}

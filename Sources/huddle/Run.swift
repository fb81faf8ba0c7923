import ArgumentParser
import Foundation
import HuddleCore
import HuddleNode
import Logging
import ServiceLifecycle
import Synchronization

extension Huddle {
    /// `huddle run`: a node, with a console on stdin unless `--no-console`.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a node: chat in a room, with every message held back to your stream.",
            discussion: """
                Type a line to send it to the current room; commands start with / (try /help). \
                When a moment everyone can see happens on your screen (kickoff, a goal), type \
                /now LABEL; once others mark it too, their messages wait for your stream.

                On a terminal the console keeps your input line at the bottom, under a status \
                line, and chat scrolls by above it. When someone proposes a moment, the prompt \
                says [Enter = LABEL]: press Enter on an empty line the moment it is on your \
                screen, or Ctrl-T while typing, and the mark is timed at that keypress. Editing \
                keys as in a shell (arrows, Home/End, Ctrl-A/E/U/K/W/Y, Alt-B/F); Up/Down for \
                history (kept in the data dir); Tab completes commands, rooms, nicks and labels; \
                Ctrl-L redraws; Ctrl-C or Ctrl-D quits.

                A line holds one message (4,096 bytes); the status line counts a long one, and \
                a longer paste is offered as numbered messages (Enter sends them, Esc does not).

                Piped stdin, --plain and --json are read line by line. The conversation goes \
                to stdout, logs to stderr. End of input or /quit stops the node. When piped \
                input ends, the node waits up to 5 s until a peer has received what it wrote \
                (saying so on stderr, or in "delivery" lines with --json), then says goodbye.

                Exit codes: 0 stopped, and anything piped in reached a peer; 1 an error while \
                starting or running (a port in use, a broken store); 3 piped input ended and no \
                peer received what it wrote within 5 s (or no peer can be found at all): it is \
                stored in the data dir and goes out when a node runs there again; 64 a bad flag \
                or value (nothing started).
                """
        )

        @Option(name: .long, help: ArgumentHelp("The nick others see.", valueName: "NICK"))
        var name: String

        @Option(name: .long, help: ArgumentHelp("A room to join at start.", valueName: "ROOM"))
        var room: String?

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Make --room private: its passphrase is the first line of FILE. Only nodes with the same passphrase read or write the room; the network sees no name and no text. (In the console: /private ROOM.)",
                valueName: "FILE"))
        var passphraseFile: String?

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Where the store and control socket live (default: $XDG_DATA_HOME/huddle/NICK or ~/.local/share/huddle/NICK).",
                valueName: "DIR"))
        var dataDir: String?

        // Unconditional: `--port -1` is a bad port, said as such, not a missing value.
        @Option(
            name: .long, parsing: .unconditional,
            help: ArgumentHelp("UDP and TCP port (default: a free one, printed at start).", valueName: "N"))
        var port: Int?

        @Option(
            name: .customLong("peer"),
            help: ArgumentHelp("A peer to contact at start (repeatable); one is enough, peers share who they know.",
                               valueName: "HOST:PORT"))
        var peers: [String] = []

        @Flag(name: .customLong("no-mdns"), help: "Neither announce this node nor look for peers over mDNS: friends are found by --peer and through the peers they know.")
        var noMDNS = false

        @Flag(name: .long, help: "Print one JSON object per line on stdout instead of text.")
        var json = false

        @Flag(name: .customLong("no-console"), help: "Service mode: do not read stdin; run until SIGINT or SIGTERM.")
        var noConsole = false

        @Flag(name: .long, help: "On a terminal too, read stdin line by line: no prompt, status line or line editing.")
        var plain = false

        @Flag(
            name: .long,
            help: ArgumentHelp(
                "Hear your screen through the default input (PulseAudio or PipeWire) and find everyone's offsets from the sound, without a tap. Only coarse features of the sound leave this machine, never the sound. (In the console: /listen, /listen off.)"))
        var listen = false

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Listen to a WAV file (8-48 kHz, mono or stereo) played in real time from the node's start, as if the microphone heard it: for tests and demos.",
                valueName: "PATH"))
        var audioFile: String?

        @Option(
            name: .customLong("sound-recheck"),
            help: ArgumentHelp(
                "While listening, once your offset from a peer is known, re-check it by sound at most this often: each re-check shares 4 s of the room's sound features with your peers. Shorter finds a rebuffer sooner and shares more (120: 2 minutes an hour, a rebuffer found in about 60 s with two listeners, 30 s with four; 30: 8 minutes an hour).",
                valueName: "SECONDS"))
        var soundRecheck: Int = 120

        @Option(
            name: .customLong("pictures-quota"),
            help: ArgumentHelp(
                "Most MiB of pictures this node keeps on disk, all rooms together; past it the oldest pictures go (their messages and captions stay).",
                valueName: "MIB"))
        var picturesQuota: Int = NodeConfiguration.defaultPicturesQuota / 1_048_576

        @Option(
            name: .customLong("sound-placing"),
            help: ArgumentHelp(
                "While listening, how many seconds of the room's sound features an hour your node shares to place a peer that listens but whose offset is not known yet: a budget for each machine (all of its keys together), and half as much again for everyone together. A pair that matches at all is placed in about 15 s.",
                valueName: "SECONDS"))
        var soundPlacing: Int = 120

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Until you are placed with a writer (by marks or sound), their messages wait this many seconds after they were written, so that none can spoil your stream (streams of one broadcast differ by up to 90 s). 'off' shows them at once: only if your stream is ahead of everyone's. (In the console: /shield.)",
                valueName: "SECONDS|off"))
        var shield: String = "90"

        @Flag(
            name: .customLong("show-waiting"),
            help: "Count the messages held back for your stream on the status line (a count that jumps tells that a big play is coming).")
        var showWaiting = false

        @Flag(
            name: .long,
            help: ArgumentHelp(
                "Chat from your phone: serve this node's page on the local network and show a QR code, its address and a one-time code to pair a phone with (good once, for 5 minutes). Everything between phone and node is encrypted. (In the console: /web, /web devices, /web revoke NAME.)"))
        var web = false

        @Option(
            name: .customLong("web-port"),
            help: ArgumentHelp(
                "The page's TCP port (default \(NodeConfiguration.defaultWebPort); 0 picks a free one). Keep it the same from one game to the next: a paired phone remembers the address.",
                valueName: "PORT"))
        var webPort: Int?

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Announce and look for friends over mDNS on this network interface only (wlan0, eth0, en0), and give its address in the page's QR code: when a VPN, Docker or a second network takes them elsewhere (huddle doctor says so). Default: the Wi-Fi or Ethernet when it is the only one beside a VPN or a container bridge, else every interface the mDNS daemon uses.",
                valueName: "NAME"))
        var interface: String?

        @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "LEVEL"))
        var logLevel: String = "notice"

        /// `--shield` as a span, `nil` for off.
        func shieldSpan() throws -> TimeSpan? {
            if shield.lowercased() == "off" { return nil }
            guard let seconds = Int(shield), (1...ConsoleCommand.maximumShieldSeconds).contains(seconds) else {
                throw ValidationError(
                    "--shield must be whole seconds from 1 to \(ConsoleCommand.maximumShieldSeconds), or off")
            }
            return .seconds(Int64(seconds))
        }

        func validate() throws {
            // The rules the console and every other command keep (see NickName, RoomName).
            if let problem = NickName.problem(with: name) { throw ValidationError("--name \(Self.quoted(name)): \(problem)") }
            if let room, let problem = RoomName.problem(with: room) {
                throw ValidationError("--room \(Self.quoted(room)): \(problem)")
            }
            if passphraseFile != nil, room == nil {
                throw ValidationError("--passphrase-file needs --room: the passphrase is that room's")
            }
            if let passphraseFile { _ = try Passphrase.read(from: passphraseFile) }
            if let webPort, !(0...65_535).contains(webPort) {
                throw ValidationError("--web-port must be between 0 and 65535 (0: a free one)")
            }
            if webPort != nil, !web {
                throw ValidationError("--web-port needs --web (or type /web at the console)")
            }
            if let port, !(0...65_535).contains(port) {
                throw ValidationError("--port must be between 0 and 65535 (0 or none: a free one)")
            }
            for peer in peers where PeerAddress(parsing: peer) == nil {
                throw ValidationError("--peer \(peer): expected HOST:PORT, e.g. 192.168.1.20:7400")
            }
            if listen, audioFile != nil {
                throw ValidationError("give --listen or --audio-file, not both")
            }
            if let audioFile {
                // Read and checked now, so that a bad file stops the node before it starts; it is
                // read again, timed from the node's start, once the node listens.
                do {
                    _ = try WAVFileSource(path: audioFile, start: .epoch)
                } catch {
                    throw ValidationError("--audio-file: \(error)")
                }
            }
            _ = try shieldSpan()
            guard (10...3_600).contains(soundRecheck) else {
                throw ValidationError("--sound-recheck must be whole seconds from 10 to 3600 (default 120)")
            }
            guard (16...1_048_576).contains(picturesQuota) else {
                throw ValidationError("--pictures-quota must be whole MiB from 16 to 1048576 (default 256)")
            }
            guard (10...3_600).contains(soundPlacing) else {
                throw ValidationError("--sound-placing must be whole seconds from 10 to 3600 (default 120)")
            }
            if let interface { try Self.check(interface: interface) }
            guard Logger.Level(rawValue: logLevel) != nil else {
                throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
            }
        }

        /// `--interface NAME` names an interface of this machine with an IPv4 address.
        static func check(interface name: String) throws {
            let interfaces = MachineNetwork.interfaces()
            let usable = interfaces.map { "\($0.name) (\($0.addresses.joined(separator: ", ")))" }.joined(separator: ", ")
            let choose = usable.isEmpty ? "this machine has no network address now" : "this machine has \(usable)"
            guard MachineNetwork.index(of: name) != nil else {
                throw ValidationError("--interface \(quoted(name)): no interface has that name; \(choose)")
            }
            guard interfaces.contains(where: { $0.name == name }) else {
                throw ValidationError("--interface \(quoted(name)) has no IPv4 address (is it up, on a network?); \(choose)")
            }
        }

        /// `text` as a person typed it, quoted so that an empty or odd one shows.
        static func quoted(_ text: String) -> String {
            "\"" + TerminalText.escaped(text) + "\""
        }

        func run() async throws {
            let level = Logger.Level(rawValue: logLevel) ?? .notice
            var configuration = NodeConfiguration(
                nick: name, room: room, passphrase: try passphraseFile.map(Passphrase.read(from:)), dataDir: DataDirectory.resolve(explicit: dataDir, nick: name), port: port ?? 0,
                seeds: peers, mdns: !noMDNS, json: json, console: !noConsole,
                colors: !json && OutputSink.standardOutputWantsColors,
                listen: audioFile.map { .file($0) } ?? (listen ? .device : nil))
            configuration.shield = try shieldSpan()
            configuration.showWaiting = showWaiting
            configuration.web = web
            configuration.webPort = webPort ?? NodeConfiguration.defaultWebPort
            configuration.interface = interface
            configuration.picturesQuota = picturesQuota * 1_048_576
            configuration.soundSharing = SoundSharing.Rules(
                recheckEvery: .seconds(Int64(soundRecheck)), placing: .seconds(Int64(soundPlacing)))
            // The interactive console when a person is at a terminal; scripts get lines.
            let console =
                configuration.console && !json && !plain && InteractiveConsole.isAvailable
                ? InteractiveConsole(historyDirectory: configuration.dataDir, colors: configuration.colors) : nil
            LoggingSystem.bootstrap { label in
                if let console { return ConsoleLogHandler(console: console, level: level) }
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "huddle")
            // A closed stdout (`huddle run --json | head -1`) must not kill the node mid-write.
            signal(SIGPIPE, SIG_IGN)
            // The page's server runs beside the node. The group stops its services in reverse
            // order: the page first, so that every open page hears `bye` while the node still runs.
            let web = WebService()
            let service = NodeService(configuration: configuration, console: console, web: web, logger: logger)
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: [
                        .init(
                            service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                            failureTerminationBehavior: .gracefullyShutdownGroup),
                        .init(service: web, failureTerminationBehavior: .gracefullyShutdownGroup),
                    ],
                    // A closed terminal (SIGHUP) stops an interactive node cleanly; a service
                    // keeps SIGHUP's disposition (nohup's ignore).
                    gracefulShutdownSignals: console == nil ? [.sigterm, .sigint] : [.sigterm, .sigint, .sighup],
                    logger: logger))
            do {
                defer { console?.stop() }
                try await group.run()
                if service.outcome.withLock({ $0 }) == .notYetSent {
                    throw ExitCode(RunOutcome.notYetSentExitCode)
                }
            } catch let exit as ExitCode {
                throw exit
            } catch {
                let message = "\(service.failure.withLock { $0 } ?? "\(error)")"
                if json {
                    print(JSONRenderer().error(message))
                } else {
                    FileHandle.standardError.write(Data("huddle: \(message)\n".utf8))
                }
                throw ExitCode.failure
            }
        }
    }
}

/// Runs the node as a service: a graceful shutdown (SIGINT, SIGTERM; SIGHUP on the interactive
/// console) cancels it.
final class NodeService: Service, Sendable {
    let configuration: NodeConfiguration
    let console: InteractiveConsole?
    let web: WebService
    let logger: Logger
    /// Why the node stopped, in words, if it failed.
    let failure = Mutex<String?>(nil)
    /// How the run ended, once it did.
    let outcome = Mutex<RunOutcome>(.stopped)

    init(configuration: NodeConfiguration, console: InteractiveConsole?, web: WebService, logger: Logger) {
        self.configuration = configuration
        self.console = console
        self.web = web
        self.logger = logger
    }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                let outcome = try await Node.run(self.configuration, logger: self.logger, console: self.console, web: self.web)
                self.outcome.withLock { $0 = outcome }
            }
        } catch is CancellationError {
            return
        } catch {
            failure.withLock { $0 = "\(error)" }
            throw error
        }
    }
}

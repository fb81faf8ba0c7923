public import Logging

/// Log lines for a node with an interactive console: printed above the prompt (dimmed) so they
/// never break the line being typed, or on stderr while the console is not running.
///
/// ```swift
/// LoggingSystem.bootstrap { label in ConsoleLogHandler(console: console, level: .notice) }
/// // notice: mDNS is not available (no avahi-daemon answers) (huddle.peer=...)
/// ```
public struct ConsoleLogHandler: LogHandler {
    let console: InteractiveConsole
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    public init(console: InteractiveConsole, level: Logger.Level) {
        self.console = console
        logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadataProvider?.get() ?? [:]
        all.merge(metadata) { $1 }
        all.merge(event.metadata ?? [:]) { $1 }
        var text = "\(event.level): \(event.message)"
        if !all.isEmpty {
            text += " (" + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + ")"
        }
        console.log(TerminalText.escaped(text))
    }
}

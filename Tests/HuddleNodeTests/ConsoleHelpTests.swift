import HuddleCore
import Testing

@testable import HuddleNode

/// `/help` and `/help all`: what they say, against the commands the grammar knows.
@Suite struct ConsoleHelpTests {
    /// `/help` fits a small terminal (24 rows) with room to spare, names every command at least
    /// in passing, and says where the rest is.
    @Test func theShortHelpFitsASmallTerminalAndNamesEveryCommand() {
        let lines = ConsoleHelp.short.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 14)
        #expect(lines.allSatisfy { $0.count <= 100 })
        let named = Set(ConsoleHelp.short.split(whereSeparator: { " ,[]\n".contains($0) }).map(String.init))
        let missing = ConsoleCommand.names.filter { !named.contains($0) && !["/exit", "/help", "/unmark", "/ignore", "/teams", "/shield"].contains($0) }
        #expect(missing.isEmpty, "\(missing)")
        #expect(ConsoleHelp.short.contains("/help all"))
    }

    @Test func helpListsEveryCommand() {
        for command in ConsoleCommand.names {
            #expect(ConsoleHelp.all.contains(command + " "))
            // Every name completion offers is a command the parser knows.
            do {
                _ = try ConsoleCommand(parsing: command)
            } catch {
                #expect(error != .unknownCommand(command))
            }
        }
    }
}

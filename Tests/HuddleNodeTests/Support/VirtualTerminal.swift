@testable import HuddleNode

/// A small terminal emulator for tests: enough of a VT100/xterm (CR, LF, BS, cursor moves, erase,
/// SGR ignored, deferred autowrap, scrolling, wide characters) to show what a user would see after
/// the console's bytes reach a real terminal.
struct VirtualTerminal {
    private(set) var columns: Int
    let rows: Int
    /// Each cell holds a character, `""` for the right half of a wide one, or `" "`.
    private(set) var grid: [[String]]
    private(set) var row = 0
    private(set) var column = 0
    /// Lines that scrolled off the top, oldest first.
    private(set) var scrollback: [String] = []
    /// The cursor sits past the last column; the next character wraps first (xterm's rule).
    private var pendingWrap = false

    init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
        grid = Array(repeating: Array(repeating: " ", count: columns), count: rows)
    }

    /// The screen's rows, trailing blanks trimmed.
    var lines: [String] { grid.map(Self.text) }

    /// The rows from the first non-blank one to the last non-blank one.
    var visible: [String] {
        let all = lines
        guard let first = all.firstIndex(where: { !$0.isEmpty }), let last = all.lastIndex(where: { !$0.isEmpty })
        else { return [] }
        return Array(all[first...last])
    }

    /// Everything ever shown, scrollback first.
    var transcript: [String] { scrollback + lines }

    mutating func feed(_ text: String) {
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\r\n":
                carriageReturn()
                lineFeed()
            case "\r": carriageReturn()
            case "\n": lineFeed()
            case "\u{07}": break
            case "\u{08}":
                column = max(0, column - 1)
                pendingWrap = false
            case "\u{1b}": escape(&characters)
            default: put(character)
            }
        }
    }

    /// Narrows the terminal the way tmux, VTE and most others do: each row wider than the new
    /// width is wrapped onto several rows, and the cursor moves to the row its column fell into;
    /// rows pushed off the top go to the scrollback.
    mutating func narrow(to newColumns: Int) {
        precondition(newColumns <= columns)
        var reflowed: [[String]] = []
        var cursorRow = 0
        for (index, cells) in grid.enumerated() {
            var used = cells
            while used.last == " " { used.removeLast() }
            if index == row { used += Array(repeating: " ", count: max(0, column + 1 - used.count)) }
            let pieces = max(1, (used.count + newColumns - 1) / newColumns)
            if index == row { cursorRow = reflowed.count + column / newColumns }
            for piece in 0..<pieces {
                var slice = Array(used[min(used.count, piece * newColumns)..<min(used.count, (piece + 1) * newColumns)])
                slice += Array(repeating: " ", count: newColumns - slice.count)
                reflowed.append(slice)
            }
        }
        // Blank rows below the cursor are what the terminal drops first to keep the height.
        while reflowed.count > rows, reflowed.count - 1 > cursorRow, Self.text(reflowed.last!).isEmpty {
            reflowed.removeLast()
        }
        while reflowed.count > rows {
            scrollback.append(Self.text(reflowed.removeFirst()))
            cursorRow -= 1
        }
        while reflowed.count < rows { reflowed.append(Array(repeating: " ", count: newColumns)) }
        grid = reflowed
        column = column % newColumns
        row = cursorRow
        columns = newColumns
        pendingWrap = false
    }

    // MARK: Pieces

    private static func text(_ row: [String]) -> String {
        var line = row.joined()
        while line.last == " " { line.removeLast() }
        return line
    }

    private mutating func carriageReturn() {
        column = 0
        pendingWrap = false
    }

    private mutating func lineFeed() {
        pendingWrap = false
        if row + 1 < rows {
            row += 1
        } else {
            scrollback.append(Self.text(grid.removeFirst()))
            grid.append(Array(repeating: " ", count: columns))
        }
    }

    private mutating func put(_ character: Character) {
        let width = DisplayWidth.of(character)
        guard width > 0 else { return }
        if pendingWrap || column + width > columns {
            carriageReturn()
            lineFeed()
        }
        grid[row][column] = String(character)
        if width == 2 { grid[row][column + 1] = "" }
        column += width
        if column >= columns {
            column = columns - 1
            pendingWrap = true
        }
    }

    private mutating func escape(_ characters: inout ArraySlice<Character>) {
        guard let kind = characters.popFirst() else { return }
        guard kind == "[" else { return }
        var parameters = ""
        while let next = characters.popFirst() {
            guard let scalar = next.unicodeScalars.first, (0x40...0x7e).contains(scalar.value) else {
                parameters.append(next)
                continue
            }
            csi(final: next, parameters: parameters)
            return
        }
    }

    private mutating func csi(final: Character, parameters: String) {
        let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        let n = max(1, (numbers.first ?? nil) ?? 1)
        pendingWrap = false
        switch final {
        case "A": row = max(0, row - n)
        case "B": row = min(rows - 1, row + n)
        case "C": column = min(columns - 1, column + n)
        case "D": column = max(0, column - n)
        case "G": column = min(columns - 1, n - 1)
        case "H":
            row = min(rows - 1, max(1, (numbers.first ?? nil) ?? 1) - 1)
            column = min(columns - 1, max(1, (numbers.count > 1 ? numbers[1] : nil) ?? 1) - 1)
        case "J":
            let mode = (numbers.first ?? nil) ?? 0
            if mode == 2 {
                grid = Array(repeating: Array(repeating: " ", count: columns), count: rows)
            } else {
                for c in column..<columns { grid[row][c] = " " }
                for r in (row + 1)..<rows { grid[r] = Array(repeating: " ", count: columns) }
            }
        case "K":
            for c in column..<columns { grid[row][c] = " " }
        default:
            break  // SGR colours, bracketed paste on/off: nothing to draw
        }
    }
}

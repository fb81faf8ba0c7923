/// Columns of text padded to line up, like `serf members` prints them.
///
/// ```swift
/// TextTable(header: ["NICK", "STATE"], rows: [["bob", "alive"]]).lines(indent: "  ")
/// // ["  NICK  STATE", "  bob   alive"]
/// ```
struct TextTable {
    var header: [String]
    var rows: [[String]]

    /// The header and the rows, each column as wide as its widest cell, trailing spaces trimmed.
    func lines(indent: String = "") -> [String] {
        let all = [header] + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return all.map { row in
            var line = indent
            for (index, cell) in row.enumerated() {
                let last = index == row.count - 1
                line += last ? cell : cell + String(repeating: " ", count: widths[index] - cell.count + 2)
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}

/// Columns of text padded to line up, like `serf members` prints them; narrowed to a terminal's
/// width when given one, so a row never wraps into the next.
///
/// ```swift
/// TextTable(header: ["NICK", "STATE"], rows: [["bob", "alive"]]).lines(indent: "  ")
/// // ["  NICK  STATE", "  bob   alive"]
/// ```
struct TextTable {
    var header: [String]
    var rows: [[String]]
    /// Columns a narrow terminal may leave out, the least missed first (indices into ``header``).
    var droppable: [Int] = []

    /// The header and the rows, each column as wide as its widest cell, trailing spaces trimmed.
    /// With `width`, columns in ``droppable`` are left out, in order, until the lines fit; if they
    /// still do not, the widest column's longest cells are cut short with "…".
    func lines(indent: String = "", width: Int? = nil) -> [String] {
        var all = ([header] + rows).map { row in row + Array(repeating: "", count: max(0, header.count - row.count)) }
        var keep = Array(header.indices)
        func widths() -> [Int] { keep.map { column in all.map { $0[column].count }.max() ?? 0 } }
        func total() -> Int { indent.count + widths().reduce(0, +) + 2 * max(0, keep.count - 1) }
        if let width {
            for column in droppable where total() > width && keep.count > 1 {
                keep.removeAll { $0 == column }
            }
            // Still too wide: shorten the widest column, a character at a time, down to 4.
            while total() > width {
                let current = widths()
                guard let widest = current.indices.max(by: { current[$0] < current[$1] }), current[widest] > 4 else { break }
                let column = keep[widest]
                let limit = current[widest] - 1
                for row in all.indices where all[row][column].count > limit {
                    all[row][column] = String(all[row][column].prefix(limit - 1)) + "…"
                }
            }
        }
        let padded = widths()
        return all.map { row in
            var line = indent
            for (position, column) in keep.enumerated() {
                let cell = row[column]
                let last = position == keep.count - 1
                line += last ? cell : cell + String(repeating: " ", count: padded[position] - cell.count + 2)
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}

import CQRencode

/// A QR code of a short text (the page's link), drawn with libqrencode (a maintained encoder,
/// not one of ours) and written for a terminal: two rows of modules a line, in half blocks, with
/// the quiet zone around it that a camera needs.
///
/// ```swift
/// QRCode(encoding: "http://192.168.1.20:7780/#pair=…")?.terminalLines(dark: true)
/// ```
struct QRCode: Sendable {
    /// Modules, row by row: `true` is dark.
    let modules: [[Bool]]

    /// `nil` if libqrencode cannot encode it (too long for a QR code).
    init?(encoding text: String) {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        var modules: [[Bool]] = []
        for y in 0..<width {
            modules.append((0..<width).map { x in code.pointee.data[y * width + x] & 1 == 1 })
        }
        self.modules = modules
    }

    /// The code as text: `▀`, `▄`, `█` and spaces, two module rows a line, with a 2-module quiet
    /// zone. `darkBackground`: the terminal is light on dark, so dark modules are drawn as spaces
    /// and light ones as blocks (a camera reads it the same).
    func terminalLines(darkBackground: Bool = true, quietZone: Int = 2) -> [String] {
        let size = modules.count + 2 * quietZone
        func isDark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quietZone, y - quietZone)
            guard modules.indices.contains(my), modules.indices.contains(mx) else { return false }
            return modules[my][mx]
        }
        var lines: [String] = []
        for y in stride(from: 0, to: size, by: 2) {
            var line = ""
            for x in 0..<size {
                // What is drawn (the block) is the light modules on a dark terminal.
                let top = isDark(x, y) != darkBackground
                let bottom = (y + 1 < size && isDark(x, y + 1)) != darkBackground
                line.append(top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " "))
            }
            lines.append(line)
        }
        return lines
    }
}

import Testing

@testable import HuddleNode

/// libqrencode's code as the terminal shows it: the shape a camera needs.
@Suite struct QRCodeTests {
    let link = "http://192.168.1.20:7780/#pair=8YRAGMRYNDYWKKDN9C7F66BADR"

    @Test func theLinkFitsASmallCodeWithItsFinderPatterns() throws {
        let code = try #require(QRCode(encoding: link))
        let size = code.modules.count
        #expect((size - 17) % 4 == 0 && size <= 41, "a QR version of 1–6 (\(size) modules)")
        #expect(code.modules.allSatisfy { $0.count == size })
        // The three finder patterns: a 7×7 dark ring with a 3×3 dark centre, at three corners.
        for (x0, y0) in [(0, 0), (size - 7, 0), (0, size - 7)] {
            for y in 0..<7 {
                for x in 0..<7 {
                    let ring = x == 0 || x == 6 || y == 0 || y == 6
                    let centre = (2...4).contains(x) && (2...4).contains(y)
                    #expect(code.modules[y0 + y][x0 + x] == (ring || centre))
                }
            }
        }
    }

    @Test func theTerminalDrawsTwoRowsALineWithAQuietZone() throws {
        let code = try #require(QRCode(encoding: link))
        let lines = code.terminalLines(darkBackground: true, quietZone: 2)
        let size = code.modules.count + 4
        #expect(lines.count == (size + 1) / 2)
        #expect(lines.allSatisfy { $0.count == size })
        // On a dark terminal the quiet zone (light) is drawn as full blocks.
        #expect(lines[0].allSatisfy { $0 == "█" })
        // The top-left finder's top row is dark (a space), one line down past the quiet zone.
        let row = Array(lines[1])
        #expect(row[2...8].allSatisfy { $0 == " " || $0 == "▄" })
        // A light terminal draws the opposite.
        let light = code.terminalLines(darkBackground: false, quietZone: 2)
        #expect(light[0].allSatisfy { $0 == " " })
    }

    @Test func tooLongForAQRCodeIsNil() {
        #expect(QRCode(encoding: String(repeating: "x", count: 8_000)) == nil)
    }
}

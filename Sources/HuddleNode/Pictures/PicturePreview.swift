import Foundation
import HuddleCore

/// A picture's preview in the console: a few rows under its line, drawn by libchafa from pixels
/// libjpeg-turbo, libspng or libwebp decoded (all loaded the first time a preview is drawn). `nil`
/// where a library is missing or the picture cannot be drawn: the line then says where the file
/// is, and `/open N` opens it.
enum PicturePreview {
    /// The preview's height in rows, and its widest.
    static let rows = 8
    static let maxColumns = 48

    static func draw(_ picture: Picture, at path: String, columns: Int, environment: [String: String]) -> String? {
        guard let chafa = ChafaLibrary.shared(), let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let image = try? PictureDecoder.shared().rgba(Array(data), fitting: 320) else { return nil }
        return chafa.draw(
            image, columns: max(8, min(maxColumns, columns - 2)), rows: rows, graphics: TerminalGraphics(environment: environment))
    }

    /// Why previews cannot be drawn here, when a library is missing: said once.
    static func missingLibraries(for type: PictureType) -> String? {
        if ChafaLibrary.shared() == nil { return "libchafa0" }
        let decoder = PictureDecoder.shared()
        switch type {
        case .jpeg where decoder.jpeg == nil, .png where decoder.png == nil, .webp where decoder.webp == nil:
            return PictureDecoder.package(for: type)
        default: return nil
        }
    }
}

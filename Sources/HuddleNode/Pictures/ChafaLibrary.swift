#if os(Linux)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libchafa (`libchafa.so.0`, Debian's `libchafa0`), loaded when the first preview is drawn: it
/// turns pixels into what a terminal shows, as sixels, kitty's or iTerm2's graphics where the
/// terminal has them, else Unicode block symbols in colour. Only the functions a one-off drawing
/// uses are looked up; their types are chafa's stable C API (1.6 on). `g_string_free` is glib's,
/// found through chafa's own dependencies.
struct ChafaLibrary: @unchecked Sendable {
    // @unchecked: function pointers into a library that stays loaded for the life of the process.
    typealias ConfigNew = @convention(c) () -> OpaquePointer?
    typealias ConfigUnref = @convention(c) (OpaquePointer?) -> Void
    typealias ConfigSetGeometry = @convention(c) (OpaquePointer?, Int32, Int32) -> Void
    typealias ConfigSetMode = @convention(c) (OpaquePointer?, Int32) -> Void
    typealias CanvasNew = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias CanvasUnref = @convention(c) (OpaquePointer?) -> Void
    typealias Draw = @convention(c) (OpaquePointer?, Int32, UnsafePointer<UInt8>?, Int32, Int32, Int32) -> Void
    /// Returns a `GString *` (glib's `{ gchar *str; gsize len; gsize allocated_len; }`).
    typealias Print = @convention(c) (OpaquePointer?, OpaquePointer?) -> UnsafeMutableRawPointer?
    typealias TermDBDefault = @convention(c) () -> OpaquePointer?
    typealias TermDBDetect = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> OpaquePointer?
    typealias TermInfoUnref = @convention(c) (OpaquePointer?) -> Void
    typealias TermInfoHave = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias StringFree = @convention(c) (UnsafeMutableRawPointer?, Int32) -> UnsafeMutableRawPointer?

    // ChafaCanvasMode, ChafaPixelMode, ChafaPixelType, ChafaTermSeq values (chafa.h, 1.12).
    static let canvasTruecolor: Int32 = 0, canvas256: Int32 = 1, canvas16: Int32 = 3
    static let pixelSymbols: Int32 = 0, pixelSixels: Int32 = 1, pixelKitty: Int32 = 2, pixelITerm2: Int32 = 3
    static let rgba8Unassociated: Int32 = 4
    static let seqSixels: Int32 = 40, seqKitty: Int32 = 43, seqITerm2: Int32 = 47

    let configNew: ConfigNew
    let configUnref: ConfigUnref
    let setGeometry: ConfigSetGeometry
    let setCanvasMode: ConfigSetMode
    let setPixelMode: ConfigSetMode
    let canvasNew: CanvasNew
    let canvasUnref: CanvasUnref
    let draw: Draw
    let print: Print
    let termDB: TermDBDefault
    let detect: TermDBDetect
    let termInfoUnref: TermInfoUnref
    let have: TermInfoHave
    let stringFree: StringFree

    static let names = ["libchafa.so.0", "libchafa.so", "libchafa.0.dylib"]

    static func shared() -> ChafaLibrary? { loaded }
    private static let loaded = load()

    private static func load() -> ChafaLibrary? {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else { return nil }
        func symbol<Function>(_ name: String, as _: Function.Type) -> Function? {
            dlsym(handle, name).map { unsafeBitCast($0, to: Function.self) }
        }
        guard let configNew = symbol("chafa_canvas_config_new", as: ConfigNew.self),
            let configUnref = symbol("chafa_canvas_config_unref", as: ConfigUnref.self),
            let setGeometry = symbol("chafa_canvas_config_set_geometry", as: ConfigSetGeometry.self),
            let setCanvasMode = symbol("chafa_canvas_config_set_canvas_mode", as: ConfigSetMode.self),
            let setPixelMode = symbol("chafa_canvas_config_set_pixel_mode", as: ConfigSetMode.self),
            let canvasNew = symbol("chafa_canvas_new", as: CanvasNew.self),
            let canvasUnref = symbol("chafa_canvas_unref", as: CanvasUnref.self),
            let draw = symbol("chafa_canvas_draw_all_pixels", as: Draw.self),
            let print = symbol("chafa_canvas_print", as: Print.self),
            let termDB = symbol("chafa_term_db_get_default", as: TermDBDefault.self),
            let detect = symbol("chafa_term_db_detect", as: TermDBDetect.self),
            let termInfoUnref = symbol("chafa_term_info_unref", as: TermInfoUnref.self),
            let have = symbol("chafa_term_info_have_seq", as: TermInfoHave.self),
            let stringFree = symbol("g_string_free", as: StringFree.self)
        else { return nil }
        return ChafaLibrary(
            configNew: configNew, configUnref: configUnref, setGeometry: setGeometry, setCanvasMode: setCanvasMode,
            setPixelMode: setPixelMode, canvasNew: canvasNew, canvasUnref: canvasUnref, draw: draw, print: print,
            termDB: termDB, detect: detect, termInfoUnref: termInfoUnref, have: have,
            stringFree: stringFree)
    }

    /// The cells a picture fills within `columns` × `rows`, keeping its shape: a cell is about
    /// twice as tall as it is wide.
    static func cells(width: Int, height: Int, columns: Int, rows: Int) -> (Int32, Int32) {
        let aspect = Double(max(1, width)) / Double(max(1, height))
        var (w, h) = (Double(rows) * aspect * 2, Double(rows))
        if w > Double(columns) { (w, h) = (Double(columns), Double(columns) / aspect / 2) }
        return (Int32(max(1, w.rounded())), Int32(max(1, h.rounded())))
    }

    /// `image` drawn for a terminal in at most `columns` × `rows` cells, as `graphics` says it can
    /// show pictures (and the terminal's entry in chafa's database agrees), keeping its shape.
    func draw(_ image: PictureDecoder.Image, columns: Int, rows: Int, graphics: TerminalGraphics) -> String? {
        let (width, height) = Self.cells(width: image.width, height: image.height, columns: columns, rows: rows)
        guard let config = configNew() else { return nil }
        defer { configUnref(config) }
        var environment = graphics.environment.map { strdup($0) } + [nil]
        defer { for entry in environment { free(entry) } }
        let info = detect(termDB(), &environment)
        defer { termInfoUnref(info) }
        setGeometry(config, width, height)
        setCanvasMode(config, graphics.colours)
        let pixelMode: Int32 =
            switch graphics.pictures {
            case .sixels where have(info, Self.seqSixels) != 0: Self.pixelSixels
            case .kitty where have(info, Self.seqKitty) != 0: Self.pixelKitty
            case .iTerm2 where have(info, Self.seqITerm2) != 0: Self.pixelITerm2
            default: Self.pixelSymbols
            }
        setPixelMode(config, pixelMode)
        guard let canvas = canvasNew(config) else { return nil }
        defer { canvasUnref(canvas) }
        image.pixels.withUnsafeBufferPointer {
            draw(canvas, Self.rgba8Unassociated, $0.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width * 4))
        }
        guard let printed = print(canvas, info) else { return nil }
        // The GString's first field is its text.
        let text = printed.load(as: UnsafeMutablePointer<CChar>?.self).map { String(cString: $0) }
        _ = stringFree(printed, 1)
        return text
    }
}

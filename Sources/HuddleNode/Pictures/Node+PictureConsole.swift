import Foundation
import HuddleCore

/// Pictures at the console: a preview under a picture's line, its number, and `/open N`.
extension Node {
    /// Under a picture's line at the console: its preview, drawn for the terminal (when stdout is
    /// one, and libchafa and the decoder are here), and its number for `/open N` with its path.
    func showPicturesAtConsole(of output: NodeOutput) {
        guard !configuration.json else { return }
        let message: ShownMessage
        switch output {
        case .room(.message(let shown), _) where !shown.pictureMissing && !shown.pictureUnreadable: message = shown
        case .room(.pictureArrived(let shown), _) where !shown.pictureUnreadable: message = shown
        default: return
        }
        guard let picture = message.picture else { return }
        shownPictures.atConsole.append(picture)
        let path = pictures.shownPath(of: picture)
        var lines: [String] = []
        let environment = ProcessInfo.processInfo.environment
        // A clip is not decoded here: its number and path open it in the desktop's player.
        if case .still(let type) = picture.type, OutputSink.standardOutputIsTerminal, environment["TERM"] != "dumb" {
            if let preview = PicturePreview.draw(
                picture, at: path, columns: TerminalWidth.ofStandardOutput() ?? 80, environment: environment)
            {
                lines.append(preview)
            } else if !shownPictures.toldPreviewLibrary, let package = PicturePreview.missingLibraries(for: type) {
                shownPictures.toldPreviewLibrary = true
                lines.append(renderer.info("photos are drawn here when \(package) is installed (sudo apt-get install \(package))"))
            }
        }
        let kind = picture.type.isClip ? "clip" : "photo"
        lines.append("  \(kind) \(shownPictures.atConsole.count): /open \(shownPictures.atConsole.count) \(TerminalText.escaped(path))")
        show(lines.joined(separator: "\n"))
    }

    /// `/open N`: the desktop's viewer (`xdg-open`, or `open` on macOS; `$HUDDLE_OPENER` if set)
    /// opens the Nth picture shown at the console.
    func openPicture(_ number: Int) {
        guard shownPictures.atConsole.indices.contains(number - 1) else {
            let known = shownPictures.atConsole.isEmpty ? "no photo was shown yet" : "the photos shown are 1 to \(shownPictures.atConsole.count)"
            return showAtConsole(error: "no photo \(number): \(known)")
        }
        let picture = shownPictures.atConsole[number - 1]
        guard case .shown(let path) = pictures.reveal(picture) else {
            return showAtConsole(error: "photo \(number) is not on this machine (any longer)")
        }
        let environment = ProcessInfo.processInfo.environment
        #if os(macOS)
        let opener = environment["HUDDLE_OPENER"] ?? "open"
        #else
        let opener = environment["HUDDLE_OPENER"] ?? "xdg-open"
        #endif
        guard let program = Programs.find(opener, in: environment["PATH"] ?? "/usr/bin:/bin") else {
            return showAtConsole(error: "no \(opener) here to open photos (Debian: sudo apt-get install xdg-utils); photo \(number) is \(path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = [path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            showAtConsole(info: "opening photo \(number) with \(opener)")
        } catch {
            showAtConsole(error: "could not run \(opener) (\(error)): the photo is \(path)")
        }
    }
}

import HuddleAudio
import HuddleCore

/// Listening on the shell's side: the sound source and the matcher run on threads of their own
/// (``ListeningSession``); what they report becomes the machine's inputs, and the machine's
/// ``NodeEffect/listen(_:)`` and ``NodeEffect/hear(_:receivedAt:)`` come back here.
extension Node {
    /// Starts what `huddle run --listen` or `--audio-file` asked for, if anything. A device that
    /// cannot record is said in one line, and the node runs on without listening.
    func startConfiguredListening() async {
        switch configuration.listen {
        case nil:
            return
        case .device:
            await startListeningToDevice()
        case .file(let path):
            do {
                startListening(to: try WAVFileSource(path: path, start: clock.wall()))
            } catch {
                showError("cannot listen: \(error); running without listening")
            }
        }
    }

    /// `--listen` or `/listen`: the default input (``openDefaultInput()``). Connecting to the
    /// sound server blocks (a remote `PULSE_SERVER` can take seconds to refuse), so
    /// it happens off the actor.
    func startListeningToDevice() async {
        let connected = await Task.detached {
            Result { () throws(AudioSourceError) -> any AudioSource in try openDefaultInput() }
        }.value
        switch connected {
        case .success(let source): startListening(to: source)
        case .failure(let error):
            // The page hears why without the terminal's flags, and its Listen button is put right.
            showAtConsole(error: "cannot listen: \(error); running without listening")
            web.hub?.publish(Self.pageRenderer.error("this computer cannot listen: \(error.reason)"))
            await feed(.listeningFailed)
            refreshPages(force: true)
        }
    }

    /// Listens to `source` until it ends or `/listen off`.
    func startListening(to source: any AudioSource) {
        listening.session?.stop()
        let session = ListeningSession(source: source)
        listening.session = session
        listening.reading = Task { [weak self] in
            for await event in session.events {
                guard let self, await self.listened(event, by: session) else { return }
            }
        }
    }

    /// `/listen off`, or the node stopping.
    func stopListening(reason: String?) async {
        guard let session = listening.session else { return }
        listening.session = nil
        session.stop()
        listening.reading?.cancel()
        listening.reading = nil
        await feed(.listeningStopped(reason: reason))
    }

    /// One report of `session`; `false` once it is not the node's session any more.
    private func listened(_ event: ListeningSession.Event, by session: ListeningSession) async -> Bool {
        guard listening.session === session else { return false }
        switch event {
        case .started(let source, let at):
            await feed(.listeningStarted(source: source.rawValue, at: at))
        case .window(let features):
            await feed(.heardOwnSound(start: .milliseconds(sinceEpoch: features.start), bits: features.bits, loud: features.loud))
        case .matched(let attempt):
            let tried = NodeMachine.SoundAttempt(
                peer: attempt.peer, verdict: attempt.result.match.verdict.rawValue,
                lag: attempt.result.heard?.lag, confidence: attempt.result.match.confidence,
                heard: attempt.result.heard)
            await feed(.soundMatched(tried))
        case .stopped(let reason):
            listening.session = nil
            await feed(.listeningStopped(reason: reason))
            return false
        }
        return true
    }

    /// What the machine asked of listening. Each request waits for the one before it: `/listen` then `/listen off` typed at once must
    /// end with the device closed, though opening it takes a while (up to seconds).
    func carryOutListening(_ on: Bool) {
        let previous = listening.request
        listening.request = Task {
            await previous?.value
            if on {
                await startListeningToDevice()
            } else {
                await stopListening(reason: "/listen off")
            }
        }
    }
}

import HuddleCore

/// What `/help` and `/help all` say: the console's commands in words (the grammar itself is
/// ``ConsoleCommand``'s, in the core).
enum ConsoleHelp {
    /// What `/help` prints: the commands a viewer needs most, short enough for a small terminal
    /// (24 rows) with the conversation's last lines still above it.
    static let short = """
        Type a line to send it to the current room. Most used:
          /event LABEL     propose a moment (e.g. kickoff) for everyone to mark
          /now [LABEL]     it is on your screen right now (Enter alone marks the one offered)
          /listen [off]    find offsets by hearing your screen instead (only sound features leave)
          /web             chat from your phone: serves a page and shows a code (QR) to pair it
          /who             who is here, and how far ahead of or behind you
          /msg NICK TEXT   a direct message, held back like any other
          /photo FILE [T]  a photo (or /clip a video) with caption T, held back; /open N opens one
          /delay [+|-]S    nudge your offset by S seconds (+ is later)
          /pause, /resume  your stream paused (DVR) / playing again
          /score H-G       the score on your screen now (home first)
          /join ROOM, /private ROOM, /leave, /rooms, /history [N], /status, /quit
          /doctor          a friend is not found: checks this computer and the network
        /help all lists every command and key.
        """

    /// What `/help all` prints: every command.
    static let all = """
        Type a line to send it to the current room. Commands:
          /join ROOM       join ROOM and make it current
          /private ROOM    join private ROOM: asks for its passphrase, which is not shown
          /msg NICK TEXT   a direct message only NICK can read, held back like any other
          /photo FILE [T]  send a JPEG, PNG or WebP picture with caption T, held back like a
                           line; where and when it was taken (EXIF, XMP) is removed first
          /clip FILE [T]   the same for a short video (MP4 or WebM, up to 30 s and 16 MiB), as it is
          /open N          open photo N (its line says its number) in the desktop's viewer
          /leave           leave the current room
          /rooms           rooms you are in and rooms seen on the network
          /who             people in the current room, with how far their stream is from yours
          /event LABEL     propose a moment everyone can see (e.g. kickoff) for others to mark
          /now LABEL       it is happening on your screen right now (creates LABEL if new)
          /now             mark the moment the prompt offers ([Enter = LABEL]; Enter alone does it too)
          /unmark LABEL    take back your mark of LABEL (a key pressed by mistake)
          /ignore LABEL    stop being asked to mark LABEL
          /delay [+|-]S    nudge your offset by S seconds (fractions allowed; + is later)
          /score H-G       the score on your screen now (home first); others see it at their moment
          /teams A B       name the two sides for the scoreboard (home first)
          /status          where you stand: room, peers, your offset, score, paused, waiting
          /pause           your stream paused (DVR): nothing new shows until /resume
          /resume          it plays again: the pause is added to your offset, so those ahead wait
          /history [N]     the last N messages (default 20), ordered by game time
          /listen [off]    hear your screen through the microphone to find offsets without a tap
                           (only features of the sound leave this machine, never the sound)
          /shield [off|on|S]  until you are placed, others' words wait 90 s (S), or longer when
                           two streams here run farther apart, so none can spoil; off if you
                           know your stream is ahead of everyone's
          /web             serve this node's page to your phone and show a code to pair it
                           (QR code, address, short code: good once, for 5 minutes)
          /web devices     the phones and tablets paired;  /web revoke NAME  unpairs one
          /web port N      serve the page on port N (when 7780 is taken, the next free one is)
          /doctor          nobody found, or a friend missing: checks the mDNS daemon, this
                           node's announcement, the interfaces, the firewall and the peers
                           announced, and says the likeliest cause and what to change
          /help            this list
          /quit            leave the console (end of input does the same, once a peer has what
                           you wrote, or after 5 s: then it exits 3, the message stored, not sent)
        A message's time is its moment in the game (on the room's reference stream); ~12:57:23,
        with a ~, is only when it was sent: its writer is not calibrated yet.
        A message holds 4,096 bytes (for /msg, the text after the nick).
        """
}

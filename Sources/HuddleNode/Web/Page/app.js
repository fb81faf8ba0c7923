// Huddle's phone page: pairing, the sealed channel to the node, and the room as this node shows
// it (docs/WEB.md is the contract). Plain JS, no build step. Text from peers is untrusted: it only
// ever reaches the page through textContent.
(function () {
  'use strict';

  // ---------------------------------------------------------------- constants

  const MAX_LINES = 300;                      // lines kept on screen
  const BACKOFF_MS = [1000, 2000, 5000, 10000];
  const PAIR_TIMEOUT_MS = 30000;              // the pairing gives up (WEB.md, "Pairing")
  const HELLO_TIMEOUT_MS = 10000;             // the node drops a socket with no session after 10 s
  const PING_EVERY_MS = 2000;
  const QUICK_PINGS = 5;
  const QUICK_PING_GAP_MS = 120;
  const STALE_MS = 7000;                      // no frame for this long while pinging: the socket is dead
  const PROBE_MS = 3000;                      // after waking: a frame within this, or reconnect
  const FRAME_LIMIT = 16 * 1024;              // the node refuses larger frames
  const TAG_BYTES = 16;
  const NOW_COOLDOWN_MS = 900;                // a second tap within this is a double tap, not a mark
  const CONFIRM_WINDOW_MS = 60000;            // confirm_mark: the same mark again within 60 s makes it
  const DEVICE_KEY = 'huddle.device';
  const PAGE_TO_NODE = 1;
  const NODE_TO_PAGE = 2;

  // ---------------------------------------------------------------- small helpers

  const $ = (id) => document.getElementById(id);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function str(value) {
    return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  }

  function num(value) {
    return typeof value === 'number' && isFinite(value) ? value : null;
  }

  function cryptoLib() {
    // crypto.js defines the global HuddleCrypto (a window property or a top-level binding).
    /* global HuddleCrypto */
    return typeof HuddleCrypto === 'undefined' ? null : HuddleCrypto;
  }

  function sameBytes(a, b) {
    if (!a || !b || a.length !== b.length) return false;
    let diff = 0;
    for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
    return diff === 0;
  }

  function wsURL() {
    return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
  }

  /** A length of time as the console says it: "850 ms", "3.0 s", "2 min 21 s", "1 h 5 min". */
  function duration(ms) {
    ms = Math.floor(Math.abs(ms));
    if (ms < 1000) return ms + ' ms';
    const tenths = Math.floor((ms + 50) / 100);
    if (tenths < 600) return Math.floor(tenths / 10) + '.' + (tenths % 10) + ' s';
    const seconds = Math.floor((ms + 500) / 1000);
    if (seconds < 3600) {
      const rest = seconds % 60;
      return rest === 0 ? Math.floor(seconds / 60) + ' min' : Math.floor(seconds / 60) + ' min ' + rest + ' s';
    }
    const minutes = Math.floor(seconds / 60);
    const rest = minutes % 60;
    return rest === 0 ? Math.floor(minutes / 60) + ' h' : Math.floor(minutes / 60) + ' h ' + rest + ' min';
  }

  // One formatter, made once: a browser's first locale-aware time costs tens of milliseconds
  // (loading its locale data), which would make the first message late. It is made while the page
  // waits for the node (warmClock, at the start), not when a held message is due.
  let timeFormat = null;

  function clock(ms) {
    const date = new Date(ms);
    if (isNaN(date.getTime())) return '';
    try {
      if (!timeFormat) timeFormat = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit' });
      return timeFormat.format(date);
    } catch (e) {
      return String(date.getHours()).padStart(2, '0') + ':' + String(date.getMinutes()).padStart(2, '0');
    }
  }

  function nickColour(nick) {
    let h = 0;
    for (let i = 0; i < nick.length; i++) h = (h * 31 + nick.charCodeAt(i)) >>> 0;
    return 'nc' + (h % 8);
  }

  /** A message's lines as the console shows them: no blank lines at either end, a run of them kept as one. */
  function messageText(text) {
    const rows = [];
    for (const row of str(text).split(/\r\n|\n|\r|\u2028/)) {
      const blank = row.trim() === '';
      if (blank && (rows.length === 0 || rows[rows.length - 1] === '')) continue;
      rows.push(blank ? '' : row);
    }
    while (rows.length && rows[rows.length - 1] === '') rows.pop();
    return rows.join('\n');
  }

  function quoted(label) {
    return '\u201c' + str(label) + '\u201d';
  }

  // ---------------------------------------------------------------- storage

  const memoryStore = {};
  const storage = {
    get(key) {
      try {
        return window.localStorage.getItem(key);
      } catch (e) {
        return key in memoryStore ? memoryStore[key] : null;
      }
    },
    set(key, value) {
      memoryStore[key] = value;
      try {
        window.localStorage.setItem(key, value);
      } catch (e) { /* private mode: this tab remembers it */ }
    },
    remove(key) {
      delete memoryStore[key];
      try {
        window.localStorage.removeItem(key);
      } catch (e) { /* nothing stored */ }
    },
  };

  function loadDevice() {
    try {
      const saved = JSON.parse(storage.get(DEVICE_KEY) || 'null');
      if (saved && saved.id !== undefined && saved.id !== null && typeof saved.key === 'string' && saved.key) return saved;
    } catch (e) { /* unreadable: pair again */ }
    return null;
  }

  function saveDevice(dev) {
    storage.set(DEVICE_KEY, JSON.stringify(dev));
  }

  function forgetDevice() {
    storage.remove(DEVICE_KEY);
    device = null;
  }

  // ---------------------------------------------------------------- elements

  const ui = {
    app: $('app'),
    pairScreen: $('pair-screen'),
    pairForm: $('pair-form'),
    pairCode: $('pair-code'),
    pairName: $('pair-name'),
    pairButton: $('pair-button'),
    pairStatus: $('pair-status'),
    chatScreen: $('chat-screen'),
    roomName: $('room-name'),
    conn: $('conn'),
    connText: $('conn-text'),
    statusLine: $('status-line'),
    ladder: $('ladder'),
    score: $('score'),
    suggest: $('suggest'),
    log: $('log'),
    jump: $('jump'),
    toast: $('toast'),
    now: $('now'),
    nowWord: null,
    nowLabel: $('now-label'),
    nowMore: $('now-more'),
    pause: $('act-pause'),
    listen: $('act-listen'),
    rooms: $('act-rooms'),
    message: $('act-msg'),
    compose: $('compose'),
    composeText: $('compose-text'),
    send: $('send'),
    scrim: $('scrim'),
    sheetRooms: $('sheet-rooms'),
    roomList: $('room-list'),
    roomEmpty: $('room-empty'),
    privateForm: $('private-form'),
    privateName: $('private-name'),
    sheetMsg: $('sheet-msg'),
    msgNicks: $('msg-nicks'),
    msgForm: $('msg-form'),
    msgNick: $('msg-nick'),
    msgText: $('msg-text'),
    sheetPass: $('sheet-pass'),
    passNote: $('pass-note'),
    passForm: $('pass-form'),
    passText: $('pass-text'),
    passCancel: $('pass-cancel'),
    photo: $('photo'),
    photoInput: $('photo-input'),
    viewer: $('viewer'),
    viewerImg: $('viewer-img'),
  };
  ui.nowWord = ui.now.querySelector('.now-word');

  // ---------------------------------------------------------------- state

  let device = loadDevice();
  let pendingSecret = null;     // a QR secret that arrived while a device was stored: used if the node says unpaired
  let pairing = null;           // the pairing attempt under way

  let ws = null;                // the session's socket (one at a time)
  let session = null;           // { sealer, opener } once the challenge is answered
  let connected = false;        // a sealed frame from the node has opened on this socket
  let everConnected = false;
  let lastSeq = 0;
  let attempt = 0;
  let reconnectTimer = 0;
  let helloTimer = 0;
  let pingTimer = 0;
  let probeTimer = 0;
  let quickTimers = [];
  let pingId = 0;
  const pingSent = new Map();
  let lastHeard = 0;
  let rtt = null;

  let view = null;
  let me = null;                // the viewer's nick, from the view's ladder
  let myId = null;              // the node's id, from the view: what tells its own lines apart
  const entries = [];           // rendered lines, oldest first: { node, line }
  let lastEntryLine = null;
  let nowCooldown = false;
  let lastNowPointer = -Infinity;
  let nowLabel = '';            // the moment the Now button offers
  let toastTimer = 0;
  let openSheetEl = null;

  // ---------------------------------------------------------------- screens

  function showPairing(message, isError) {
    closeSheet(false);
    ui.chatScreen.hidden = true;
    ui.pairScreen.hidden = false;
    if (!ui.pairName.value) ui.pairName.value = guessName();
    setPairStatus(message || '', isError ? 'error' : '');
    setPairBusy(false);
  }

  function showChat() {
    ui.pairScreen.hidden = true;
    ui.chatScreen.hidden = false;
    updateConn();
  }

  // ---------------------------------------------------------------- pairing

  function guessName() {
    const ua = navigator.userAgent || '';
    if (/iPhone/.test(ua)) return 'iPhone';
    if (/iPad/.test(ua) || (/Macintosh/.test(ua) && navigator.maxTouchPoints > 1)) return 'iPad';
    if (/Android/.test(ua)) return /Mobile/.test(ua) ? 'Android phone' : 'Android tablet';
    if (/CrOS/.test(ua)) return 'Chromebook';
    if (/Windows/.test(ua)) return 'Windows PC';
    if (/Macintosh/.test(ua)) return 'Mac';
    if (/Linux/.test(ua)) return 'Linux computer';
    return 'Phone';
  }

  /** The typed short code: upper case, no dash or spaces; Crockford's look-alikes (O, I, L) read as digits. */
  function normaliseCode(raw) {
    let code = str(raw).toUpperCase().replace(/[\s\-_.]/g, '');
    if (code.length === 8) code = code.replace(/O/g, '0').replace(/[IL]/g, '1');
    return code;
  }

  function takeHashSecret() {
    const hash = location.hash || '';
    if (!/^#pair=/.test(hash)) return null;
    let secret = null;
    try {
      secret = new URLSearchParams(hash.slice(1)).get('pair');
    } catch (e) {
      secret = decodeURIComponent(hash.slice('#pair='.length));
    }
    try {
      history.replaceState(null, '', location.pathname + location.search);
    } catch (e) {
      location.hash = '';
    }
    return secret ? secret.trim() : null;
  }

  function setPairStatus(text, kind) {
    ui.pairStatus.textContent = text;
    ui.pairStatus.classList.toggle('is-error', kind === 'error');
    ui.pairStatus.classList.toggle('is-busy', kind === 'busy');
  }

  function setPairBusy(busy, text) {
    ui.pairButton.disabled = busy;
    ui.pairCode.disabled = busy;
    ui.pairName.disabled = busy;
    ui.pairButton.textContent = busy ? 'Pairing…' : 'Pair';
    if (busy) setPairStatus(text || 'Pairing…', 'busy');
  }

  function pairError(message) {
    const words = str(message).toLowerCase();
    if (/too many|attempts|rate|limit|wait|slow down/.test(words)) return 'Too many attempts, wait a minute.';
    return 'Wrong or expired code. Check it, or ask the node for a new one.';
  }

  function onPairSubmit(event) {
    event.preventDefault();
    if (pairing) return;
    const code = normaliseCode(ui.pairCode.value);
    if (!/^[0-9A-Z]{8}$/.test(code) && !/^[0-9A-Z]{16,}$/.test(code)) {
      setPairStatus('The code is 8 letters and digits, like ABCD-EFGH.', 'error');
      ui.pairCode.focus();
      return;
    }
    const name = ui.pairName.value.trim() || guessName();
    startPairing(code, name, false);
  }

  function startPairing(code, name, fromQR) {
    if (pairing) return;
    const C = cryptoLib();
    if (!C) {
      showPairing('This page could not load its cryptography (crypto.js). Reload the page.', true);
      return;
    }
    showPairing();
    setPairBusy(true, fromQR ? 'Pairing with the code from the QR code…' : 'Pairing…');
    let sock;
    try {
      sock = new WebSocket(wsURL());
    } catch (e) {
      pairFailed('Could not reach the node. Is it still running?');
      return;
    }
    const state = { sock, done: false, timer: 0, sid: null, secret: null, pub: null, expect: null, key: null, opened: false };
    pairing = state;

    const finish = (error) => {
      if (state.done) return;
      state.done = true;
      clearTimeout(state.timer);
      if (pairing === state) pairing = null;
      try {
        sock.close();
      } catch (e) { /* already closed */ }
      if (error) pairFailed(error);
    };
    state.timer = setTimeout(
      () => finish('The node did not finish pairing within 30 s. Try again.'), PAIR_TIMEOUT_MS);

    sock.onopen = () => {
      state.opened = true;
      try {
        // CPace (WEB.md, "Pairing"): the generator from the code, the channel and a fresh sid;
        // our share Ya = X25519(ya, g).
        state.sid = C.randomBytes(16);
        state.secret = C.randomBytes(32);
        const g = C.cpaceGenerator(C.utf8(code), C.utf8('huddle-pair-v1'), state.sid);
        state.pub = C.x25519(state.secret, g);
        sock.send(JSON.stringify({
          // A code longer than the typed one's 8 letters is the QR's secret, scanned or typed.
          t: 'pair', code: fromQR || code.length > 8 ? 'qr' : 'typed', sid: C.b64u(state.sid), pub: C.b64u(state.pub),
          name: name,
        }));
      } catch (e) {
        finish('This phone could not make a key: ' + (e && e.message ? e.message : e));
      }
    };
    sock.onmessage = (event) => {
      if (state.done) return;
      if (typeof event.data !== 'string') return finish('The node answered something this page does not understand.');
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch (e) {
        return finish('The node answered something this page does not understand.');
      }
      if (!msg || typeof msg !== 'object') return;
      if (msg.t === 'pair') {
        if (state.expect) return finish('The node answered twice.');
        let nodePub;
        try {
          nodePub = C.fromB64u(str(msg.pub));
        } catch (e) {
          nodePub = null;
        }
        if (!nodePub || nodePub.length !== 32) return finish('The node sent a key this page cannot use.');
        let shared;
        try {
          // x25519 throws where K would be all zeros (the node's Yb a low-order point).
          shared = C.x25519(state.secret, nodePub);
        } catch (e) {
          shared = null;
        }
        if (!shared || shared.every((b) => b === 0)) return finish('The node sent a key this page cannot use.');
        try {
          // ISK = H(sid, K, Ya, Yb): kc proves the code both ways, the rest is the device's key.
          const isk = C.cpaceIsk(state.sid, shared, state.pub, new Uint8Array(0), nodePub, new Uint8Array(0));
          const kc = isk.slice(0, 32);
          const proof = C.pairTag(kc, state.pub, nodePub, '', 'client');
          state.expect = C.pairTag(kc, state.pub, nodePub, '', 'server');
          state.key = isk.slice(32, 64);
          sock.send(JSON.stringify({ t: 'proof', tag: C.b64u(proof) }));
        } catch (e) {
          finish('This phone could not compute the proof: ' + (e && e.message ? e.message : e));
        }
      } else if (msg.t === 'paired') {
        if (!state.expect) return finish('The node said "paired" before it was asked.');
        let tag;
        try {
          tag = C.fromB64u(str(msg.tag));
        } catch (e) {
          tag = null;
        }
        if (!sameBytes(tag, state.expect)) return finish('The node did not prove it knows the code. Nothing was stored.');
        if (msg.device === undefined || msg.device === null) return finish('The node did not name this device.');
        const dev = { id: msg.device, key: C.b64u(state.key), name: typeof msg.name === 'string' ? msg.name : name };
        finish(null);
        paired(dev);
      } else if (msg.t === 'error') {
        finish(pairError(msg.message));
      }
    };
    sock.onerror = () => { /* onclose says what happened */ };
    sock.onclose = () => {
      if (!state.opened) finish('Could not reach the node. Is it still running, and is this phone on the same Wi-Fi?');
      else if (state.expect) finish('Wrong or expired code. Check it, or ask the node for a new one.');
      else finish('The node closed the connection before pairing. Try again.');
    };
  }

  function pairFailed(message) {
    showPairing(message, true);
  }

  function paired(dev) {
    device = dev;
    saveDevice(dev);
    pendingSecret = null;
    ui.pairCode.value = '';
    clearLog();
    lastSeq = 0;
    attempt = 0;
    everConnected = false;
    showChat();
    connect();
  }

  // ---------------------------------------------------------------- the session

  function connect() {
    if (!device || ws) return;
    clearTimeout(reconnectTimer);
    reconnectTimer = 0;
    const C = cryptoLib();
    if (!C) {
      toast('This page could not load its cryptography (crypto.js). Reload the page.');
      scheduleReconnect();
      return;
    }
    let sock;
    try {
      sock = new WebSocket(wsURL());
    } catch (e) {
      scheduleReconnect();
      return;
    }
    sock.binaryType = 'arraybuffer';
    ws = sock;
    session = null;
    connected = false;
    updateConn();
    clearTimeout(helloTimer);
    helloTimer = setTimeout(() => {
      if (ws === sock && !connected) drop(sock);
    }, HELLO_TIMEOUT_MS);

    sock.onopen = () => {
      if (ws !== sock) return;
      sock.send(JSON.stringify({ t: 'hello', device: device.id }));
    };
    sock.onmessage = (event) => {
      if (ws !== sock) return;
      lastHeard = Date.now();
      if (typeof event.data === 'string') onText(sock, event.data);
      else onSealed(sock, event.data);
    };
    sock.onerror = () => { /* onclose follows */ };
    sock.onclose = () => {
      if (ws === sock) lost();
    };
  }

  /** This socket is done with: forget it and try again later. */
  function drop(sock) {
    if (ws === sock) lost();
    try {
      sock.close();
    } catch (e) { /* already closed */ }
  }

  function lost() {
    ws = null;
    session = null;
    connected = false;
    clearTimeout(helloTimer);
    stopPings();
    if (openSheetEl === ui.sheetPass) closeSheet(false); // the node's question went with the socket
    updateConn();
    scheduleReconnect();
  }

  function scheduleReconnect() {
    if (!device || reconnectTimer || ws) return;
    const delay = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)];
    attempt++;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = 0;
      connect();
    }, delay);
  }

  /** The phone woke, came back online or showed the page again: reconnect now, or check the socket lives. */
  function kick() {
    if (!device || pairing) return;
    if (!ws) {
      clearTimeout(reconnectTimer);
      reconnectTimer = 0;
      connect();
      return;
    }
    if (connected && !probeTimer) {
      const sock = ws;
      const before = lastHeard;
      sendPing();
      probeTimer = setTimeout(() => {
        probeTimer = 0;
        if (ws === sock && lastHeard === before) drop(sock);
      }, PROBE_MS);
    }
  }

  function onText(sock, data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch (e) {
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    if (msg.t === 'challenge') {
      if (session) return drop(sock);
      const C = cryptoLib();
      try {
        const nonce = C.fromB64u(str(msg.nonce));
        if (!nonce || nonce.length !== 12) return drop(sock);
        const key = C.connKey(C.fromB64u(device.key), nonce);
        session = { sealer: new C.Sealer(key, PAGE_TO_NODE), opener: new C.Opener(key, NODE_TO_PAGE) };
      } catch (e) {
        return drop(sock);
      }
      if (!sendSealed({ t: 'open', since: lastSeq })) return;
      startPings();
    } else if (msg.t === 'unpaired') {
      unpaired(sock);
    } else if (msg.t === 'error') {
      if (msg.message) toast(str(msg.message));
    } else if (msg.t === 'bye') {
      onBye(msg.reason);
    }
  }

  /** Puts `sock` away for good: no reconnect is pending, no ping runs, nothing is connected. */
  function shutSocket(sock) {
    ws = null;
    session = null;
    connected = false;
    clearTimeout(helloTimer);
    clearTimeout(reconnectTimer);
    reconnectTimer = 0;
    stopPings();
    try {
      sock.close();
    } catch (e) { /* closed */ }
  }

  function unpaired(sock) {
    shutSocket(sock);
    forgetDevice();
    clearLog();
    lastSeq = 0;
    const secret = pendingSecret;
    pendingSecret = null;
    if (secret) {
      startPairing(secret, guessName(), true);
    } else {
      showPairing('This phone is no longer paired with the node (it was removed, or the node forgot it). Pair it again.', true);
    }
  }

  function onSealed(sock, data) {
    if (!session) return drop(sock);
    const C = cryptoLib();
    let plain = null;
    try {
      plain = session.opener.open(new Uint8Array(data));
    } catch (e) {
      plain = null;
    }
    if (!plain) return drop(sock); // a frame that does not open closes the connection
    if (plain.length > 33 && plain[0] === 0) return pictureFrame(plain);
    let msg;
    try {
      msg = JSON.parse(C.fromUtf8(plain));
    } catch (e) {
      return;
    }
    if (!connected) {
      connected = true;
      everConnected = true;
      attempt = 0;
      pendingSecret = null;
      clearTimeout(helloTimer);
      updateConn();
    }
    if (msg && typeof msg === 'object') handle(msg);
  }

  function sendSealed(obj) {
    const C = cryptoLib();
    if (!ws || !session || ws.readyState !== WebSocket.OPEN || !C) return false;
    try {
      ws.send(session.sealer.seal(C.utf8(JSON.stringify(obj))));
      return true;
    } catch (e) {
      drop(ws);
      return false;
    }
  }

  function frameFits(obj) {
    const C = cryptoLib();
    return !C || C.utf8(JSON.stringify(obj)).length + TAG_BYTES <= FRAME_LIMIT;
  }

  function handle(msg) {
    switch (msg.t) {
      case 'line':
        if (num(msg.seq) !== null) lastSeq = msg.seq;
        if (msg.line && typeof msg.line === 'object') renderLine(msg.line);
        break;
      case 'view':
        applyView(msg);
        break;
      case 'ask_passphrase':
        askPassphrase(msg.room);
        break;
      case 'pong':
        onPong(msg.id);
        break;
      case 'ping':
        // The node times its own round trips too (to take a tap on Now back by the link's delay).
        sendSealed({ t: 'pong', id: msg.id });
        break;
      case 'bye':
        onBye(msg.reason);
        break;
      case 'picture':
        pictureBytes(msg);
        break;
      default:
        break; // something newer than this page: ignored
    }
  }

  function onBye(reason) {
    toast(reason ? 'The node said goodbye: ' + str(reason) : 'The node said goodbye.');
  }

  // ---------------------------------------------------------------- pings

  function sendPing() {
    const id = ++pingId;
    if (!sendSealed({ t: 'ping', id: id })) return;
    pingSent.set(id, performance.now());
    if (pingSent.size > 32) pingSent.delete(pingSent.keys().next().value);
  }

  function onPong(id) {
    const sent = pingSent.get(id);
    if (sent === undefined) return;
    pingSent.delete(id);
    rtt = Math.round(performance.now() - sent);
    ui.conn.title = 'round trip ' + rtt + ' ms';
  }

  function startPings() {
    stopPings();
    for (let i = 0; i < QUICK_PINGS; i++) quickTimers.push(setTimeout(sendPing, i * QUICK_PING_GAP_MS));
    pingTimer = setInterval(() => {
      if (ws && connected && Date.now() - lastHeard > STALE_MS) {
        drop(ws);
        return;
      }
      sendPing();
    }, PING_EVERY_MS);
  }

  function stopPings() {
    clearInterval(pingTimer);
    pingTimer = 0;
    quickTimers.forEach(clearTimeout);
    quickTimers = [];
    clearTimeout(probeTimer);
    probeTimer = 0;
    pingSent.clear();
  }

  // ---------------------------------------------------------------- connection indicator

  function updateConn() {
    let state;
    let text;
    if (connected) {
      state = 'connected';
      text = 'connected';
    } else if (navigator.onLine === false) {
      state = 'offline';
      text = 'offline';
    } else if (!everConnected) {
      state = 'connecting';
      text = 'connecting…';
    } else {
      state = 'reconnecting';
      text = 'reconnecting…';
    }
    ui.conn.dataset.state = state;
    ui.connText.textContent = text;
    if (!connected) ui.conn.removeAttribute('title');
  }

  // ---------------------------------------------------------------- the view

  function meFrom(v) {
    if (typeof v.nick === 'string' && v.nick) return v.nick;
    if (Array.isArray(v.ladder)) {
      for (const rung of v.ladder) {
        if (rung && rung.you === true && typeof rung.nick === 'string') return rung.nick;
      }
    }
    return me;
  }

  function applyView(v) {
    view = v;
    const nick = meFrom(v);
    const id = typeof v.id === 'string' && v.id ? v.id : myId;
    if (nick !== me || id !== myId) {
      me = nick;
      myId = id;
      restyleOwn();
    }
    const room = str(v.room);
    ui.roomName.textContent = room || 'Huddle';
    document.title = room ? room + ' · Huddle' : 'Huddle';
    // The status line is the console's, without the room (the title above) and the score (its
    // own pill beside the title).
    ui.statusLine.textContent = str(v.status);
    const board = scoreText(v.score);
    ui.score.textContent = board;
    ui.score.hidden = !board;
    renderLadder(v.ladder, v.placed);
    renderOffer(v.offer);
    closeLapsedHints(v.offer);
    renderSuggestions(v.offer ? null : v.suggest);
    setToggle(ui.pause, !!v.paused, v.paused ? 'Resume' : 'Pause');
    setToggle(ui.listen, !!v.listening, v.listening ? 'Listening' : 'Listen');
    ui.composeText.placeholder = room ? 'Message ' + room : 'Message';
    if (openSheetEl === ui.sheetRooms) renderRooms();
    if (openSheetEl === ui.sheetMsg) renderNickPicks();
  }

  function setToggle(button, on, text) {
    button.setAttribute('aria-pressed', on ? 'true' : 'false');
    button.querySelector('.act-text').textContent = text;
  }

  function lagWords(ms) {
    if (ms === null) return 'not placed';
    if (ms < 0) return duration(ms) + ' ahead';
    if (ms > 0) return duration(ms) + ' behind';
    return 'in step';
  }

  function renderLadder(ladder, placed) {
    const rungs = (Array.isArray(ladder) ? ladder : []).filter((r) => r && typeof r === 'object');
    const keyed = rungs.map((rung, index) => {
      const behind = num(rung.behind_ms);
      const key = rung.you === true ? (behind === null ? 0 : behind) : behind === null ? Infinity : behind;
      return { rung, index, key };
    });
    keyed.sort((a, b) => (a.key === b.key ? a.index - b.index : a.key < b.key ? -1 : 1));
    const items = keyed.map(({ rung }) => {
      const li = el('li', 'rung');
      const behind = num(rung.behind_ms);
      if (rung.you === true) {
        li.classList.add('is-you');
        li.append(el('span', 'rung-nick', 'you'));
        if (placed === false) li.append(el('span', 'rung-lag', 'not placed'));
      } else {
        li.append(el('span', 'rung-nick', str(rung.nick)));
        li.append(el('span', 'rung-lag', lagWords(behind)));
        if (behind === null) li.classList.add('is-unplaced');
        else if (behind < 0) li.classList.add('is-ahead');
        else if (behind > 0) li.classList.add('is-behind');
      }
      return li;
    });
    ui.ladder.replaceChildren(...items);
  }

  /** While the viewer is placed with nobody and nothing is on offer: the moments anyone can name
   *  ahead, to tap as they reach this screen (a name like "safety" would be the play itself). */
  function renderSuggestions(labels) {
    const picks = (Array.isArray(labels) ? labels : []).filter((l) => typeof l === 'string' && l);
    if (picks.length === 0 || nowCooldown) {
      ui.suggest.hidden = true;
      ui.suggest.replaceChildren();
      return;
    }
    const shown = Array.from(ui.suggest.querySelectorAll('.suggest-pick')).map((b) => b.dataset.label);
    if (!ui.suggest.hidden && shown.join('\n') === picks.join('\n')) return;
    const why = el('p', 'suggest-why', 'To be placed, tap a moment as it reaches your screen. ' +
      'These names tell nobody what happens: others\u2019 moments wait for your stream.');
    const buttons = picks.map((label) => {
      const button = el('button', 'suggest-pick', 'Now: ' + label);
      button.type = 'button';
      button.dataset.label = label;
      button.addEventListener('click', () => {
        if (!sendSealed({ t: 'now', label: label })) {
          toast('Not connected: nothing was marked. Tap again once it says connected.');
          return;
        }
        buzz();
        button.disabled = true;
        button.textContent = '\u2713 Marked ' + label;
      });
      return button;
    });
    ui.suggest.replaceChildren(why, ...buttons);
    ui.suggest.hidden = false;
  }

  function scoreText(score) {
    if (score === null || score === undefined || score === false) return '';
    if (typeof score === 'string' || typeof score === 'number') return String(score);
    if (typeof score === 'object') {
      if (typeof score.text === 'string') return score.text;
      const home = num(score.home);
      const guest = num(score.guest);
      if (home === null || guest === null) return '';
      const board = home + '\u2013' + guest;
      const homeName = str(score.home_team || score.home_name);
      const guestName = str(score.guest_team || score.guest_name);
      return homeName && guestName ? homeName + ' ' + board + ' ' + guestName : board;
    }
    return '';
  }

  // ---------------------------------------------------------------- Now

  function renderOffer(offer) {
    if (nowCooldown) return; // the tap's feedback stays a moment; the view is applied after it
    const label = offer && typeof offer === 'object' ? str(offer.label) : '';
    if (!offer || typeof offer !== 'object') {
      ui.now.hidden = true;
      nowLabel = '';
      return;
    }
    ui.now.classList.remove('is-sent');
    ui.nowWord.textContent = label ? 'Now:' : 'Now';
    ui.nowLabel.textContent = label;
    const more = num(offer.more) || 0;
    ui.nowMore.textContent = more > 0 ? '+' + more + ' more' : '';
    ui.now.setAttribute('aria-label', label ? 'Now: ' + label + ' is on my screen' : 'Now');
    ui.now.hidden = false;
    nowLabel = label;
  }

  let buzzOnClick = false;

  /** A short buzz for the tap. A touch's pointerdown is not yet a user activation (its pointerup
   *  is), and the browser refuses vibrate before the first one: then it buzzes on the click. */
  function buzz() {
    if (typeof navigator.vibrate !== 'function') return;
    if (navigator.userActivation && !navigator.userActivation.hasBeenActive) {
      buzzOnClick = true;
      return;
    }
    try {
      navigator.vibrate(30);
    } catch (e) { /* no haptics */ }
  }

  function tapNow() {
    if (nowCooldown || ui.now.hidden) return;
    // The moment on the button is the one the viewer saw and tapped for: named, so that a newer
    // proposal arriving on the way is not marked in its place.
    if (!sendSealed(nowLabel ? { t: 'now', label: nowLabel } : { t: 'now' })) {
      toast('Not connected: nothing was marked. Tap again once it says connected.');
      return;
    }
    buzz();
    nowCooldown = true;
    ui.now.classList.add('is-sent');
    ui.nowWord.textContent = '\u2713 Marked';
    ui.nowMore.textContent = '';
    setTimeout(() => {
      nowCooldown = false;
      ui.now.classList.remove('is-sent');
      renderOffer(view && view.offer);
    }, NOW_COOLDOWN_MS);
  }

  // ---------------------------------------------------------------- the conversation

  let stickPending = null;
  let pinned = true;            // the conversation is scrolled to its end, and stays there as it grows or shrinks

  function nearBottom() {
    const log = ui.log;
    return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  }

  function scrollToBottom() {
    ui.log.scrollTop = ui.log.scrollHeight;
    ui.jump.hidden = true;
  }

  function beforeAppend(force) {
    if (stickPending === null) {
      stickPending = pinned || nearBottom();
      requestAnimationFrame(afterAppend);
    }
    if (force) stickPending = true;
  }

  function afterAppend() {
    if (stickPending) scrollToBottom();
    else ui.jump.hidden = false;
    stickPending = null;
  }

  function clearLog() {
    entries.length = 0;
    lastEntryLine = null;
    ui.log.replaceChildren();
    ui.jump.hidden = true;
  }

  const entryNodes = new WeakSet();

  function append(node, line, force) {
    beforeAppend(force);
    if (line.earlier === true && !(lastEntryLine && lastEntryLine.earlier === true)) {
      ui.log.append(el('div', 'divider', 'From before you joined'));
    }
    entryNodes.add(node);
    ui.log.append(node);
    entries.push({ node, line });
    lastEntryLine = line;
    if (entries.length > MAX_LINES) {
      while (entries.length > MAX_LINES) entries.shift().node.remove();
      // A divider whose lines are gone goes with them.
      while (ui.log.firstChild && !entryNodes.has(ui.log.firstChild)) ui.log.firstChild.remove();
    }
  }

  function isOwn(line) {
    const nick = str(line.nick);
    // By id: another key may call itself by the viewer's nick.
    if (myId && line.from !== undefined) return str(line.from) === myId;
    if (me) return nick === me;
    // Before the first view: a direct message this node sent sits in the room named after its recipient.
    return line.direct === true && line.to !== undefined && str(line.room) === '@' + str(line.to) && str(line.to) !== nick;
  }

  function who(nick) {
    return me && nick === me ? 'you' : nick;
  }

  /** Who a line is by or about, as the console names them: `nick#3f9a0c1e` while another node
   *  goes by the same nick (`display_name`), `you` for the viewer. */
  function whoIn(line) {
    if (myId && line.id !== undefined && str(line.id) === myId) return 'you';
    return line.display_name !== undefined ? str(line.display_name) : who(str(line.nick));
  }

  /** A message's sender as the console names them. */
  function nameOf(line) {
    return line.display_name !== undefined ? str(line.display_name) : str(line.nick);
  }

  function sameSender(a, b) {
    return !!a && !!b && a.type === 'message' && b.type === 'message' && nameOf(a) === nameOf(b) &&
      !!a.direct === !!b.direct && str(a.room) === str(b.room) && !!a.earlier === !!b.earlier;
  }

  /** A padlock (drawn in CSS: no emoji font needed) and a word. */
  function lockTag(text) {
    const tag = el('span', 'msg-tag is-private');
    const lock = el('span', 'lock');
    lock.setAttribute('aria-hidden', 'true');
    tag.append(lock, document.createTextNode(text));
    return tag;
  }

  function renderMessage(line) {
    const nick = nameOf(line);
    const own = isOwn(line);
    const direct = line.direct === true;
    const node = el('article', 'msg');
    if (own) node.classList.add('is-own');
    if (direct) node.classList.add('is-direct');
    if (line.private === true) node.classList.add('is-private');
    if (line.earlier === true) node.classList.add('is-earlier');

    const head = el('div', 'msg-head');
    if (direct) {
      if (own) {
        head.append(lockTag('\u2192 ' + str(line.to)));
      } else {
        head.append(lockTag('from'));
        head.append(el('span', 'msg-nick ' + nickColour(nick), nick));
      }
    } else {
      head.append(el('span', 'msg-nick ' + nickColour(nick), nick));
      if (line.private === true) head.append(lockTag('private'));
      const room = str(line.room);
      if (room && view && str(view.room) && room !== str(view.room)) head.append(el('span', 'msg-tag', 'in ' + room));
    }
    node.append(head);
    if (line.picture && typeof line.picture === 'object') node.append(pictureFigure(line.picture));
    if (!line.picture || str(line.text)) node.append(el('p', 'msg-text', messageText(line.text)));

    const game = num(line.game_ms);
    const sent = num(line.sent_at);
    let meta = game !== null ? clock(game) : sent !== null ? '~' + clock(sent) : '';
    const held = heldFor(line);
    if (held !== null && held > 0) meta += (meta ? ' \u00b7 ' : '') + 'held ' + duration(held);
    if (meta) node.append(el('div', 'msg-meta', meta));
    return node;
  }

  // ---------------------------------------------------------------- pictures

  /** Pictures' object URLs by root, once their bytes came; the figures waiting for each. */
  const pictureURLs = new Map();
  const pictureWaiting = new Map();
  const pictureAsked = new Set();
  const pictureTypes = new Map();

  /** A message's picture: a box of its shape, filled once its bytes are here. The node names a
   *  picture (its root) only from its message's moment on, and sends its bytes right after the
   *  line (or when the page asks, after a reconnect). */
  function pictureFigure(picture) {
    const root = str(picture.root);
    const width = num(picture.width) || 4;
    const height = num(picture.height) || 3;
    const figure = el('figure', 'msg-picture');
    figure.style.aspectRatio = width + ' / ' + height;
    figure.dataset.root = root;
    const clip = /^video\//.test(str(picture.type));
    if (pictureURLs.has(root)) {
      figure.append(pictureImage(root));
    } else {
      const what = clip ? 'video' : 'photo';
      const words = picture.refused === true ? 'This ' + what + ' is not fetched: larger than a node takes, or one too many from its writer.'
        : picture.unreadable === true ? 'This ' + what + ' does not open: its bytes are not what its writer says.'
        : picture.ready === true ? 'Loading the ' + what + '\u2026' : 'The ' + what + ' is on its way\u2026';
      figure.append(el('div', 'msg-picture-wait', words));
      if (!pictureWaiting.has(root)) pictureWaiting.set(root, []);
      pictureWaiting.get(root).push(figure);
      if (picture.ready === true) askSoonForPicture(root);
    }
    return figure;
  }

  /** A clip plays in place (its first frame is its still); a photo opens full screen at a tap. */
  function pictureImage(root) {
    if (pictureTypes.get(root) && /^video\//.test(pictureTypes.get(root))) {
      const video = el('video');
      video.src = pictureURLs.get(root);
      video.controls = true;
      video.playsInline = true;
      video.preload = 'metadata';
      return video;
    }
    const img = el('img');
    img.src = pictureURLs.get(root);
    img.alt = 'photo';
    img.addEventListener('click', () => {
      ui.viewerImg.src = img.src;
      ui.viewer.hidden = false;
    });
    return img;
  }

  /** The node sends a picture right after a live line: asked for only if it did not come (a line
   *  caught up on after a reconnect). */
  function askSoonForPicture(root) {
    setTimeout(() => {
      if (!pictureURLs.has(root)) askForPicture(root);
    }, 1500);
  }

  function askForPicture(root) {
    if (!/^[0-9a-f]{64}$/.test(root) || pictureAsked.has(root)) return;
    pictureAsked.add(root);
    sendSealed({ t: 'get_picture', root: root });
  }

  /** The node has not got a picture asked for (yet): asked again when it says it arrived. */
  function pictureBytes(msg) {
    pictureAsked.delete(str(msg.root));
  }

  const PICTURE_TYPES = { 1: 'image/jpeg', 2: 'image/png', 3: 'image/webp', 4: 'video/mp4', 5: 'video/webm' };

  /** A picture's frame (0x00, root, type, the file): every figure waiting for it shows it. */
  function pictureFrame(plain) {
    let root = '';
    for (let i = 1; i < 33; i++) root += (plain[i] < 16 ? '0' : '') + plain[i].toString(16);
    pictureAsked.delete(root);
    const type = PICTURE_TYPES[plain[33]] || 'image/jpeg';
    pictureTypes.set(root, type);
    if (!pictureURLs.has(root)) pictureURLs.set(root, URL.createObjectURL(new Blob([plain.subarray(34)], { type: type })));
    for (const figure of pictureWaiting.get(root) || []) figure.replaceChildren(pictureImage(root));
    pictureWaiting.delete(root);
  }

  /** A picture shown before its bytes were on the node arrived: ask for them. */
  function pictureArrived(line) {
    if (line.picture && typeof line.picture === 'object') askSoonForPicture(str(line.picture.root));
  }

  /** The long edge a photo from the phone is scaled to: sharp on a phone, a few hundred KiB. */
  const PHOTO_EDGE = 1600;
  const PHOTO_PART = 8192;

  /** Draws the picked picture scaled down (which also leaves its metadata behind: a canvas has
   *  pixels only), as a JPEG. */
  async function scaledPhoto(file) {
    let source;
    try {
      source = await createImageBitmap(file, { imageOrientation: 'from-image' });
    } catch (e) {
      source = await new Promise((resolve, reject) => {
        const img = new Image();
        img.onload = () => resolve(img);
        img.onerror = () => reject(new Error('not a picture this browser can open'));
        img.src = URL.createObjectURL(file);
      });
    }
    const w = source.width || source.naturalWidth;
    const h = source.height || source.naturalHeight;
    const scale = Math.min(1, PHOTO_EDGE / Math.max(w, h));
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(w * scale));
    canvas.height = Math.max(1, Math.round(h * scale));
    canvas.getContext('2d').drawImage(source, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.85));
    if (!blob) throw new Error('the picture could not be scaled');
    return new Uint8Array(await blob.arrayBuffer());
  }

  /** The largest clip a node takes (it goes as it is: no transcoding on a phone). */
  const CLIP_LIMIT = 16 * 1024 * 1024;

  /** Sends a photo (scaled) or a clip (as it is) in parts, then the caption: what is typed goes
   *  with it. */
  async function sendPhoto(file) {
    if (!connected) {
      toast('Not connected yet: pick it again once it says connected.');
      return;
    }
    const clip = /^video\//.test(file.type);
    if (clip && file.size > CLIP_LIMIT) {
      toast('That video is over 16 MB: send a shorter one (up to 30 seconds).');
      ui.photoInput.value = '';
      return;
    }
    ui.photo.classList.add('is-busy');
    try {
      const bytes = clip ? new Uint8Array(await file.arrayBuffer()) : await scaledPhoto(file);
      let parts = 0;
      for (let start = 0; start < bytes.length; start += PHOTO_PART) {
        const part = bytes.subarray(start, start + PHOTO_PART);
        let raw = '';
        for (let i = 0; i < part.length; i++) raw += String.fromCharCode(part[i]);
        if (!sendSealed({ t: 'photo_part', n: parts, data: btoa(raw) })) throw new Error('the connection dropped');
        parts += 1;
      }
      if (!sendSealed({ t: 'photo', parts: parts, caption: ui.composeText.value.trim() })) throw new Error('the connection dropped');
      ui.composeText.value = '';
    } catch (e) {
      toast((clip ? 'The video' : 'The photo') + ' was not sent: ' + (e && e.message ? e.message : 'it could not be read') + '.');
    } finally {
      ui.photo.classList.remove('is-busy');
      ui.photoInput.value = '';
    }
  }

  /** How long a line waited for this stream, as the console says it: from when it was written
   *  (waited_ms), not from when this node got it (held_ms, which a restart resets). */
  function heldFor(line) {
    const held = num(line.held_ms);
    const waited = num(line.waited_ms);
    if (held === null || held <= 0) return held;
    return waited !== null && waited > held ? waited : held;
  }

  /** A notice in the page's own words where the console's speak of keys or flags. */
  function pageWords(line) {
    const text = str(line.message);
    if (line.kind === 'paused' && /^paused:/.test(text)) return 'Paused: nothing new shows until you tap Resume.';
    return text;
  }

  function note(text, kind, line) {
    const node = el('div', 'note' + (kind ? ' is-' + kind : ''), text);
    if (line && line.earlier === true) node.classList.add('is-earlier');
    return node;
  }

  function renderScoreLine(line) {
    const node = el('div', 'scorecard');
    if (line.earlier === true) node.classList.add('is-earlier');
    node.append(el('div', 'scorecard-board', scoreText(line) || '?'));
    const game = num(line.game_ms);
    const sent = num(line.sent_at);
    let by = 'score from ' + who(str(line.by));
    const time = game !== null ? clock(game) : sent !== null ? '~' + clock(sent) : '';
    if (time) by += ' \u00b7 ' + time;
    const held = heldFor(line);
    if (held !== null && held > 0) by += ' \u00b7 held ' + duration(held);
    node.append(el('div', 'scorecard-by', by));
    if (line.correction === true) {
      node.append(el('div', 'scorecard-by', 'for an earlier moment: the score stays as it was'));
    }
    return node;
  }

  /** The hints of proposals still asking for a tap, by label: put right once the viewer marks
   *  the moment or it is no longer on offer. */
  const openHints = new Map();

  function renderCalibration(line) {
    const by = str(line.by);
    const mine = me && by === me;
    const node = el('div', 'moment');
    node.append(el('span', 'moment-icon'));
    const body = el('div', 'moment-body');
    body.append(el('div', 'moment-title', mine ? 'You proposed ' + quoted(line.label) : by + ' proposes ' + quoted(line.label)));
    const hint = el('div', 'moment-hint', mine ? 'Others tap Now when it is on their screen.' : 'Tap Now the moment it is on your screen.');
    body.append(hint);
    node.append(body);
    if (!mine && line.earlier !== true) openHints.set(str(line.label), hint);
    return node;
  }

  function closeHint(label, words) {
    const hint = openHints.get(label);
    if (!hint) return;
    hint.textContent = words;
    openHints.delete(label);
  }

  /** After a view: proposals that are neither on offer nor marked have lapsed. */
  function closeLapsedHints(offer) {
    const onOffer = offer && typeof offer === 'object' ? str(offer.label) : '';
    const more = offer && typeof offer === 'object' ? num(offer.more) || 0 : 0;
    if (more > 0) return; // others wait behind the one on the button: which is not known here
    for (const label of Array.from(openHints.keys())) {
      if (label !== onOffer) closeHint(label, 'No longer on offer.');
    }
  }

  function renderConfirmMark(line) {
    const label = str(line.label);
    let words;
    const move = num(line.move_ms);
    const behind = num(line.behind_ms);
    if (move !== null) {
      words = 'Your mark of ' + quoted(label) + ' would move you ' + duration(move) + (move > 0 ? ' further behind' : ' ahead') + '.';
    } else if (behind !== null && line.nick !== undefined) {
      words = 'Your mark of ' + quoted(label) + ' would put you ' + duration(behind) + (behind >= 0 ? ' behind ' : ' ahead of ') + str(line.nick) + '.';
    } else {
      words = str(line.message) || 'Your mark of ' + quoted(label) + ' would move you far.';
    }
    const ago = num(line.proposed_ago_ms);
    if (ago !== null && ago > 30000) words += ' It was proposed ' + duration(ago) + ' ago.';
    words += ' It was not made.';
    const node = note(words, 'warn', line);
    const button = el('button', 'note-action', 'Mark ' + quoted(label) + ' anyway');
    button.type = 'button';
    button.addEventListener('click', () => {
      if (sendSealed({ t: 'now', label: label })) {
        button.disabled = true;
        button.textContent = 'Sent';
      } else {
        toast('Not connected: nothing was marked.');
      }
    });
    setTimeout(() => {
      if (!button.disabled) {
        button.disabled = true;
        button.textContent = 'Too late to confirm: mark it again if it was right';
      }
    }, CONFIRM_WINDOW_MS);
    node.append(button);
    return node;
  }

  function renderUnplaced(line) {
    const room = str(line.room);
    const shield = num(line.shield_seconds);
    if (shield === null) {
      return note('You are not placed in ' + room + ' yet, and the shield is off: what others write shows at once, and may spoil.', 'warn', line);
    }
    return note('Not placed in ' + room + ' yet: others\u2019 words wait ' + shield + ' s so none can spoil. ' +
      'Tap Now when a moment others mark reaches your screen, or turn on Listen.', 'warn', line);
  }

  function renderListening(line) {
    if (line.state === 'stopped') {
      return note('Stopped listening: ' + (line.reason ? str(line.reason) : 'the audio file played to its end') + '.', 'quiet', line);
    }
    const what = line.source === 'file' ? 'the audio file' : 'the node\u2019s default input';
    return note('Listening to ' + what + '. Only coarse features of the sound leave the node, sealed; never the sound.', 'info', line);
  }

  function renderStep(line) {
    const nick = str(line.nick);
    const subject = me && nick === me ? 'Your stream' : nick;
    const change = num(line.change_ms) || 0;
    const words = change >= 0 ? ' fell ' + duration(change) + ' further behind' : ' caught up ' + duration(change);
    return note(subject + words + (line.heard === true ? ' (heard)' : ''), '', line);
  }

  function render(line) {
    switch (line.type) {
      case 'message':
        return renderMessage(line);
      case 'picture':
        pictureArrived(line);
        return null;
      case 'info': {
        const text = pageWords(line);
        if (!text) return null;
        return note(text, /\n/.test(text) ? 'info' : '', line);
      }
      case 'error':
        return line.message ? note(str(line.message), 'error', line) : null;
      case 'calibration':
        return renderCalibration(line);
      case 'mark':
        if (me && str(line.nick) === me) closeHint(str(line.label), '\u2713 You marked it.');
        return note('\u2713 ' + whoIn(line) + ' marked ' + quoted(line.label), 'quiet', line);
      case 'moment_cue': {
        const picks = Array.isArray(line.suggested) ? line.suggested.filter((l) => typeof l === 'string').join(', ') : 'kickoff';
        return note(who(str(line.by)) + ' marked a moment. Its name waits for your stream, as words do. To be placed, tap ' +
          'a moment anyone can name ahead as it reaches your screen: ' + picks + '.', 'warn', line);
      }
      case 'shield_grew': {
        const seconds = num(line.seconds);
        const apart = num(line.apart_ms);
        return note('The shield is now ' + duration((seconds || 0) * 1000) + ': ' + who(str(line.behind)) + ' runs ' +
          duration(apart || 0) + ' behind ' + who(str(line.ahead)) + ', so your stream may be that far behind too. ' +
          'Words from people you are not placed with wait that long.', '', line);
      }
      case 'unmark':
        return note(who(str(line.nick)) + ' took back the mark of ' + quoted(line.label), 'quiet', line);
      case 'mark_set_aside':
        return note((me && str(line.nick) === me ? 'Your mark' : str(line.nick) + '\u2019s mark') + ' of ' + quoted(line.label) +
          ' does not fit the other marks: set aside until a mark of another moment confirms it.', 'warn', line);
      case 'join':
        return note(whoIn(line) + ' joined ' + str(line.room), 'quiet', line);
      case 'leave':
        return note(whoIn(line) + ' left ' + str(line.room), 'quiet', line);
      case 'score':
        return renderScoreLine(line);
      case 'teams':
        return note(who(str(line.by)) + ' named the sides: ' + str(line.home) + ' v ' + str(line.guest), 'quiet', line);
      case 'step':
        return renderStep(line);
      case 'unplaced':
        return renderUnplaced(line);
      case 'shield': {
        const seconds = num(line.seconds);
        return seconds === null
          ? note('Shield off: what people you are not placed with write shows at once, and may spoil.', 'warn', line)
          : note('Shield on: what people you are not placed with write waits ' + seconds + ' s after it was written.', '', line);
      }
      case 'confirm_mark':
        return renderConfirmMark(line);
      case 'listening':
        return renderListening(line);
      case 'nick_conflict': {
        const nick = str(line.nick);
        return note('Careful: a new key is calling itself ' + nick + '. Its messages show as ' + nick + '#' +
          str(line.id).slice(0, 8) + '; while both are here, the first ' + nick + '\'s as ' + nick + '#' +
          str(line.known_id).slice(0, 8) + '.', 'warn', line);
      }
      case 'fault':
        return note(str(line.nick) + ' signed two versions of one message: hiding it and all it sends after.', 'warn', line);
      default:
        return null; // offsets (the ladder has them), peer, ready, delivery, and anything newer
    }
  }

  function renderLine(line) {
    let node;
    try {
      node = render(line);
    } catch (e) {
      node = null;
    }
    if (!node) return;
    if (line.type === 'message' && sameSender(lastEntryLine, line)) node.classList.add('same-sender');
    append(node, line, line.type === 'message' && isOwn(line));
  }

  /** The viewer's nick became known (or changed): lines that depend on it are drawn again. */
  function restyleOwn() {
    for (const entry of entries) {
      const type = entry.line.type;
      if (type !== 'message' && type !== 'calibration' && type !== 'mark' && type !== 'join' && type !== 'leave') continue;
      let fresh;
      try {
        fresh = render(entry.line);
      } catch (e) {
        fresh = null;
      }
      if (!fresh) continue;
      if (entry.node.classList.contains('same-sender')) fresh.classList.add('same-sender');
      entryNodes.add(fresh);
      entry.node.replaceWith(fresh);
      entry.node = fresh;
    }
  }

  // ---------------------------------------------------------------- toast

  function toast(text) {
    ui.toast.textContent = text;
    ui.toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => {
      ui.toast.hidden = true;
    }, 4000);
  }

  // ---------------------------------------------------------------- sending lines

  function sendLine(text) {
    const obj = { t: 'line', text: text };
    if (!frameFits(obj)) {
      toast('That is too long to send at once. Send it in parts.');
      return false;
    }
    if (!sendSealed(obj)) {
      toast('Not connected yet: your text is still here. Send it again once it says connected.');
      return false;
    }
    return true;
  }

  function onCompose(event) {
    event.preventDefault();
    const text = ui.composeText.value;
    if (!text.trim()) {
      ui.composeText.focus();
      return;
    }
    if (sendLine(text)) ui.composeText.value = '';
    ui.composeText.focus();
  }

  // ---------------------------------------------------------------- sheets

  function openSheet(sheet) {
    closeSheet(false);
    openSheetEl = sheet;
    ui.scrim.hidden = false;
    sheet.hidden = false;
  }

  /** Closes the open sheet; `cancel` answers a pending passphrase question with null. */
  function closeSheet(cancel) {
    const sheet = openSheetEl;
    if (!sheet) return;
    openSheetEl = null;
    sheet.hidden = true;
    ui.scrim.hidden = true;
    if (sheet === ui.sheetPass) {
      ui.passText.value = '';
      if (cancel) sendSealed({ t: 'passphrase', text: null });
    }
  }

  function roomName(room) {
    if (typeof room === 'string') return room;
    if (room && typeof room === 'object') return str(room.name || room.room);
    return '';
  }

  function renderRooms() {
    const current = view ? str(view.room) : '';
    const names = [];
    if (current) names.push(current);
    for (const room of view && Array.isArray(view.rooms) ? view.rooms : []) {
      const name = roomName(room);
      if (name && names.indexOf(name) < 0) names.push(name);
    }
    const items = names.map((name) => {
      const li = el('li');
      const button = el('button', 'room-item');
      button.type = 'button';
      button.append(el('span', 'room-item-name', name));
      if (name === current) {
        button.disabled = true;
        button.append(el('span', 'room-item-aside', 'you are here'));
      } else {
        button.append(el('span', 'room-item-aside', 'join'));
        button.addEventListener('click', () => {
          if (sendLine('/join ' + name)) closeSheet(false);
        });
      }
      li.append(button);
      return li;
    });
    ui.roomList.replaceChildren(...items);
    ui.roomEmpty.hidden = names.some((n) => n !== current);
  }

  function renderNickPicks() {
    const chosen = ui.msgNick.value.trim();
    const nicks = [];
    for (const rung of view && Array.isArray(view.ladder) ? view.ladder : []) {
      if (rung && rung.you !== true && typeof rung.nick === 'string' && rung.nick && nicks.indexOf(rung.nick) < 0) nicks.push(rung.nick);
    }
    const buttons = nicks.map((nick) => {
      const button = el('button', 'nick-pick', nick);
      button.type = 'button';
      button.setAttribute('aria-pressed', nick === chosen ? 'true' : 'false');
      button.addEventListener('click', () => {
        ui.msgNick.value = nick;
        for (const other of ui.msgNicks.children) other.setAttribute('aria-pressed', other === button ? 'true' : 'false');
        ui.msgText.focus();
      });
      return button;
    });
    ui.msgNicks.replaceChildren(...buttons);
    ui.msgNicks.hidden = buttons.length === 0;
  }

  function askPassphrase(room) {
    ui.passNote.textContent = (room ? quoted(room) + ' is a private room. ' : '') +
      'Everyone with the same room name and passphrase is in it; nobody else sees any of it.';
    ui.passText.value = '';
    openSheet(ui.sheetPass);
    ui.passText.focus();
  }

  // ---------------------------------------------------------------- the keyboard and the visual viewport

  const root = document.documentElement;

  function fitViewport() {
    const vv = window.visualViewport;
    if (vv && vv.scale <= 1.01) {
      root.style.setProperty('--app-h', Math.round(vv.height) + 'px');
      root.style.setProperty('--app-top', Math.round(vv.offsetTop) + 'px');
    }
    updateTyping();
  }

  function updateTyping() {
    const vv = window.visualViewport;
    const height = vv ? vv.height : window.innerHeight;
    const typing = document.activeElement === ui.composeText && height < 600;
    ui.app.classList.toggle('is-typing', typing);
  }

  // ---------------------------------------------------------------- wiring

  ui.pairForm.addEventListener('submit', onPairSubmit);
  // A refusal speaks of the code that was tried: once the code is edited, it no longer applies.
  ui.pairCode.addEventListener('input', () => {
    if (!pairing && ui.pairStatus.classList.contains('is-error')) setPairStatus('', '');
  });
  ui.compose.addEventListener('submit', onCompose);
  ui.photoInput.addEventListener('change', () => {
    const file = ui.photoInput.files && ui.photoInput.files[0];
    if (file) sendPhoto(file);
  });
  ui.viewer.addEventListener('click', () => {
    ui.viewer.hidden = true;
    ui.viewerImg.removeAttribute('src');
  });

  // Buttons next to the input must not take the focus from it (the keyboard would drop).
  for (const button of [ui.send, ui.now, ui.jump]) {
    button.addEventListener('mousedown', (e) => e.preventDefault());
  }
  ui.send.addEventListener('pointerdown', (e) => {
    if (document.activeElement === ui.composeText) e.preventDefault();
  });

  // Now fires on the touch itself, not on the lift: the mark is timed when it reaches the node.
  ui.now.addEventListener('pointerdown', (e) => {
    if (e.pointerType === 'mouse' && e.button !== 0) return;
    e.preventDefault();
    lastNowPointer = performance.now();
    tapNow();
  });
  ui.now.addEventListener('click', () => {
    if (buzzOnClick) {
      buzzOnClick = false;
      buzz();
    }
    if (performance.now() - lastNowPointer < 1500) return; // the pointerdown already marked
    tapNow();
  });

  ui.pause.addEventListener('click', () => {
    const paused = ui.pause.getAttribute('aria-pressed') === 'true';
    if (!sendSealed({ t: paused ? 'resume' : 'pause' })) {
      toast('Not connected yet.');
      return;
    }
    setToggle(ui.pause, !paused, paused ? 'Pause' : 'Resume');
  });

  ui.listen.addEventListener('click', () => {
    const on = ui.listen.getAttribute('aria-pressed') === 'true';
    if (!sendSealed({ t: 'listen', on: !on })) {
      toast('Not connected yet.');
      return;
    }
    // Not "Listening" until the node says so (the view): opening the sound can fail.
    if (on) setToggle(ui.listen, false, 'Listen');
    else ui.listen.querySelector('.act-text').textContent = 'Starting\u2026';
  });

  ui.rooms.addEventListener('click', () => {
    renderRooms();
    openSheet(ui.sheetRooms);
  });

  ui.message.addEventListener('click', () => {
    renderNickPicks();
    openSheet(ui.sheetMsg);
    if (!ui.msgNick.value.trim()) {
      if (ui.msgNicks.hidden) ui.msgNick.focus();
    } else {
      ui.msgText.focus();
    }
  });

  ui.privateForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = ui.privateName.value.trim();
    if (!name) {
      ui.privateName.focus();
      return;
    }
    if (sendLine('/private ' + name)) {
      ui.privateName.value = '';
      closeSheet(false);
    }
  });

  ui.msgNick.addEventListener('input', () => {
    const nick = ui.msgNick.value.trim();
    for (const button of ui.msgNicks.children) button.setAttribute('aria-pressed', button.textContent === nick ? 'true' : 'false');
  });

  ui.msgForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const nick = ui.msgNick.value.trim().replace(/^@/, '');
    const text = ui.msgText.value.trim();
    if (!nick || /\s/.test(nick)) {
      toast(nick ? 'A nick has no spaces.' : 'Who is it for? Pick a nick.');
      ui.msgNick.focus();
      return;
    }
    if (!text) {
      ui.msgText.focus();
      return;
    }
    if (sendLine('/msg ' + nick + ' ' + text)) {
      ui.msgText.value = '';
      closeSheet(false);
    }
  });

  ui.passForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = ui.passText.value;
    if (!text) {
      ui.passText.focus();
      return;
    }
    ui.passText.value = '';
    if (!sendSealed({ t: 'passphrase', text: text })) toast('Not connected: the passphrase was not sent. Try /private again.');
    closeSheet(false);
  });

  ui.passCancel.addEventListener('click', () => closeSheet(true));
  ui.scrim.addEventListener('click', () => closeSheet(true));
  for (const button of document.querySelectorAll('[data-close]')) {
    button.addEventListener('click', () => closeSheet(false));
  }
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && openSheetEl) closeSheet(true);
  });

  ui.jump.addEventListener('click', scrollToBottom);
  ui.log.addEventListener('scroll', () => {
    pinned = nearBottom();
    if (pinned) ui.jump.hidden = true;
  }, { passive: true });
  // The keyboard, the Now button or the action row coming and going resize the conversation:
  // one that was at its end stays there.
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => {
      if (pinned) ui.log.scrollTop = ui.log.scrollHeight;
    }).observe(ui.log);
  }

  ui.composeText.addEventListener('focus', updateTyping);
  ui.composeText.addEventListener('blur', updateTyping);
  if (window.visualViewport) {
    window.visualViewport.addEventListener('resize', fitViewport);
    window.visualViewport.addEventListener('scroll', fitViewport);
  }
  window.addEventListener('resize', fitViewport);

  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') kick();
  });
  window.addEventListener('online', () => {
    updateConn();
    kick();
  });
  window.addEventListener('offline', updateConn);
  window.addEventListener('pageshow', (event) => {
    if (event.persisted) kick();
  });
  window.addEventListener('pagehide', (event) => {
    // Put the socket away so the page can be kept in the back/forward cache; pageshow reconnects.
    if (!event.persisted || !ws) return;
    shutSocket(ws);
  });
  window.addEventListener('hashchange', () => {
    const secret = takeHashSecret();
    if (!secret) return;
    if (device) pendingSecret = secret;
    else if (!pairing) startPairing(secret, guessName(), true);
  });

  // For tests only: what the page is doing, in numbers.
  window.huddlePage = Object.freeze({
    state: () => ({ connected: connected, paired: !!device, lastSeq: lastSeq, lines: entries.length }),
  });

  // ---------------------------------------------------------------- start

  fitViewport();
  setTimeout(() => clock(Date.now()), 0); // warmClock: the formatter's cost, paid now
  ui.pairName.value = guessName();
  const secret = takeHashSecret();
  if (device) {
    pendingSecret = secret;
    showChat();
    connect();
  } else if (secret) {
    startPairing(secret, guessName(), true);
  } else {
    showPairing();
  }
})();

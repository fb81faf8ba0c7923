"""Three viewers on separate simulated hosts, no --peer flags: they find each other over mDNS."""

import time

from huddletest.binary import huddle_binary

NAMES = {"h1": "alice", "h2": "bob", "h3": "carol"}


def meet(hosts):
    nodes = {host: hosts(host, nick) for host, nick in NAMES.items()}
    for node in nodes.values():
        for other in NAMES.values():
            if other != node.name:
                node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, timeout=20,
                              what=f"{other} joining over mDNS")
    return nodes


def test_discovery_chat_calibration_and_the_service_records(hosts, bed):
    nodes = meet(hosts)
    alice, bob, carol = nodes["h1"], nodes["h2"], nodes["h3"]

    # Peers are found over mDNS, at their hosts' addresses (a peer may reach alice before her
    # own browse reports it; status says mdns once it has).
    deadline = time.monotonic() + 10
    while True:
        peers = {p["nick"]: p for p in alice.status()["peers"]}
        if all(peers.get(n, {}).get("found_by") == "mdns" for n in ("bob", "carol")) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert peers["bob"]["found_by"] == "mdns" and peers["bob"]["address"].startswith("192.0.2.12:"), peers
    assert peers["carol"]["found_by"] == "mdns" and peers["carol"]["address"].startswith("192.0.2.13:"), peers

    alice.say("kickoff soon")
    bob.message("kickoff soon")
    carol.message("kickoff soon")

    # Calibration across hosts: bob's stream 1 s behind alice's, carol's 2 s.
    start = time.monotonic()
    alice.say("/now kickoff")
    time.sleep(max(0, start + 1 - time.monotonic()))
    bob.say("/now kickoff")
    time.sleep(max(0, start + 2 - time.monotonic()))
    carol.say("/now kickoff")
    for node in (alice, bob, carol):
        node.wait_for(lambda o: o["type"] == "offsets" and all(v is not None for v in o["offsets"].values())
                      and len(o["offsets"]) == 3, what="all calibrated")
    alice.say("touchdown")
    sent = alice.message("touchdown")
    on_bob, on_carol = bob.message("touchdown"), carol.message("touchdown")
    # Each host has its own clock, but all read the machine's clock here, so they compare.
    assert abs(on_bob["shown_at"] - sent["sent_at"] - 1000) <= 250, on_bob
    assert abs(on_carol["shown_at"] - sent["sent_at"] - 2000) <= 250, on_carol

    # A fourth host sees each node's service and TXT with avahi-browse.
    browse = bed.run("exec", "h4", "avahi-browse", "-r", "-t", "-p", "_huddle._tcp").stdout
    resolved = [line.split(";") for line in browse.splitlines() if line.startswith("=")]
    by_nick = {}
    for fields in resolved:
        txt = fields[9]
        # avahi-browse prints a TXT record's strings last to first; txtvers=1 comes first on the
        # wire (checked byte by byte in DiscoveryTXTTests).
        assert txt.endswith('"txtvers=1"'), txt
        for nick in NAMES.values():
            if f'"nick={nick}"' in txt:
                by_nick[nick] = (fields[7], txt)
    assert set(by_nick) == set(NAMES.values()), browse
    assert by_nick["alice"][0] == "192.0.2.11"
    assert f'"id={alice.id}"' in by_nick["alice"][1] and '"rooms=superbowl"' in by_nick["alice"][1]

    # huddle rooms on the fourth host lists the room and who is in it.
    rooms = bed.run("exec", "h4", huddle_binary(), "rooms", "--timeout", "3").stdout
    assert "superbowl" in rooms and all(nick in rooms for nick in NAMES.values()), rooms


def test_a_cut_host_goes_suspect_then_gone_and_everything_arrives_once_after(hosts, bed):
    nodes = meet(hosts)
    alice, bob, carol = nodes["h1"], nodes["h2"], nodes["h3"]

    bed.run("cut", "h3")
    for node in (alice, bob):
        node.wait_for(lambda o: o["type"] == "peer" and o["nick"] == "carol" and o["state"] == "suspect",
                      timeout=10, what="carol suspect")
        node.wait_for(lambda o: o["type"] == "peer" and o["nick"] == "carol" and o["state"] == "gone",
                      timeout=10, what="carol gone")

    alice.say("while carol was away")
    carol.say("alone on my island")
    bob.message("while carol was away")

    bed.run("restore", "h3")
    alice.wait_for(lambda o: o["type"] == "peer" and o["nick"] == "carol" and o["state"] == "alive",
                   timeout=20, what="carol back")
    carol.message("while carol was away", timeout=20)
    alice.message("alone on my island", timeout=20)
    bob.message("alone on my island", timeout=20)
    time.sleep(2)
    for node in (alice, bob, carol):
        texts = node.shown_texts()
        assert texts.count("while carol was away") == 1, (node.name, texts)
        assert texts.count("alone on my island") == 1, (node.name, texts)


def test_a_lossy_lan_loses_nothing_and_shows_nothing_twice(hosts, bed):
    """Every host drops 20 % of the packets it receives (Scripts/lan loss): pushes, digests,
    repairs and probes alike. Every message still arrives once, in the order it was written.
    How fast is measured by Scripts/bench (lossy delivery), not asserted here."""
    nodes = meet(hosts)
    alice, bob, carol = nodes["h1"], nodes["h2"], nodes["h3"]
    for host in ("h1", "h2", "h3"):
        bed.run("loss", host, "20")
    try:
        sent = [f"play {i}" for i in range(60)]
        for text in sent:
            alice.say(text)
            time.sleep(0.03)
        carol.say("carol was here")
        for node in (bob, carol):
            node.message(sent[-1], timeout=30)
        for node in (alice, bob):
            node.message("carol was here", timeout=30)
        time.sleep(2)
        for node in (bob, carol):
            shown = [t for t in node.shown_texts() if t.startswith("play ")]
            assert shown == sent, (node.name, shown)
    finally:
        for host in ("h1", "h2", "h3"):
            bed.run("loss", host, "0")


def test_a_daemon_that_goes_away_and_comes_back_is_picked_up(hosts, bed):
    alice = hosts("h1", "alice")
    bed.run("avahi-stop", "h2")
    bob = hosts("h2", "bob")   # starts with no mDNS daemon: says so and carries on
    time.sleep(2)
    bed.run("avahi-start", "h2")
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", timeout=30, what="alice over mDNS")
    alice.wait_for(lambda o: o["type"] == "join" and o["nick"] == "bob", timeout=30, what="bob over mDNS")
    assert "discovery is off" in bob.stderr_path.read_text()


def test_a_private_room_is_found_over_mdns_and_shows_no_name_to_the_network(hosts, bed, tmp_path):
    alice = hosts("h1", "alice", passphrase="touchdown")
    bob = hosts("h2", "bob", passphrase="touchdown")
    for node, other in ((alice, "bob"), (bob, "alice")):
        node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, timeout=20,
                      what=f"{other} joining the private room over mDNS")
    alice.say("the secret play")
    bob.message("the secret play")

    # Carol types the wrong passphrase: she reads nothing and is told so on her own console.
    carol = hosts("h3", "carol", passphrase="touchdowns")
    error = carol.wait_for(lambda o: o["type"] == "error" and "wrong passphrase for superbowl" in o["message"],
                           timeout=20, what="the wrong-passphrase error")
    assert "alice" in error["message"] or "bob" in error["message"]
    alice.say("still secret")
    bob.message("still secret")
    time.sleep(1)
    assert carol.shown_texts() == []

    # The network sees ids, never the name: avahi-browse on a fourth host, and huddle rooms.
    browse = bed.run("exec", "h4", "avahi-browse", "-r", "-t", "-p", "_huddle._tcp").stdout
    txts = [line.split(";")[9] for line in browse.splitlines() if line.startswith("=")]
    assert any('"nick=alice"' in txt for txt in txts), browse
    assert "superbowl" not in browse, browse
    private_id = alice.status()["rooms"][0]["private_id"]
    assert any(f'"rooms={private_id}"' in txt for txt in txts), browse

    rooms = bed.run("exec", "h4", huddle_binary(), "rooms", "--timeout", "3").stdout
    assert "superbowl" not in rooms and f"private room {private_id[:6]}" in rooms, rooms
    secret = tmp_path / "passphrase"
    secret.write_text("touchdown\n")
    mine = bed.run("exec", "h4", huddle_binary(), "rooms", "--timeout", "3", "--room", "superbowl",
                   "--passphrase-file", str(secret)).stdout
    assert "superbowl (private)" in mine and "alice" in mine and "bob" in mine, mine

#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""cluster.py's plan (groups, the signal, the positions the sender skips), the network
steps it takes (waiting for the switch to learn the joins, a host leaving and
rejoining) and the checks of each receiver's output, tags and counters."""

import json
import os
import re
import threading
import time

import netns_peers

SUBSTREAMS = 32      # the sender's, one group each
RECEIVERS = 8
TAKES = 4            # substreams per receiver
HEAP_ITEMS = 256     # int32: 1 KiB heaps, one datagram each
SAMPLE_RATE = float(1 << 20)


def group(substream):
    return f"239.10.0.{substream}"


def signal(substream, timestamps):
    """The sample at each timestamp of a substream: it says both, and is never 0."""
    import numpy as np
    t = np.asarray(timestamps, dtype=np.int64)
    return (((substream + 1) << 24) | (t & 0xFFFFFF)).astype(np.int32)


def round_timestamps(start, rounds, skips):
    """Timestamp of each input round's heaps: one position is skipped before each round
    in `skips`."""
    out, skipped = [], 0
    for k in range(rounds):
        skipped += k in skips
        out.append(start + (k + skipped) * HEAP_ITEMS)
    return out


def sent_signal(substream, round_ts):
    """What input `substream` of the sink sends, round after round."""
    import numpy as np
    items = (np.asarray(round_ts, dtype=np.int64)[:, None]
             + np.arange(HEAP_ITEMS, dtype=np.int64)[None, :]).ravel()
    return signal(substream, items)


def tag_value(value):
    import pmt
    v = pmt.to_python(value)
    return list(v) if isinstance(v, tuple) else v


class Plan:
    """Run A: rounds_a rounds from start_a, three positions skipped; run B (after the
    sender restarts): rounds_b rounds from start_b, far ahead."""

    def __init__(self, rounds_a, rounds_b=1000):
        self.rounds_a, self.rounds_b = rounds_a, rounds_b
        self.start_a = 100 << 20  # rx_time 100 s
        self.skips_a = [rounds_a // 5, rounds_a // 5 + 1, rounds_a * 3 // 5]
        self.start_b = self.start_a + (1 << 30)
        ts = round_timestamps(self.start_a, rounds_a, self.skips_a)
        self.positions_a = (ts[-1] - self.start_a) // HEAP_ITEMS + 1
        self.skipped_a = sorted(set(range(self.positions_a)) -
                                {(t - self.start_a) // HEAP_ITEMS for t in ts})

    def seconds_a(self, rate_mbps):
        return self.rounds_a * SUBSTREAMS * (HEAP_ITEMS * 4 + 100) * 8 / (rate_mbps * 1e6)

    def expected(self, substream):
        """The whole output of a receiver that never left, for `substream`."""
        import numpy as np
        a = sent_signal(substream, [self.start_a + p * HEAP_ITEMS
                                    for p in range(self.positions_a)])
        for p in self.skipped_a:
            a[p * HEAP_ITEMS:(p + 1) * HEAP_ITEMS] = 0
        b = sent_signal(substream, [self.start_b + p * HEAP_ITEMS
                                    for p in range(self.rounds_b)])
        return np.concatenate([a, b])

    def skipped_timestamps(self):
        return {self.start_a + p * HEAP_ITEMS for p in self.skipped_a}


def rx_time(timestamp):
    return [timestamp // int(SAMPLE_RATE), (timestamp % int(SAMPLE_RATE)) / SAMPLE_RATE]


def timestamp_of(rx):
    return int(rx[0]) * int(SAMPLE_RATE) + round(rx[1] * SAMPLE_RATE)


def memberships(in_switch):
    """{port: set of our groups} the bridge learnt (bridge mdb show)."""
    out = {}
    for line in in_switch("bridge", "mdb", "show").splitlines():
        m = re.search(r"port (\S+) grp (239\.10\.0\.\d+)", line)
        if m:
            out.setdefault(m.group(1), set()).add(m.group(2))
    return out


def wanted_memberships():
    return {os.environ[f"TOPO_PORT_{r + 2}"]: {group(TAKES * r + k) for k in range(TAKES)}
            for r in range(RECEIVERS)}


def wait_for_memberships(in_switch, say, failures, timeout=15):
    wanted = wanted_memberships()
    deadline = time.monotonic() + timeout
    while (got := memberships(in_switch)) != wanted and time.monotonic() < deadline:
        time.sleep(0.2)
    if got != wanted:
        failures.append(f"the switch learnt {got}, not {wanted}")
    else:
        say(f"cluster: the switch learnt each receiver's 4 groups (bridge mdb: "
            f"{sum(len(g) for g in got.values())} entries on {len(got)} ports)")


def run_while(main, *sides):
    """main() while each of sides() runs in a thread; their exceptions are raised
    after."""
    error = []

    def guarded(side):
        try:
            side()
        except Exception as e:
            error.append(e)
    threads = [threading.Thread(target=guarded, args=(side,), daemon=True)
               for side in sides]
    for t in threads:
        t.start()
    result = main()
    for t in threads:
        t.join(60)
    if error:
        raise error[0]
    return result


def wait_for_data(in_host, i):
    """Until the sender's data reaches host i."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rx = int(in_host(i, "cat", "/sys/class/net/eth0/statistics/rx_packets"))
        if rx > 100:
            break
        time.sleep(0.05)


def stop_and_rejoin(peer, in_host, in_switch, i, say, seconds_a):
    """Midway through run A, receiver host i's flowgraph stops (tb.stop, tb.wait: its
    source closes its sockets and the host leaves its groups) for 1 s, then starts
    again: the source joins them anew. \return the receiver's answer to rejoin
    (frames_while_away: frames its host received while no socket read them)."""
    wait_for_data(in_host, i)
    time.sleep(0.55 * seconds_a)
    port = os.environ[f"TOPO_PORT_{i}"]
    peer.ask("leave")
    time.sleep(1.0)
    forgot = port not in memberships(in_switch)
    answer = peer.ask("rejoin")
    back = time.monotonic()
    while port not in memberships(in_switch) and time.monotonic() - back < 20:
        time.sleep(0.05)
    say(f"cluster: host {i}'s receiver stopped its flowgraph for 1 s mid-stream (the "
        f"switch {'forgot' if forgot else 'still listed'} its groups) and started it "
        f"again; the switch listed its groups {time.monotonic() - back:.1f} s later")
    return answer


def leave_and_rejoin(in_host, in_switch, i, say, seconds_a):
    """Once the sender's data reaches host i, its link goes down for 1 s (the switch
    forgets its groups), then up: it reports them again, at once or when the querier
    asks."""
    wait_for_data(in_host, i)
    time.sleep(0.3 * seconds_a)
    port = os.environ[f"TOPO_PORT_{i}"]
    in_host(i, "ip", "link", "set", "eth0", "down")
    time.sleep(0.5)
    forgot = port not in memberships(in_switch)
    time.sleep(0.5)
    in_host(i, "ip", "link", "set", "eth0", "up")
    in_host(i, "ip", "route", "replace", "224.0.0.0/4", "dev", "eth0")
    back = time.monotonic()
    while port not in memberships(in_switch) and time.monotonic() - back < 20:
        time.sleep(0.05)
    say(f"cluster: host {i} left the network for 1 s mid-stream (its link down: the "
        f"switch {'forgot' if forgot else 'still listed'} its groups) and rejoined; "
        f"the switch listed its groups {time.monotonic() - back:.1f} s after its link "
        "came back")


#: The receiver that left: zeros (besides the skipped positions) may lie this many
#: positions before and after its absence (the window's release, and the switch still
#: forwarding into the dead link until it notices).
AROUND_ABSENCE = 2000


def check_receiver(r, out_dir, stats, on_port, link_drops, sent_packets, plan, left,
                   say, failures, away=0):
    """`on_port`: {substream: datagrams its bridge port sent}; `link_drops`: frames the
    port could not hand to the host (its link was down); `left`: how the receiver left
    mid-stream ("link": its link went down; "stopped": its flowgraph stopped; "": it
    stayed); `away`: frames its host received while its flowgraph stopped and started
    again (the kernel drops them uncounted: the source had left their groups, or had
    not yet read them from a socket it then closed)."""
    import numpy as np
    name = f"receiver {r}"
    mine = set(range(TAKES * r, TAKES * r + TAKES))
    others = {s: n for s, n in on_port.items() if s not in mine and n}
    if others:
        failures.append(f"{name}: its port carried other groups: {others}")
    if sent_packets % SUBSTREAMS:
        failures.append(f"{sent_packets} datagrams sent is not a multiple of "
                        f"{SUBSTREAMS} groups")
    per_group = sent_packets // SUBSTREAMS
    delivered = sum(on_port.get(s, 0) for s in mine)
    if not left and delivered != per_group * TAKES:
        failures.append(f"{name}: its port delivered {delivered} datagrams of its "
                        f"groups, {per_group * TAKES} were sent")
    counted, runs = netns_peers.datagrams_accounted(stats)
    # Its stream ends at the first stop heap; the others may stay unread. Frames the
    # port sent while the host's link was down never reached it; those that reached it
    # while its flowgraph was stopped found no socket.
    unread = delivered - counted
    if runs or not 0 <= unread <= TAKES - stats["stop_heaps"] + link_drops + away:
        failures.append(f"{name}: {delivered} datagrams delivered, {counted} counted "
                        f"({stats['stop_heaps']} stop heaps, {link_drops} frames lost "
                        f"on its link, {away} received while it was away)")
    if link_drops and not left:
        failures.append(f"{name}: its link dropped {link_drops} frames")
    with open(os.path.join(out_dir, "tags.json")) as f:
        tags = json.load(f)
    # A restarted flowgraph starts a fresh stream: only run B's start resyncs it.
    resyncs_wanted = 2 if left == "link" else 1
    if stats["timestamp_resyncs"] != resyncs_wanted:
        failures.append(f"{name}: {stats['timestamp_resyncs']} timestamp_resyncs, "
                        f"{resyncs_wanted} wanted")
    if stats.get("heaps_other_substream", 0) or stats["heaps_bad_substream"]:
        failures.append(f"{name}: heaps of other substreams reached it")
    zeros_outside = zeros_elsewhere = 0
    for k in range(TAKES):
        s = TAKES * r + k
        got = np.load(os.path.join(out_dir, f"out{k}.npy"))
        times = [(off, timestamp_of(v)) for off, key, v in tags[k] if key == "rx_time"]
        if not left:
            want = plan.expected(s)
            wrong = np.flatnonzero(got != want) if got.size == want.size else [0]
            if got.size != want.size or len(wrong):
                failures.append(f"{name}, substream {s}: {got.size} samples, "
                                f"{want.size} wanted; {len(wrong)} differ")
            want_times = [(0, plan.start_a), (plan.positions_a * HEAP_ITEMS, plan.start_b)]
            if times != want_times:
                failures.append(f"{name}, substream {s}: rx_time at {times}, "
                                f"{want_times} wanted")
            continue
        if len(times) != 3 or times[0] != (0, plan.start_a) or times[2][1] != plan.start_b:
            failures.append(f"{name} (left and rejoined), substream {s}: rx_time at "
                            f"{times}: wanted run A's start, a fresh one after it "
                            "rejoined, run B's start")
            continue
        bounds = [off for off, _ in times] + [got.size]
        for segment, ((off, ts), end) in enumerate(zip(times, bounds[1:])):
            blocks = (end - off) // HEAP_ITEMS
            for p in range(blocks):
                block = got[off + p * HEAP_ITEMS:off + (p + 1) * HEAP_ITEMS]
                t = ts + p * HEAP_ITEMS
                if not block.any():
                    if t not in plan.skipped_timestamps():
                        zeros_outside += 1
                        near = (segment == 0 and p >= blocks - AROUND_ABSENCE or
                                segment == 1 and p < AROUND_ABSENCE)
                        zeros_elsewhere += not near
                elif not np.array_equal(block, sent_signal(s, [t])):
                    failures.append(f"{name}, substream {s}: wrong data at {t}")
                    break
    if left:
        if zeros_elsewhere:
            failures.append(f"{name}: {zeros_elsewhere} zero heaps besides the skipped "
                            "ones, away from its absence")
        how, lost = (("its link went down", f"{link_drops} frames lost on its link")
                     if left == "link" else
                     ("its flowgraph stopped", f"{unread} uncounted, of the {away} frames "
                      "its host received while its flowgraph was away"))
        say(f"cluster: receiver {r} left ({how}) and rejoined: every heap it output is "
            f"right or zeros ({zeros_outside} zero heaps around its absence), with a "
            f"fresh rx_time after it; its port delivered {delivered} of the "
            f"{per_group * TAKES} datagrams sent to its groups ({lost}); {counted} "
            "counted")
    else:
        say(f"cluster: receiver {r}: bit-exact, zeros at the {len(plan.skipped_a)} "
            f"skipped positions; {delivered} datagrams to its groups = "
            f"{stats['packets']} received + {counted - stats['packets']} counted + "
            f"{unread} unread after the stop heap; its port carried no other group")


def check_rx_times_agree(work, plan, say, failures):
    """The rx_time tags for run A's and run B's first timestamps are equal on every
    host and output, and are exactly the timestamps' times."""
    seen = {}
    for r in range(RECEIVERS):
        with open(os.path.join(work, f"r{r}", "tags.json")) as f:
            for output in json.load(f):
                for _, key, v in output:
                    if key == "rx_time":
                        seen.setdefault(timestamp_of(v), set()).add(json.dumps(v))
    for ts in (plan.start_a, plan.start_b):
        values = seen.get(ts, set())
        if values != {json.dumps(rx_time(ts))}:
            failures.append(f"rx_time of timestamp {ts}: {values} across hosts, "
                            f"{rx_time(ts)} wanted on all")
        else:
            say(f"cluster: rx_time of timestamp {ts} is {tuple(rx_time(ts))} on every "
                f"host and output")

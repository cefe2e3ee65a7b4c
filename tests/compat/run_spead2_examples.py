#!/usr/bin/python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs spead2's own example and tutorial scripts with only their imports swapped to
gnuradio.spead, each receiver fed by its sender (docs/testing.md).

    /usr/bin/python3 tests/compat/run_spead2_examples.py --spead2 <spead2 tree or git dir>
        [--tag v4.4.1] [--modules build/test_modules] [--apps build/apps] [CASE ...]

The scripts come from spead2's examples/ (a source tree, or `git archive <tag>`). Every
line that imports spead2 is rewritten as docs/python.md tells a user to:
    import spead2               ->  import gnuradio.spead as spead2
    import spead2.send.asyncio  ->  import gnuradio.spead as spead2, gnuradio.spead.send.asyncio
    from spead2.numba import f  ->  from gnuradio.spead.numba import f
and the runner checks that nothing else changed. Each case starts its receiver, waits
until the receiver's UDP port is bound, runs its sender (a spead2 script, or gr-spead's
spead_send where spead2's comment names spead2_send) and then checks what the receiver
printed: the heaps' timestamps and powers, the chunks and their heap counts, and that
it ended by itself on the sender's stop heap. Loopback UDP may drop packets when a
Python receiver falls behind (as it may for spead2), so a case asks for every heap only
where the sender is rate-limited below what the receiver takes, and otherwise for at
least one and no more than were sent. When the stop heap itself is lost (the last packet
of a burst into a full socket buffer), a receiver that has not ended STOP_WAIT seconds
after its senders gets a stop heap from the runner, and the case says so; if the
kernel dropped no datagram in the case (/proc/net/snmp's RcvbufErrors), the receiver
missed a stop heap it was given, and the case fails.

As root the cases run in a network namespace of their own (unshare --net), so the
fixed ports 8888 and 8889 of spead2's scripts meet no other test. The exit status is 0
when every case passed, 1 when one failed, 77 (ctest's skip) when no spead2 tree is
given or found, or numba and scipy (which five of the scripts import) are missing.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import spead2_tree

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = "run_spead2_examples"
HEAP = 1024 * 1024
# mean of x * x for x uniform on the integers -100..99, tut_2_send's samples
UNIFORM_POWER = (2 * sum(x * x for x in range(1, 100)) + 100 * 100) / 200

# Seconds the receiver has to end after its senders before the runner sends a stop heap
# of its own (a lost one cannot end it), and the program that sends it to a port.
STOP_WAIT = 15
SEND_STOP = """import sys
import gnuradio.spead as spead2, gnuradio.spead.send
stream = spead2.send.UdpStream(spead2.ThreadPool(), [("127.0.0.1", int(sys.argv[1]))])
stream.send_heap(spead2.send.ItemGroup().get_end())
"""

IMPORT = re.compile(r"^import spead2((?:\.\w+)*)\s*$")
FROM = re.compile(r"^from spead2((?:\.\w+)*) import (.+)$")


def swap_imports(text):
    """text with its spead2 imports rewritten, and the (old, new) line pairs."""
    lines, swaps = [], []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        new = body
        if m := IMPORT.match(body):
            new = "import gnuradio.spead as spead2"
            if m.group(1):
                new += f", gnuradio.spead{m.group(1)}"
        elif m := FROM.match(body):
            new = f"from gnuradio.spead{m.group(1)} import {m.group(2)}"
        if new != body:
            swaps.append((body, new))
            line = new + "\n"
        lines.append(line)
    return "".join(lines), swaps


def only_imports_changed(old, new):
    """The lines that differ between old and new and are not spead2 imports."""
    return [(a, b) for a, b in zip(old.splitlines(), new.splitlines())
            if a != b and not (IMPORT.match(a) or FROM.match(a))]


def port_bound(port):
    """Whether a UDP socket is bound to port (IPv4 or IPv6, any address)."""
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table, encoding="ascii") as f:
                for row in f.readlines()[1:]:
                    local = row.split()[1]
                    if int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def udp_buffer_drops():
    """The kernel's count of UDP datagrams dropped for a full socket buffer (this
    network namespace's RcvbufErrors), or None where it cannot be read."""
    try:
        with open("/proc/net/snmp", encoding="ascii") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        return int(rows[1][rows[0].index("RcvbufErrors")])
    except (OSError, IndexError, ValueError):
        return None


class Case:
    """One receiver and its senders, and what the receiver's output must show."""

    def __init__(self, name, receiver, senders, check, ports=(8888,)):
        self.name, self.receiver, self.senders = name, receiver, senders
        self.check, self.ports = check, ports


def timestamps_and_powers(output):
    """[(timestamp, power)] from the tutorial receivers' "Timestamp: T Power: P" lines."""
    return [(int(t), float(p)) for t, p in
            re.findall(r"^Timestamp: (\d+)\s+Power: ([\d.]+)$", output, re.M)]


def received(output):
    m = re.search(r"^Received (\d+) heaps$", output, re.M)
    if not m:
        raise AssertionError("no 'Received N heaps' line")
    return int(m.group(1))


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def heaps_at_most(sent, each_power=None, every_heap=False, chunked=False):
    """The check of a tutorial receiver fed `sent` heaps of HEAP int8 samples: each
    line's timestamp a multiple of the heap (chunk) size, in order, no more heaps than
    sent (all of them when every_heap), and each power as the sender made it."""
    def check(output):
        rows = timestamps_and_powers(output)
        expect(rows, "no 'Timestamp: ... Power: ...' line")
        stamps = [t for t, _ in rows]
        expect(stamps == sorted(set(stamps)), f"timestamps out of order: {stamps}")
        expect(all(t % HEAP == 0 and t < sent * HEAP for t in stamps),
               f"timestamps not multiples of {HEAP} below {sent * HEAP}: {stamps}")
        if each_power:
            bad = [(t, p) for t, p in rows if not each_power(t // HEAP, p)]
            expect(not bad, f"powers not as sent: {bad[:4]}")
        n = received(output) if "Received" in output else len(rows)
        expect(chunked or n == len(rows), f"{n} heaps counted, {len(rows)} lines printed")
        expect(0 < n <= sent, f"{n} heaps received, {sent} sent")
        expect(not every_heap or n == sent, f"{n} heaps received, all {sent} expected")
        return f"{n}/{sent} heaps"
    return check


def ramp_power(index, power):
    """tut_4 to tut_11 send heap i filled with int8(i): its power is int8(i) squared."""
    value = (index + 128) % 256 - 128
    return abs(power - value * value) < 1e-6


def uniform_power(_, power):
    return abs(power - UNIFORM_POWER) < 0.05 * UNIFORM_POWER


def chunks(sent, streams=1):
    """The check of recv_chunk_ring/group_example fed `sent` 64 KiB heaps per stream:
    chunk ids in order, at most 64 heaps each, at least one and at most sent in all."""
    def check(output):
        rows = [(int(c), int(n), int(of)) for c, n, of in re.findall(
            r"^Received chunk (\d+) with (\d+) / (\d+) heaps$", output, re.M)]
        expect(rows, "no 'Received chunk ...' line")
        ids = [c for c, _, _ in rows]
        expect(ids == sorted(set(ids)), f"chunk ids out of order: {ids}")
        expect(all(0 <= n <= of == 64 for _, n, of in rows), f"bad chunk rows: {rows}")
        total = sum(n for _, n, _ in rows)
        expect(0 < total <= sent * streams, f"{total} heaps placed, {sent} sent")
        return f"{len(rows)} chunks, {total} heap slots of {sent} heaps x {streams} stream(s)"
    return check


def recv_example(output):
    expect(re.search(r"^Got heap \d+$", output, re.M), "no 'Got heap' line")
    expect(re.search(r"^\d+ foo \[\[0 0 0", output, re.M), "item foo's zeros not printed")
    n = int(re.search(r"^Received (\d+) heaps$", output, re.M).group(1))
    expect(n == 1, f"{n} heaps received, 1 sent")
    return "1/1 heap, item foo 40x50 zeros"


def cases(apps):
    py = [sys.executable]
    send = [os.path.join(os.path.abspath(apps), "spead_send")] if apps else None
    host = ["127.0.0.1", "8888"]
    n = "64"
    rows = [
        Case("tut_2_send -> tut_3_recv", py + ["tut_3_recv.py"], [py + ["tut_2_send.py"]],
             heaps_at_most(10, uniform_power, every_heap=True)),
        Case("tut_4_send_perf -> tut_7_recv_power", py + ["tut_7_recv_power.py"],
             [py + ["tut_4_send_perf.py", "-n", n] + host], heaps_at_most(64, ramp_power)),
        Case("tut_5_send_pipeline -> tut_7_recv_power", py + ["tut_7_recv_power.py"],
             [py + ["tut_5_send_pipeline.py", "-n", n] + host],
             heaps_at_most(64, ramp_power)),
        Case("tut_6_send_pktsize -> tut_9_recv_memory_pool",
             py + ["tut_9_recv_memory_pool.py", "8888"],
             [py + ["tut_6_send_pktsize.py", "-n", n, "-p", "9000"] + host],
             heaps_at_most(64, ramp_power)),
        Case("tut_8_send_reuse_memory -> tut_9_recv_memory_pool",
             py + ["tut_9_recv_memory_pool.py", "8888"],
             [py + ["tut_8_send_reuse_memory.py", "-n", n] + host],
             heaps_at_most(64, ramp_power)),
        Case("tut_10_send_reuse_heaps -> tut_12_recv_chunks",
             py + ["tut_12_recv_chunks.py", "8888"],
             [py + ["tut_10_send_reuse_heaps.py", "-n", n] + host],
             heaps_at_most(64, ramp_power, chunked=True)),
        Case("tut_11_send_batch_heaps -> tut_12_recv_chunks",
             py + ["tut_12_recv_chunks.py", "8888"],
             [py + ["tut_11_send_batch_heaps.py", "-n", n] + host],
             heaps_at_most(64, ramp_power, chunked=True)),
        Case("send_asyncio_example -> recv_example", py + ["recv_example.py"],
             [py + ["send_asyncio_example.py"]], recv_example),
    ]
    if send:
        spead_send = send + ["--heaps", "1000", "--heap-size", "65536", "--rate", "1"]
        rows += [
            Case("spead_send -> recv_chunk_ring_example", py + ["recv_chunk_ring_example.py"],
                 [spead_send + ["127.0.0.1:8888"]], chunks(1000)),
            Case("spead_send x2 -> recv_chunk_group_example",
                 py + ["recv_chunk_group_example.py"],
                 [spead_send + ["127.0.0.1:8888"], spead_send + ["127.0.0.1:8889"]],
                 chunks(1000, 2), ports=(8888, 8889)),
        ]
    return rows


def run_case(case, cwd, env, timeout):
    """Runs one case; returns (passed, summary line, receiver output)."""
    drops_before = udp_buffer_drops()
    receiver = subprocess.Popen(case.receiver, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + timeout
        while not all(port_bound(p) for p in case.ports):
            if receiver.poll() is not None or time.monotonic() > deadline:
                return False, "the receiver did not bind its port", receiver.communicate()[0]
            time.sleep(0.1)
        for sender in case.senders:
            done = subprocess.run(sender, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=max(1, deadline - time.monotonic()))
            if done.returncode != 0:
                receiver.kill()
                name = os.path.basename(sender[1] if sender[0] == sys.executable else sender[0])
                return (False, f"sender {name} exited with {done.returncode}: "
                        f"{done.stderr.strip()[-300:]}", receiver.communicate()[0])
        note = ""
        try:
            output = receiver.communicate(timeout=STOP_WAIT)[0]
        except subprocess.TimeoutExpired:
            # The sender's stop heap, its last packet, met a full socket buffer: UDP
            # lost it, as it may for spead2. Another one must end the receiver; but
            # only if the kernel did drop datagrams, else the receiver missed it.
            drops = udp_buffer_drops()
            if drops is not None and drops == drops_before:
                receiver.kill()
                return (False, "the receiver did not end on the stop heap, and the kernel "
                        "dropped no datagram (RcvbufErrors unchanged)",
                        receiver.communicate()[0])
            for port in case.ports:
                subprocess.run([sys.executable, "-c", SEND_STOP, str(port)], env=env,
                               check=True, timeout=60)
            note = (f" (the stop heap was lost: the kernel dropped "
                    f"{drops - drops_before if drops is not None else 'some'} datagrams for a "
                    f"full buffer; after {STOP_WAIT} s the runner's stop heap ended it)")
            try:
                output = receiver.communicate(timeout=max(1, deadline - time.monotonic()))[0]
            except subprocess.TimeoutExpired:
                receiver.kill()
                return (False, "the receiver did not end on a stop heap",
                        receiver.communicate()[0])
        if receiver.returncode != 0:
            return False, f"the receiver exited with {receiver.returncode}", output
        try:
            return True, case.check(output) + note, output
        except AssertionError as e:
            return False, str(e), output
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()


def in_namespace():
    """Re-runs this runner in a fresh network namespace with loopback up, as root."""
    if os.environ.get("GR_SPEAD_EXAMPLES_NETNS") or os.geteuid() != 0:
        return None
    env = dict(os.environ, GR_SPEAD_EXAMPLES_NETNS="1")
    command = ["unshare", "--net", "--", "/bin/sh", "-c", 'ip link set lo up && exec "$@"',
               "sh", sys.executable, *sys.argv]
    try:
        return subprocess.run(command, env=env).returncode
    except OSError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    spead2_tree.add_arguments(parser)
    parser.add_argument("--apps", help="directory of gr-spead's spead_send (the build's "
                        "apps/), for the chunk examples")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds a case may take (default 300)")
    parser.add_argument("--show", action="store_true", help="print each receiver's output")
    parser.add_argument("cases", nargs="*", help="run the cases whose names contain these")
    args = parser.parse_args()

    source = spead2_tree.source(args, RUNNER, "spead2's example and tutorial scripts")
    if source is None:
        return spead2_tree.SKIP
    missing = [m for m in ("numba", "scipy", "numpy")
               if subprocess.run([sys.executable, "-c", f"import {m}"],
                                 capture_output=True).returncode != 0]
    if missing:
        print(f"{RUNNER}: SKIP: {', '.join(missing)} missing for {sys.executable} "
              "(spead2's numba examples import them; install python3-numba python3-scipy)")
        return spead2_tree.SKIP
    status = in_namespace()
    if status is not None:
        return status

    with tempfile.TemporaryDirectory(prefix="spead2-examples-") as tmp:
        where = spead2_tree.extract(source, args.tag, ["examples"], tmp)
        print(f"{RUNNER}: spead2's examples from {where}")
        scripts = {}
        for sub in ("examples", os.path.join("examples", "tutorial")):
            for name in sorted(os.listdir(os.path.join(tmp, sub))):
                if name.endswith(".py"):
                    scripts[name] = os.path.join(tmp, sub, name)
        run_dir = os.path.join(tmp, "run")
        os.mkdir(run_dir)
        all_swaps = set()
        for name, path in scripts.items():
            with open(path, encoding="utf-8") as f:
                old = f.read()
            new, swaps = swap_imports(old)
            stray = only_imports_changed(old, new)
            if stray:
                raise SystemExit(f"{RUNNER}: {name}: lines other than imports changed: {stray}")
            all_swaps.update(swaps)
            with open(os.path.join(run_dir, name), "w", encoding="utf-8") as f:
                f.write(new)
        print(f"{RUNNER}: {len(scripts)} scripts; every change made to them:")
        for old, new in sorted(all_swaps):
            print(f"    {old:32} -> {new}")

        env = spead2_tree.python_env(args.modules)
        chosen = [c for c in cases(args.apps)
                  if not args.cases or any(k in c.name for k in args.cases)]
        used = {os.path.basename(part) for c in chosen
                for command in [c.receiver, *c.senders] for part in command
                if part.endswith(".py")}
        unused = sorted(set(scripts) - used)
        failed = passes = 0
        for case in chosen:
            started = time.monotonic()
            passed, summary, output = run_case(case, run_dir, env, args.timeout)
            failed += not passed
            passes += passed
            print(f"{'pass' if passed else 'FAIL':4}  {case.name}: {summary} "
                  f"({time.monotonic() - started:.1f} s)")
            if args.show or not passed:
                print("      " + output.strip().replace("\n", "\n      ")[-3000:])
        if not args.cases and args.apps and unused:
            print(f"{RUNNER}: scripts no case runs: {', '.join(unused)}")
            failed += 1
        if not args.apps:
            print(f"{RUNNER}: note: no --apps: the two chunk examples (fed by spead_send) "
                  "did not run")
    print(f"{RUNNER}: {passes} of {len(chosen)} cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

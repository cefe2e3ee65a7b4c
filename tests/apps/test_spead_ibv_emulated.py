#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_send --ibv, spead_recv --ibv and spead_ibv_check over the emulated NIC, as
users run them. Each test is one ctest test that runs inside a fresh namespace topology
(spead_add_emulated_nic_test): TOPO_NS_<i>, TOPO_IP_<i> name the hosts, and
LD_LIBRARY_PATH / SPEAD_EMU_NETDEVS give every program an emulated device on eth0."""

import os
import subprocess
import tempfile
import time
import unittest

from app_support import stats

APPS = os.environ["GR_SPEAD_APPS_DIR"]
HEAPS = 30


def host(n):
    return ["ip", "netns", "exec", os.environ["TOPO_NS_%d" % n]]


def ip(n):
    return os.environ["TOPO_IP_%d" % n]


def app(name):
    return os.path.join(APPS, name)


def wait_until(condition, what, proc, seconds=10):
    deadline = time.monotonic() + seconds
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise AssertionError("gave up waiting: " + what)
        time.sleep(0.05)


def udp_port_bound(n, port):
    r = subprocess.run(host(n) + ["cat", "/proc/net/udp"], capture_output=True, text=True,
                       timeout=10)
    return any(line.split()[1].endswith(":%04X" % port) for line in r.stdout.splitlines()[1:])


class background_receiver:
    """spead_recv on host 2, its output in files (its "receiving ... over ibverbs" line
    goes to stderr once the ibverbs reader is ready)."""

    def __init__(self, *args):
        self.out = tempfile.NamedTemporaryFile(mode="w+", prefix="spead_recv.")
        self.err = tempfile.NamedTemporaryFile(mode="w+", prefix="spead_recv.err.")
        # GNU Radio's logger prints the reader's info line only at level info or below.
        env = dict(os.environ, GR_CONF_LOG_LOG_LEVEL="info")
        self.proc = subprocess.Popen(host(2) + ["timeout", "40", app("spead_recv"),
                                                "--quiet", "--verify", *map(str, args)],
                                     stdout=self.out, stderr=self.err, env=env)

    def output(self):
        self.out.seek(0)
        return self.out.read()

    def log(self):
        self.err.seek(0)
        return self.err.read()

    def result(self, timeout=45):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.err.seek(0)
        return self.proc.returncode, self.output(), self.err.read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()


def send(*args):
    return subprocess.run(host(1) + [app("spead_send"), "--heaps", str(HEAPS),
                                     "--heap-size", "200000", "--packet", "8972", "--verify",
                                     "--rate", "0.5", *map(str, args)],
                          capture_output=True, text=True, timeout=40)


class ibv_transfers(unittest.TestCase):
    def receive_with_ibv(self, destination, *recv_args, send_args=()):
        rx = background_receiver("--ibv", *recv_args, destination)
        self.addCleanup(rx.close)
        wait_until(lambda: "receiving" in rx.log(), "the ibverbs reader's start-up line",
                   rx.proc)
        sent = send(*send_args, destination)
        self.assertEqual(sent.returncode, 0, sent.stdout + sent.stderr)
        code, out, err = rx.result()
        self.assertEqual(code, 0, out + err)
        return stats(sent.stdout), stats(out), err  # the log lines are on stderr

    def assert_every_heap_arrived_intact(self, sent, got):
        self.assertEqual((sent["data_heaps"], sent["packets_failed"]), (HEAPS, 0))
        self.assertEqual((got["heaps"], got["verify_heaps"], got["verify_heaps_mismatched"],
                          got["verify_elements_mismatched"]), (HEAPS, HEAPS, 0, 0))

    def test_kernel_sender_to_ibv_receiver_on_a_completion_vector(self):
        sent, got, log = self.receive_with_ibv(
            "%s:7148" % ip(2), "--bind", "eth0", "--ibv-vector", "1", "--ibv-max-poll", "3")
        self.assertIn("on emu_eth0 port 1", log)
        self.assertIn("completion vector 1", log)
        self.assert_every_heap_arrived_intact(sent, got)
        # The ibverbs reader's own counters are printed, and reconcile with the sender.
        for name in ("frames_dropped_no_buffer", "frames_not_ipv4_udp", "frames_vlan",
                     "frames_ip_options", "frames_fragmented", "frames_truncated",
                     "datagrams_oversize"):
            self.assertEqual(got[name], 0, name)
        self.assertEqual(sent["packets"], got["packets"] + got["frames_dropped_no_buffer"])

    def test_kernel_sender_to_ibv_receiver_busy_polling_a_multicast_group(self):
        sent, got, log = self.receive_with_ibv(
            "239.10.0.1:7148", "--bind", ip(2), "--ibv-vector", "-1", "--ibv-max-poll", "4",
            "--buffer", str(4 << 20), send_args=("--bind", ip(1)))
        self.assertIn("on emu_eth0 port 1", log)
        self.assertIn("busy polling", log)
        self.assert_every_heap_arrived_intact(sent, got)
        self.assertEqual(sent["packets"], got["packets"] + got["frames_dropped_no_buffer"])

    def test_ibv_sender_to_kernel_receiver(self):
        rx = background_receiver("%s:7148" % ip(2))
        self.addCleanup(rx.close)
        wait_until(lambda: udp_port_bound(2, 7148), "spead_recv's socket", rx.proc)
        r = send("--ibv", "--bind", ip(1), "--ibv-vector", "-1", "--ibv-max-poll", "2",
                 "--ttl", "4", "%s:7148" % ip(2))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        code, out, err = rx.result()
        self.assertEqual(code, 0, out + err)
        sent, got = stats(r.stdout), stats(out)
        self.assert_every_heap_arrived_intact(sent, got)
        # The stream's ibverbs counters: every packet was built in a transmit slot.
        self.assertEqual((sent["packets_copied"], sent["packets_zero_copy"]),
                         (sent["packets"], 0))
        # exact, unless the receiving socket dropped coalesced runs (1-64 datagrams each)
        singles = got["packets"] + got["packets_dropped_socket_overflow"]
        runs = got["runs_dropped_socket_overflow"]
        self.assertTrue(singles + runs <= sent["packets"] <= singles + 64 * runs,
                        (sent["packets"], singles, runs))

    def test_ibv_send_without_cap_net_raw_says_how_to_grant_it(self):
        r = subprocess.run(host(1) + ["setpriv", "--inh-caps=-net_raw", "--bounding-set=-net_raw",
                                      "--", app("spead_send"), "--ibv", "--bind", ip(1),
                                      "--heaps", "1", "%s:7148" % ip(2)],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("CAP_NET_RAW", r.stderr)
        self.assertIn("setcap cap_net_raw+ep", r.stderr)


def check(*args, prefix=()):
    return subprocess.run(host(1) + list(prefix) + [app("spead_ibv_check"), *map(str, args)],
                          capture_output=True, text=True, timeout=30)


def flat(text):
    """The report wraps long lines: compare problems and notes as one line."""
    return " ".join(text.split())


def field(stdout, name):
    for line in stdout.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep and key == name:
            return value.strip()
    raise AssertionError("no '%s:' line in\n%s" % (name, stdout))


class spead_ibv_check(unittest.TestCase):
    def test_an_emulated_device_is_usable(self):
        # As root (CAP_IPC_LOCK), so the memlock limit does not matter.
        r = check("eth0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(field(r.stdout, "name"), "eth0")
        self.assertEqual(field(r.stdout, "IPv4 address"), ip(1))
        self.assertEqual(field(r.stdout, "MTU"), "9000 bytes")
        self.assertEqual(field(r.stdout, "device"), "emu_eth0")
        self.assertEqual(field(r.stdout, "port"), "1 (active)")
        self.assertEqual(field(r.stdout, "completion vectors"), "3")  # SPEAD_EMU_COMP_VECTORS
        self.assertEqual(field(r.stdout, "flow steering"), "yes")
        self.assertEqual(field(r.stdout, "IPv4 checksum offload"), "yes")
        self.assertEqual(field(r.stdout, "max work requests/QP"), "32768")
        self.assertEqual(field(r.stdout, "CAP_NET_RAW"), "yes")
        self.assertNotIn("Problems", r.stdout)
        self.assertIn("would use ibverbs (device emu_eth0, port 1)", r.stdout)

    def test_the_address_names_the_same_interface(self):
        r = check(ip(1))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(field(r.stdout, "name"), "eth0")
        self.assertEqual(field(r.stdout, "device"), "emu_eth0")

    def test_an_interface_without_a_device_says_why_and_what_to_do(self):
        r = check("lo")  # SPEAD_EMU_NETDEVS=eth0: lo has no device
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(field(r.stdout, "device"), "none owns this interface")
        self.assertIn("no RDMA device owns interface 127.0.0.1 (lo)", flat(r.stdout))
        self.assertIn("check `ibv_devices` and `rdma link show`", flat(r.stdout))
        self.assertIn("would fall back to udp", r.stdout)

    def test_without_cap_net_raw_it_gives_the_setcap_and_setpriv_commands(self):
        r = check("eth0", prefix=["setpriv", "--inh-caps=-net_raw", "--bounding-set=-net_raw",
                                  "--"])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(field(r.stdout, "device"), "emu_eth0")
        self.assertEqual(field(r.stdout, "CAP_NET_RAW"), "no")
        problems = flat(r.stdout[r.stdout.index("Problems"):r.stdout.index("Notes")])
        self.assertIn("CAP_NET_RAW is missing", problems)
        self.assertIn("setcap cap_net_raw+ep", problems)
        self.assertIn("--ambient-caps=+net_raw", problems)
        self.assertNotIn("memlock", problems)
        self.assertIn("would fall back to udp", r.stdout)

    def test_a_memlock_limit_below_the_buffer_is_a_problem_with_its_fix(self):
        r = check("eth0", "--buffer", 4 << 20,
                  prefix=["setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock", "--",
                          "prlimit", "--memlock=1048576", "--"])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(field(r.stdout, "CAP_IPC_LOCK"), "no")
        self.assertEqual(field(r.stdout, "memlock limit"), "soft 1 MiB, hard 1 MiB; 4 MiB to pin")
        self.assertIn("memlock limit too low", flat(r.stdout))
        self.assertIn("ulimit -l unlimited", flat(r.stdout))

    def test_the_setpriv_recipe_of_the_docs_makes_an_ordinary_user_able(self):
        # docs/ibverbs.md: sudo setpriv --reuid=... --inh-caps=+net_raw
        # --ambient-caps=+net_raw, with a memlock limit that holds the buffer (only
        # lowered here: raising the hard limit may not be allowed in the test's sandbox).
        user = ["prlimit", "--memlock=4194304", "--", "setpriv", "--reuid=65534",
                "--regid=65534", "--clear-groups"]
        caps = ["--inh-caps=+net_raw", "--ambient-caps=+net_raw"]
        # The recipe passes the user's own HOME: GNU Radio's runtime reads
        # $HOME/.gnuradio as it loads, and root's is closed to the user.
        home = ["--", "env", "HOME=/tmp"]
        r = check("eth0", "--buffer", 2 << 20, prefix=user + caps + home)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual((field(r.stdout, "CAP_NET_RAW"), field(r.stdout, "CAP_IPC_LOCK")),
                         ("yes", "no"))
        # The same user without the recipe's capability is refused.
        r = check("eth0", "--buffer", 2 << 20, prefix=user + home)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(field(r.stdout, "CAP_NET_RAW"), "no")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The spead2-compatible item API: Flavour, Descriptor, Item, ItemGroup, and values of
every kind through a real UDP round trip (send.ItemGroup -> UdpStream -> recv.Stream
-> ItemGroup.update)."""

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2


SPEAD2_SCRIPT = """
import spead2
import spead2.recv
import spead2.send
import numpy as np

thread_pool = spead2.ThreadPool()
rx = spead2.recv.Stream(thread_pool, spead2.recv.StreamConfig(max_heaps=2),
                        spead2.recv.RingStreamConfig(heaps=16))
rx.add_udp_reader(PORT, bind_hostname="127.0.0.1")
tx = spead2.send.UdpStream(thread_pool, "localhost", PORT,
                           spead2.send.StreamConfig(rate=1e8))
ig = spead2.send.ItemGroup(flavour=spead2.Flavour(4, 64, 48, 0))
item = ig.add_item(0x1000, "timestamp", "", shape=(), format=[("u", 48)])
ig.add_item(0x1001, "data", "", shape=(2, 3), dtype=np.float32)
tx.send_heap(ig.get_start())
for i in range(3):
    item.value = 1000 * i
    ig["data"].value = np.full((2, 3), i, np.float32)
    tx.send_heap(ig.get_heap())
tx.send_heap(ig.get_end())

received = []
recv_ig = spead2.ItemGroup()
for heap in rx:
    if heap.is_start_of_stream():
        continue
    for name, item in recv_ig.update(heap).items():
        received.append((name, item.value.tolist() if name == "data" else item.value))
"""


class Loopback:
    """A Python receive stream on a free port and a send stream towards it."""

    def __init__(self, flavour=None, **recv_kwargs):
        self.pool = spead2.ThreadPool()
        self.rx = spead2.recv.Stream(self.pool, **recv_kwargs)
        self.port = qa.free_udp_port()
        self.rx.add_udp_reader(self.port, bind_hostname="127.0.0.1")
        self.tx = spead2.send.UdpStream(self.pool, [("127.0.0.1", self.port)],
                                        spead2.send.StreamConfig(rate=2e8))
        self.send_ig = spead2.send.ItemGroup(flavour=flavour)
        self.recv_ig = spead2.ItemGroup()

    def send_and_receive(self, **kwargs):
        """Sends the send group's heap; returns ItemGroup.update() of the received one."""
        self.tx.send_heap(self.send_ig.get_heap(**kwargs))
        return self.recv_ig.update(self.rx.get(timeout=5))

    def close(self):
        self.rx.stop()


class qa_api_items(gr_unittest.TestCase):

    def setUp(self):
        self.link = Loopback()

    def tearDown(self):
        self.link.close()

    def roundtrip(self, *args, value, **kwargs):
        """Adds an item with value to the send group, sends it, returns the received
        value."""
        item = self.link.send_ig.add_item(*args, **kwargs)
        item.value = value
        updated = self.link.send_and_receive()
        self.assertIn(item.name, updated)
        return self.link.recv_ig[item.name].value

    # ---- Flavour ------------------------------------------------------------------
    def test_flavour_defaults_are_spead2s(self):
        f = spead2.Flavour()
        self.assertEqual((f.version, f.item_pointer_bits, f.heap_address_bits,
                          f.bug_compat), (4, 64, 40, 0))
        self.assertEqual(spead2.Flavour(4, 64, 48), spead2.Flavour(heap_address_bits=48))
        self.assertNotEqual(spead2.Flavour(4, 64, 48), f)

    def test_flavour_errors_name_the_parameter(self):
        for kwargs, name in (({"version": 3}, "version"),
                             ({"item_pointer_bits": 32}, "item_pointer_bits"),
                             ({"heap_address_bits": 41}, "heap_address_bits"),
                             ({"bug_compat": 64}, "bug_compat")):
            with self.assertRaises(ValueError) as cm:
                spead2.Flavour(**kwargs)
            self.assertIn(name, str(cm.exception))

    # ---- Descriptor checks -------------------------------------------------------------
    def test_descriptor_refuses_bad_combinations_with_value_error(self):
        bad = [dict(shape=(None, None), format=[("u", 8)]),
               dict(shape=(2,), dtype=np.int32, format=[("u", 8)]),
               dict(shape=(2,)),
               dict(shape=(None,), dtype=np.int32),
               dict(shape=(2,), dtype=np.int32, order="X"),
               dict(shape=(2,), format=[("u", 8)], order="F"),
               dict(shape=(2,), format=[("f", 16)]),
               dict(shape=(2,), dtype=object)]
        for kwargs in bad:
            with self.assertRaises(ValueError, msg=str(kwargs)):
                spead2.Descriptor(0x1000, "x", "", **kwargs)

    def test_descriptor_properties(self):
        d = spead2.Descriptor(0x1000, "x", "", (None, 3), format=[("u", 4), ("i", 12)])
        self.assertEqual(d.itemsize_bits, 16)
        self.assertTrue(d.is_variable_size())
        self.assertFalse(d.allow_immediate())
        self.assertEqual(tuple(d.dynamic_shape(10)), (3, 3))
        self.assertTrue(d.compatible_shape((7, 3)))
        self.assertFalse(d.compatible_shape((7, 4)))

    # ---- numpy dtypes --------------------------------------------------------------
    def test_numpy_dtypes_of_every_kind_and_byte_order(self):
        for dtype in ("u1", ">u2", "<u4", ">i8", "<i2", ">f4", "<f8", ">c8", "<c16", "?"):
            value = (np.arange(12) % 2 if dtype == "?" else np.arange(12) * 3 - 7)
            value = value.astype(dtype)
            got = self.roundtrip(None, "v" + dtype.strip("<>"), "", (12,), dtype=dtype,
                                 value=value)
            np.testing.assert_array_equal(got, value, err_msg=dtype)
            self.assertTrue(got.dtype.isnative or got.dtype.itemsize == 1)

    def test_c_and_fortran_order(self):
        value = np.arange(12, dtype=np.int16).reshape(3, 4)
        got_c = self.roundtrip(0x1000, "c", "", (3, 4), dtype=np.int16, value=value)
        got_f = self.roundtrip(0x1001, "f", "", (3, 4), dtype=np.int16, order="F",
                               value=value)
        np.testing.assert_array_equal(got_c, value)
        np.testing.assert_array_equal(got_f, value)
        self.assertTrue(got_f.flags.f_contiguous)

    def test_zero_dimensional_values_come_back_as_scalars(self):
        got = self.roundtrip(0x1000, "x", "", (), dtype=np.float64, value=2.5)
        self.assertEqual(got, 2.5)
        self.assertEqual(np.ndim(got), 0)

    # ---- SPEAD formats ----------------------------------------------------------------
    def test_standard_formats_travel_as_numpy(self):
        cases = [([("u", 8)], [1, 255]), ([("u", 16)], [2, 65535]), ([("i", 32)], [-3, 4]),
                 ([("i", 64)], [-(1 << 62), 5]), ([("f", 32)], [0.5, -1.25]),
                 ([("f", 64)], [1e100, -2.0]), ([("b", 8)], [True, False])]
        for i, (fmt, value) in enumerate(cases):
            got = self.roundtrip(0x1000 + i, f"v{i}", "", (2,), format=fmt, value=value)
            np.testing.assert_array_equal(got, value, err_msg=str(fmt))

    def test_40_and_48_bit_integers(self):
        for i, (code, bits, value) in enumerate(
                [("u", 40, (1 << 40) - 1), ("u", 48, (1 << 47) + 3), ("i", 40, -(1 << 39)),
                 ("i", 48, -5), ("u", 40, 0)]):
            got = self.roundtrip(0x1100 + i, f"s{i}", "", (), format=[(code, bits)],
                                 value=value)
            self.assertEqual(got, value, (code, bits))

    def test_odd_width_fields_are_packed_bit_by_bit(self):
        value = [(1, -2, True), (15, 7, False), (0, -8, True)]
        got = self.roundtrip(0x1000, "packed", "", (3,),
                             format=[("u", 4), ("i", 4), ("b", 1)], value=value)
        self.assertEqual([tuple(x) for x in got.tolist()], value)
        got = self.roundtrip(0x1001, "u12", "", (None,), format=[("u", 12)],
                             value=[4095, 0, 17])
        # a variable dimension takes whole elements from the bytes received
        self.assertEqual(list(got), [4095, 0, 17])

    def test_strings_as_c8(self):
        got = self.roundtrip(0x1000, "name", "", (None,), format=[("c", 8)],
                             value="hello world")
        self.assertEqual(got, "hello world")

    def test_immediates_in_both_flavours(self):
        for bits in (40, 48):
            link = Loopback(flavour=spead2.Flavour(heap_address_bits=bits))
            try:
                item = link.send_ig.add_item(0x2000, "imm", "", (), format=[("u", bits)])
                item.value = 0x123456789A
                heap = link.send_ig.get_heap()
                link.tx.send_heap(heap)
                received = link.rx.get(timeout=5)
                raw = [r for r in received.get_items() if r.id == 0x2000][0]
                self.assertTrue(raw.is_immediate)
                self.assertEqual(raw.immediate_value, 0x123456789A)
                self.assertEqual(received.flavour.heap_address_bits, bits)
                link.recv_ig.update(received)
                self.assertEqual(link.recv_ig["imm"].value, 0x123456789A)
                small = link.send_ig.add_item(0x2001, "small", "", (), dtype=">u2")
                small.value = 513
                self.assertEqual(link.send_and_receive()["small"].value, 513)
            finally:
                link.close()

    def test_out_of_range_values_are_value_errors(self):
        item = self.link.send_ig.add_item(0x1000, "x", "", (), format=[("u", 40)])
        item.value = 1 << 40
        with self.assertRaises(ValueError) as cm:
            self.link.send_ig.get_heap()
        self.assertIn("u40", str(cm.exception))
        with self.assertRaises(ValueError):
            item.value = None

    def test_wrong_shape_is_a_value_error(self):
        item = self.link.send_ig.add_item(0x1000, "x", "", (4,), dtype=np.int32)
        item.value = np.zeros(5, np.int32)
        with self.assertRaises(ValueError) as cm:
            self.link.send_ig.get_heap()
        self.assertIn("shape", str(cm.exception))

    # ---- ItemGroup -------------------------------------------------------------------
    def test_item_group_by_name_and_id(self):
        ig = spead2.ItemGroup()
        a = ig.add_item(None, "a", "", (), dtype=np.int8)
        b = ig.add_item(None, "b", "", (), dtype=np.int8)
        self.assertEqual((a.id, b.id), (0x1000, 0x1001))
        self.assertIs(ig["a"], a)
        self.assertIs(ig[0x1001], b)
        self.assertIn("a", ig)
        self.assertIn(0x1000, ig)
        self.assertEqual(list(ig.keys()), ["a", "b"])
        self.assertEqual(sorted(ig.ids()), [0x1000, 0x1001])
        self.assertEqual(len(ig), 2)
        self.assertEqual([name for name, _ in ig.items()], ["a", "b"])

    def test_descriptor_replaced_mid_stream(self):
        first = self.roundtrip(0x1000, "x", "", (2,), dtype=np.int32, value=[1, 2])
        np.testing.assert_array_equal(first, [1, 2])
        old_version = self.link.recv_ig["x"].version
        # the sender redefines x: new shape and type, same id
        replacement = spead2.send.ItemGroup()
        replacement.add_item(0x1000, "x", "now floats", (3,), dtype=np.float32,
                             value=np.array([0.5, 1.5, 2.5], np.float32))
        self.link.tx.send_heap(replacement.get_heap())
        updated = self.link.recv_ig.update(self.link.rx.get(timeout=5))
        item = self.link.recv_ig["x"]
        self.assertEqual(item.description, "now floats")
        np.testing.assert_array_equal(updated["x"].value, [0.5, 1.5, 2.5])
        self.assertGreater(item.version, old_version)

    def test_only_changed_values_and_new_descriptors_are_sent(self):
        ig = self.link.send_ig
        ig.add_item(0x1000, "a", "", (), dtype=np.int32, value=1)
        ig.add_item(0x1001, "b", "", (), dtype=np.int32, value=2)
        self.assertEqual(set(self.link.send_and_receive()), {"a", "b"})
        ig["b"].value = 3
        self.assertEqual(set(self.link.send_and_receive()), {"b"})
        self.assertEqual(set(self.link.send_and_receive(data="all")), {"a", "b"})
        self.assertEqual(self.link.recv_ig["b"].value, 3)

    def test_descriptor_frequency_resends_descriptors(self):
        ig = spead2.send.ItemGroup(descriptor_frequency=2)
        ig.add_item(0x1000, "a", "", (), dtype=np.int32, value=1)
        counts = []
        for _ in range(5):
            self.link.tx.send_heap(ig.get_heap(data="none"))
            counts.append(len(self.link.rx.get(timeout=5).get_descriptors()))
        self.assertEqual(counts, [1, 0, 1, 0, 1])

    def test_start_and_end_heaps(self):
        self.link.tx.send_heap(self.link.send_ig.get_start())
        self.assertTrue(self.link.rx.get(timeout=5).is_start_of_stream())
        self.link.tx.send_heap(self.link.send_ig.get_end())
        with self.assertRaises(spead2.Stopped):
            self.link.rx.get(timeout=5)

    def test_descriptors_round_trip_as_raw_descriptors(self):
        self.link.send_ig.add_item(0x1234, "raw", "a description", (None, 2),
                                   format=[("u", 16)], value=np.zeros((3, 2)))
        self.link.tx.send_heap(self.link.send_ig.get_heap())
        (raw,) = self.link.rx.get(timeout=5).get_descriptors()
        self.assertEqual((raw.id, raw.name, raw.description), (0x1234, b"raw",
                                                               b"a description"))
        self.assertEqual(raw.format, [("u", 16)])
        self.assertEqual(raw.shape, [None, 2])
        self.assertEqual(raw.numpy_header, b"")

    def test_a_spead2_script_runs_with_its_import_line_changed(self):
        script = SPEAD2_SCRIPT.replace(
            "import spead2\nimport spead2.recv\nimport spead2.send\n",
            "import gnuradio.spead as spead2\nimport gnuradio.spead.recv\n"
            "import gnuradio.spead.send\n").replace("PORT", str(qa.free_udp_port()))
        self.assertNotIn("import spead2", script)
        namespace = {}
        exec(compile(script, "spead2_script", "exec"), namespace)
        self.assertEqual(sorted(namespace["received"]), sorted(
            [("timestamp", 1000 * i) for i in range(3)] +
            [("data", [[float(i)] * 3] * 2) for i in range(3)]))


if __name__ == "__main__":
    gr_unittest.run(qa_api_items)

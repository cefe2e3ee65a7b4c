#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SPEAD heaps laid out the way spead2's sender lays them out, and decoded the way
spead2's receiver decodes them, in plain Python (standard library only), so that CI,
which has no spead2, can still speak spead2's dialect.

Sender (spead2::send::heap + packet_generator, as documented in tests/vectors/README.md
and checked byte for byte against those captures by test_layout.py):
- max_packet_size is rounded down to a multiple of 8;
- every packet starts with HEAP_CNT, HEAP_SIZE, HEAP_OFFSET, PAYLOAD_LENGTH;
- then the item pointers in the order the items were added, as many per packet as fit
  with 8 payload bytes to spare; with repeat_pointers, *all* of them in every packet,
  addresses counted from 0 again each time;
- an item no wider than the flavour's immediate field (5 bytes in 64-40, 6 in 64-48)
  is an immediate, right-aligned; a descriptor item is a complete one-packet heap;
- a heap with too little payload gets a NULL pointer and zero padding, so that every
  packet carries payload.

Receiver (spead2::recv, as its spead2_recv tool prints heaps): pointers are collected
once each (repeats are harmless), NULL and the four specials are not items; a heap is
complete when HEAP_SIZE bytes arrived; its items are sorted stably by (immediate flag,
address or value); an addressed item runs to the next addressed pointer or the end;
a stop heap (STREAM_CTRL = 2) ends the stream and is not shown.
"""

import struct

HEAP_CNT, HEAP_SIZE, HEAP_OFFSET, PAYLOAD_LENGTH = 1, 2, 3, 4
DESCRIPTOR, STREAM_CTRL = 5, 6
D_NAME, D_DESCRIPTION, D_SHAPE, D_FORMAT, D_ID, D_DTYPE = 0x10, 0x11, 0x12, 0x13, 0x14, 0x15
CTRL_STREAM_STOP = 2
PREFIX = 8 + 4 * 8


class Flavour:
    """SPEAD-64-<heap_address_bits> (spead2 defaults to 40; MeerKAT uses 48)."""

    def __init__(self, heap_address_bits=40):
        if heap_address_bits % 8 or not 8 <= heap_address_bits <= 56:
            raise ValueError("heap_address_bits must be a multiple of 8 in 8..56")
        self.bits = heap_address_bits
        self.immediate_bytes = heap_address_bits // 8

    def immediate(self, item_id, value):
        return (1 << 63) | (item_id << self.bits) | value

    def address(self, item_id, address):
        return (item_id << self.bits) | address

    def header(self, n_pointers):
        return struct.pack(">BBBBHH", 0x53, 4, 8 - self.immediate_bytes,
                           self.immediate_bytes, 0, n_pointers)


def be(value, width):
    return value.to_bytes(width, "big")


def encode_descriptor(flavour, item_id, name, description, shape=(), format=(),
                      numpy_header=b""):
    """A descriptor as spead2 encodes it: a complete one-packet heap with ID (an
    immediate), NAME, DESCRIPTION, FORMAT, SHAPE and, when given, DTYPE (the numpy
    header). Format fields are (code, bits) in 9 - address bytes; shape dimensions
    1 + address bytes each (None = variable)."""
    if isinstance(name, str):
        name = name.encode("ascii")
    if isinstance(description, str):
        description = description.encode("ascii")
    if isinstance(numpy_header, str):
        numpy_header = numpy_header.encode("ascii")
    field = 9 - flavour.immediate_bytes
    dim = 1 + flavour.immediate_bytes
    fmt = b"".join(code.encode("ascii") + be(bits, field - 1) for code, bits in format)
    shp = b"".join((b"\x01" + be(0, dim - 1)) if n is None else (b"\x00" + be(n, dim - 1))
                   for n in shape)
    parts = [(D_NAME, name), (D_DESCRIPTION, description), (D_FORMAT, fmt),
             (D_SHAPE, shp)]
    if numpy_header:
        parts.append((D_DTYPE, numpy_header))
    payload = b"".join(p for _, p in parts)
    pointers = [flavour.immediate(HEAP_CNT, 1), flavour.immediate(HEAP_SIZE, len(payload)),
                flavour.immediate(HEAP_OFFSET, 0),
                flavour.immediate(PAYLOAD_LENGTH, len(payload)),
                flavour.immediate(D_ID, item_id)]
    offset = 0
    for item_id_, part in parts:
        pointers.append(flavour.address(item_id_, offset))
        offset += len(part)
    return (flavour.header(len(pointers)) + b"".join(struct.pack(">Q", p) for p in pointers)
            + payload)


def numpy_header(descr, shape, fortran_order=False):
    """The numpy header spead2's C++ tools write (keys in this order)."""
    dims = f"{shape[0]}," if len(shape) == 1 else ", ".join(str(n) for n in shape)
    return (f"{{'shape': ({dims}), 'fortran_order': {fortran_order}, "
            f"'descr': '{descr}'}}")


class Heap:
    """A heap to send, built like spead2::send::heap."""

    def __init__(self, flavour):
        self.flavour = flavour
        self.items = []   # (id, bytes or None, inline value or None, allow_immediate)
        self.repeat_pointers = False

    def add_item(self, item_id, value, allow_immediate=True):
        self.items.append((item_id, bytes(value), None, allow_immediate))

    def add_inline(self, item_id, value):
        """An immediate given as a number (spead2's is_inline items)."""
        self.items.append((item_id, None, value, True))

    def add_descriptor(self, item_id, name, description, **kwargs):
        self.add_item(DESCRIPTOR, encode_descriptor(self.flavour, item_id, name,
                                                    description, **kwargs), False)

    def add_end(self):
        self.add_inline(STREAM_CTRL, CTRL_STREAM_STOP)

    def _is_immediate(self, item):
        _, data, inline, allow = item
        return inline is not None or (allow and len(data) <= self.flavour.immediate_bytes)

    def packets(self, cnt, max_packet_size):
        """The heap's UDP payloads, in spead2's order."""
        f = self.flavour
        mps = max_packet_size & ~7
        per_packet = (mps - (PREFIX + 8)) // 8
        if per_packet < 1:
            raise ValueError("packet size is too small")
        payload_size = sum(len(d) for (_, d, _, _), imm in
                           ((it, self._is_immediate(it)) for it in self.items) if not imm)
        item_packets = len(self.items) // per_packet + 1
        if self.repeat_pointers and item_packets > 1:
            raise ValueError("packet size is too small to repeat item pointers")
        null_item = False
        if payload_size < (item_packets - 1) * 8 + 1:
            payload_size = (item_packets - 1) * 8 + 1
            null_item = True
        body = b"".join(d for it in self.items for d in [it[1]]
                        if not self._is_immediate(it))
        body += bytes(payload_size - len(body))

        out = []
        offset = 0
        next_pointer = 0
        next_address = 0
        total_pointers = len(self.items) + null_item
        while offset < payload_size:
            if self.repeat_pointers:
                next_pointer, next_address = 0, 0
            n = min(per_packet, total_pointers - next_pointer)
            length = min(payload_size - offset, mps - PREFIX - 8 * n)
            pointers = [f.immediate(HEAP_CNT, cnt), f.immediate(HEAP_SIZE, payload_size),
                        f.immediate(HEAP_OFFSET, offset), f.immediate(PAYLOAD_LENGTH, length)]
            for _ in range(n):
                if next_pointer == len(self.items):
                    pointers.append(f.address(0, next_address))
                else:
                    item = self.items[next_pointer]
                    item_id, data, inline, _ = item
                    if inline is not None:
                        pointers.append(f.immediate(item_id, inline))
                    elif self._is_immediate(item):
                        pointers.append(f.immediate(item_id, int.from_bytes(data, "big")))
                    else:
                        pointers.append(f.address(item_id, next_address))
                        next_address += len(data)
                next_pointer += 1
            out.append(f.header(len(pointers))
                       + b"".join(struct.pack(">Q", p) for p in pointers)
                       + body[offset:offset + length])
            offset += length
        return out


class MinstdRand:
    """std::minstd_rand with the default seed: the payload words of tests/vectors and
    of spead2_send/spead2_recv --verify."""

    def __init__(self, seed=1):
        self.state = seed

    def __call__(self):
        self.state = self.state * 48271 % 2147483647
        return self.state

    def discard(self, n):
        # x_n = x_0 * a^n mod m
        self.state = self.state * pow(48271, n, 2147483647) % 2147483647


def minstd_words(start, n):
    """Words start .. start + n - 1 of the default minstd_rand sequence, as a list."""
    g = MinstdRand()
    g.discard(start)
    return [g() for _ in range(n)]


# ---- receiving ---------------------------------------------------------------------

def parse_packet(data):
    """(heap_address_bits, cnt, heap_size, offset, length, [pointers], payload) or None
    for anything spead2 would reject."""
    if len(data) < 8 or data[0] != 0x53 or data[1] != 4:
        return None
    if data[2] + data[3] != 8:
        return None
    bits = data[3] * 8
    n = struct.unpack(">H", data[6:8])[0]
    if len(data) < 8 + 8 * n:
        return None
    mask = (1 << bits) - 1
    raw = list(struct.unpack(f">{n}Q", data[8:8 + 8 * n]))
    special = {}
    pointers = []
    for p in raw:
        item_id = (p >> bits) & ((1 << (63 - bits)) - 1)
        if p >> 63 and item_id in (HEAP_CNT, HEAP_SIZE, HEAP_OFFSET, PAYLOAD_LENGTH):
            special[item_id] = p & mask
        else:
            pointers.append(p)
    if HEAP_CNT not in special or HEAP_OFFSET not in special or \
            PAYLOAD_LENGTH not in special:
        return None
    payload = data[8 + 8 * n:]
    if len(payload) != special[PAYLOAD_LENGTH]:
        return None
    return (bits, special[HEAP_CNT], special.get(HEAP_SIZE), special[HEAP_OFFSET],
            special[PAYLOAD_LENGTH], pointers, payload)


class ReceivedItem:
    def __init__(self, item_id, value, immediate, immediate_value=None):
        self.id = item_id
        self.value = value
        self.immediate = immediate
        self.immediate_value = immediate_value


class ReceivedHeap:
    def __init__(self, cnt, bits, items):
        self.cnt = cnt
        self.bits = bits
        self.items = items

    def item(self, item_id):
        for it in self.items:
            if it.id == item_id:
                return it
        return None

    def is_stop(self):
        return any(it.id == STREAM_CTRL and it.immediate and
                   it.immediate_value == CTRL_STREAM_STOP for it in self.items)

    def descriptors(self):
        return [decode_descriptor(it.value) for it in self.items if it.id == DESCRIPTOR]


def decode_descriptor(packet):
    """{id, name, description, format, shape, numpy_header} of a descriptor item."""
    parsed = parse_packet(packet)
    if parsed is None:
        raise ValueError("descriptor is not a SPEAD packet")
    bits, _, _, _, _, pointers, payload = parsed
    heap = _freeze(0, bits, pointers, payload)
    d = {"id": None, "name": b"", "description": b"", "format": [], "shape": [],
         "numpy_header": b""}
    field = 9 - bits // 8
    dim = 1 + bits // 8
    for it in heap.items:
        if it.id == D_ID:
            d["id"] = it.immediate_value if it.immediate else int.from_bytes(it.value, "big")
        elif it.id == D_NAME:
            d["name"] = it.value
        elif it.id == D_DESCRIPTION:
            d["description"] = it.value
        elif it.id == D_DTYPE:
            d["numpy_header"] = it.value
        elif it.id == D_FORMAT:
            v = it.value
            d["format"] = [(chr(v[i]), int.from_bytes(v[i + 1:i + field], "big"))
                           for i in range(0, len(v) - field + 1, field)]
        elif it.id == D_SHAPE:
            v = it.value
            d["shape"] = [None if v[i] & 3 else int.from_bytes(v[i + 1:i + dim], "big")
                          for i in range(0, len(v) - dim + 1, dim)]
    return d


def _freeze(cnt, bits, pointers, payload):
    mask = (1 << bits) - 1
    sort_mask = (1 << 63) | mask
    pointers = sorted(pointers, key=lambda p: p & sort_mask)  # stable, like spead2
    items = []
    for i, p in enumerate(pointers):
        item_id = (p >> bits) & ((1 << (63 - bits)) - 1)
        if item_id == 0:
            continue
        if p >> 63:
            v = p & mask
            items.append(ReceivedItem(item_id, be(v, bits // 8), True, v))
            continue
        start = p & mask
        end = len(payload)
        if i + 1 < len(pointers) and not pointers[i + 1] >> 63:
            end = pointers[i + 1] & mask
        if start == end:
            continue
        items.append(ReceivedItem(item_id, payload[start:end], False))
    return ReceivedHeap(cnt, bits, items)


class Receiver:
    """Assembles heaps from UDP payloads as spead2's stream does (complete heaps only;
    a stop heap ends it). .heaps: complete heaps in completion order; .stopped."""

    def __init__(self):
        self.live = {}
        self.heaps = []
        self.stopped = False
        self.rejected = 0

    @staticmethod
    def timestamp_of(data, item_id):
        """The value of immediate item_id in one packet, or None."""
        parsed = parse_packet(data)
        if parsed is None:
            return None
        bits = parsed[0]
        for p in parsed[5]:
            if p >> 63 and (p >> bits) & ((1 << (63 - bits)) - 1) == item_id:
                return p & ((1 << bits) - 1)
        return None

    def add(self, data):
        if self.stopped:
            return
        parsed = parse_packet(data)
        if parsed is None:
            self.rejected += 1
            return
        bits, cnt, size, offset, length, pointers, payload = parsed
        h = self.live.setdefault(cnt, {"bits": bits, "size": size, "pointers": [],
                                       "seen": set(), "payload": {}, "received": 0})
        for p in pointers:
            if p not in h["seen"]:
                h["seen"].add(p)
                h["pointers"].append(p)
        if offset in h["payload"]:
            return
        h["payload"][offset] = payload
        h["received"] += length
        if h["size"] is not None and h["received"] >= h["size"]:
            del self.live[cnt]
            body = bytearray(h["size"])
            for o, part in h["payload"].items():
                body[o:o + len(part)] = part
            heap = _freeze(cnt, h["bits"], h["pointers"], bytes(body))
            if heap.is_stop():
                self.stopped = True
                return
            self.heaps.append(heap)


def render_like_spead2_recv(heaps):
    """What `spead2_recv --descriptors` prints for these heaps (without the " at T"
    time of each heap line, and without the statistics), one string."""
    out = []
    for h in heaps:
        out.append(f"Received heap {h.cnt}")
        for d in h.descriptors():
            fmt = ", ".join(f"({c}, {b})" for c, b in d["format"])
            shape = ", ".join("?" if n is None else str(n) for n in d["shape"])
            out.append(f"Descriptor for {d['name'].decode('ascii')} ({d['id']:#x})")
            out.append(f"  description: {d['description'].decode('ascii')}")
            out.append(f"  format:      [{fmt}]")
            out.append(f"  dtype:       {d['numpy_header'].decode('ascii')}")
            out.append(f"  shape:       ({shape})")
        for it in h.items:
            line = f"{it.id:#x} = [{len(it.value)} bytes]"
            if it.immediate:
                line += f" = {it.immediate_value:#x}" if it.immediate_value else " = 0"
            out.append(line)
    out.append(f"Received {len(heaps)} heaps")
    return "\n".join(out) + "\n"


def spead2_recv_heap_text(text):
    """The heap part of a spead2_recv printout (up to "Received N heaps"), with the
    " at T" times removed, comparable with render_like_spead2_recv()."""
    out = []
    for line in text.splitlines():
        if line.startswith("Received heap "):
            line = " ".join(line.split()[:3])
        out.append(line)
        if line.startswith("Received ") and line.endswith(" heaps"):
            break
    return "\n".join(out) + "\n"


# ---- captures ----------------------------------------------------------------------

def read_pcap(path):
    """[(destination port, UDP payload)] of a classic little-endian Ethernet capture."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        raise ValueError(f"{path}: not a little-endian classic pcap file")
    linktype = struct.unpack("<I", data[20:24])[0]
    off = 24
    out = []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        off += 16
        frame = data[off:off + incl]
        off += incl
        ip = frame[14:] if linktype == 1 else frame
        ihl = (ip[0] & 15) * 4
        udp = ip[ihl:]
        total = struct.unpack(">H", ip[2:4])[0]
        out.append((struct.unpack(">H", udp[2:4])[0], udp[8:total - ihl]))
    return out

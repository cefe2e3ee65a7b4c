#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Send SPEAD heaps from a script, as spead2.send does (see docs/python.md).

    import gnuradio.spead as spead2
    import gnuradio.spead.send

    stream = spead2.send.UdpStream(spead2.ThreadPool(), [("127.0.0.1", 7148)],
                                   spead2.send.StreamConfig(rate=1e9))
    ig = spead2.send.ItemGroup()
    ig.add_item(0x1000, "samples", "", (1024,), dtype=np.int16)
    ig["samples"].value = data
    stream.send_heap(ig.get_heap())
    stream.send_heap(ig.get_end())

Numpy values are sent from their own memory (no copy); over ibverbs, arrays inside
a registered memory region go out without even the copy into the NIC's ring.

The configs are the C++ ones, bound with spead2's keyword constructors and
properties: their setters are the only rules, and a bad value is a ValueError with
the C++ message (a value of the wrong type a TypeError naming the field).
"""

from ..spead_python import _send
from ._heaps import (GroupMode, Heap, HeapGenerator, HeapReference,  # noqa: F401
                     HeapReferenceList, ItemGroup)
from ._streams import (BytesStream, InprocStream, RdmaStream, TcpStream,  # noqa: F401
                       UdpIbvStream, UdpStream)

# The configs (api_send_config.cc)
StreamConfig = _send.StreamConfig
RateMethod = _send.RateMethod
UdpConfig = _send.UdpConfig
UdpIbvConfig = _send.UdpIbvConfig
TcpConfig = _send.TcpConfig
RdmaConfig = _send.RdmaConfig

PacketGenerator = _send.PacketGenerator


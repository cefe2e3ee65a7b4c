#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Descriptors, items and item groups, as spead2 defines them for Python.

A value travels either as numpy data (a numpy dtype, or a SPEAD format whose fields
all have numpy equivalents: u/i 8-64, f32/f64, b8, c8) or, for any other SPEAD
format (u40, i12, several odd-sized fields...), bit by bit, big-endian, fields packed
without padding. Numpy values received from a heap are views of the heap's memory
whenever the byte order allows (no copy); the heap lives as long as a view does.
"""

import ast
import logging
import numbers

import numpy as np

_logger = logging.getLogger(__name__)

#: First id ItemGroup.add_item(None, ...) hands out (ids below are SPEAD's).
FIRST_FREE_ID = 0x1000
#: Ids up to STREAM_CTRL (0x06) are the protocol's own, never items of a group.
_LAST_SPECIAL_ID = 0x06
_BUG_COMPAT_SWAP_ENDIAN = 4

# How Item moves values to and from bytes.
_NUMPY = "numpy"          # a numpy dtype describes the bytes (zero-copy possible)
_SMALL_INTEGER = "int"    # a scalar u/i field narrower than 64 bits, often immediate
_BITS = "bits"            # anything else: fields packed bit by bit


def parse_range_list(ranges):
    """'2,3-5,8' -> [2, 3, 4, 5, 8] (as spead2.parse_range_list, for affinity options)."""
    out = []
    for part in filter(None, (ranges or "").split(",")):
        first, sep, last = part.partition("-")
        out.extend(range(int(first), int(last) + 1) if sep else [int(first)])
    return out


def _elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _format_dtype(format):
    """The numpy dtype a SPEAD format maps to; 'O' fields for those numpy lacks."""
    if not format:
        raise ValueError("format: empty; give at least one (code, bits) field, "
                         "e.g. [('u', 32)]")
    fields = []
    for field in format:
        try:
            code, bits = field
        except (TypeError, ValueError):
            raise ValueError(f"format: {field!r} is not a field; give (code, bits), "
                             "e.g. ('u', 32)") from None
        if bits <= 0:
            raise ValueError(f"format: field ({code!r}, {bits}) has no bits "
                             "(a bug_compat mismatch with the sender?); give bits >= 1")
        if code in ("u", "i") and bits in (8, 16, 32, 64):
            fields.append(f">{code}{bits // 8}")
        elif code == "f" and bits in (32, 64):
            fields.append(f">f{bits // 8}")
        elif code == "b" and bits == 8:
            fields.append("?")
        elif code == "c" and bits == 8:
            fields.append("S1")
        elif code in ("u", "i", "b", "c") or (code == "f" and bits in (32, 64)):
            fields.append("O")
        else:
            raise ValueError(f"format: field ({code!r}, {bits}) is not supported; "
                             "use u, i, b or c with any width, or f with 32 or 64 bits")
    return np.dtype(",".join(fields))


class Descriptor:
    """What an item is: id, name, description, shape and type (as spead2.Descriptor).

    The type is a numpy ``dtype`` (with ``order`` 'C' or 'F') or a SPEAD ``format``,
    a list of (code, bits) fields with codes u, i, f, b, c. One entry of ``shape`` may
    be None (a variable dimension, format only). Bad combinations raise ValueError.
    """

    def __init__(self, id, name, description, shape, dtype=None, order="C", format=None):
        shape = tuple(shape)
        variable = sum(d is None for d in shape)
        if variable > 1:
            raise ValueError(f"shape: {shape} has {variable} variable (None) dimensions; "
                             "at most one may be None")
        if any(d is not None and (not isinstance(d, numbers.Integral) or d < 0)
               for d in shape):
            raise ValueError(f"shape: {shape} has a dimension that is not a size; "
                             "give integers >= 0 (or one None)")
        if order not in ("C", "F"):
            raise ValueError(f"order: {order!r} is not 'C' (row-major) or 'F' "
                             "(column-major)")
        if dtype is not None:
            if format is not None:
                raise ValueError("dtype and format: both given; describe the type "
                                 "with one of them")
            dtype = np.dtype(dtype)
            if dtype.hasobject:
                raise ValueError(f"dtype: {dtype} holds Python objects, which have no "
                                 "bytes to send; give a numeric or fixed-size dtype")
            if dtype.itemsize == 0:
                raise ValueError(f"dtype: {dtype} has no size; give a fixed-size dtype")
            if variable:
                raise ValueError(f"shape: {shape} has a variable dimension, which a "
                                 "numpy dtype cannot describe; use format instead")
            self._internal_dtype = dtype
        else:
            if format is None:
                raise ValueError("dtype and format: neither given; describe the type "
                                 "with a numpy dtype or a SPEAD format")
            if order != "C":
                raise ValueError(f"order: {order!r} with a SPEAD format; formats are "
                                 "always 'C' order")
            format = [(code, bits) for code, bits in format]
            self._internal_dtype = _format_dtype(format)
        self.id = id
        self.name = name
        self.description = description
        self.shape = shape
        self.dtype = dtype
        self.order = order
        self.format = format
        if not self._internal_dtype.hasobject:
            self._codec = _NUMPY
        elif (dtype is None and not shape and len(format) == 1
              and format[0][0] in ("u", "i") and format[0][1] < 64):
            self._codec = _SMALL_INTEGER
        else:
            self._codec = _BITS

    def __repr__(self):
        kind = f"dtype={self.dtype!s}" if self.dtype is not None else f"format={self.format}"
        return (f"{type(self).__name__}({self.id:#x}, {self.name!r}, shape={self.shape}, "
                f"{kind}, order={self.order!r})")

    @property
    def itemsize_bits(self):
        """Bits per element."""
        if self.dtype is not None:
            return self.dtype.itemsize * 8
        return sum(bits for _, bits in self.format)

    def is_variable_size(self):
        """True when a dimension is None."""
        return None in self.shape

    def allow_immediate(self):
        """Whether a value small enough may travel as an immediate: fixed size, and a
        whole number of bytes per element (where padding goes is not specified)."""
        return not self.is_variable_size() and (
            self.dtype is not None or self.itemsize_bits % 8 == 0)

    def dynamic_shape(self, max_elements):
        """The shape with its variable dimension filled in for max_elements."""
        if None not in self.shape:
            return self.shape
        known = _elements(d for d in self.shape if d is not None)
        fill = 0 if known == 0 else max_elements // known
        return tuple(fill if d is None else d for d in self.shape)

    def compatible_shape(self, shape):
        """Whether shape matches, a None dimension matching any size."""
        return len(shape) == len(self.shape) and all(
            want is None or want == got for want, got in zip(self.shape, shape))

    @staticmethod
    def _parse_numpy_header(header):
        try:
            fields = ast.literal_eval(header)
        except (SyntaxError, ValueError) as e:
            raise ValueError(f"numpy_header: {header!r} cannot be parsed ({e})") from e
        if not isinstance(fields, dict) or sorted(fields) != ["descr", "fortran_order",
                                                              "shape"]:
            raise ValueError(f"numpy_header: {header!r} is not a dict of descr, "
                             "fortran_order and shape")
        shape = fields["shape"]
        if not isinstance(shape, tuple) or not all(
                isinstance(d, numbers.Integral) and d >= 0 for d in shape):
            raise ValueError(f"numpy_header: shape {shape!r} is not a tuple of sizes")
        if not isinstance(fields["fortran_order"], bool):
            raise ValueError(f"numpy_header: fortran_order {fields['fortran_order']!r} "
                             "is not True or False")
        try:
            dtype = np.dtype(fields["descr"])
        except TypeError as e:
            raise ValueError(f"numpy_header: descr {fields['descr']!r} is not a numpy "
                             "dtype") from e
        return shape, ("F" if fields["fortran_order"] else "C"), dtype

    @staticmethod
    def _make_numpy_header(shape, dtype, order):
        return repr({"descr": np.lib.format.dtype_to_descr(dtype),
                     "fortran_order": order == "F",
                     "shape": tuple(shape)})

    @classmethod
    def from_raw(cls, raw_descriptor, flavour):
        """A Descriptor from a received RawDescriptor (heap.get_descriptors())."""
        if raw_descriptor.numpy_header:
            shape, order, dtype = cls._parse_numpy_header(
                raw_descriptor.numpy_header.decode("ascii"))
            if flavour.bug_compat & _BUG_COMPAT_SWAP_ENDIAN:
                dtype = dtype.newbyteorder()
            format = None
        else:
            shape, order, dtype = raw_descriptor.shape, "C", None
            format = raw_descriptor.format
        return cls(raw_descriptor.id, raw_descriptor.name.decode("ascii"),
                   raw_descriptor.description.decode("ascii"), shape, dtype, order, format)

    def to_raw(self, flavour):
        """The RawDescriptor that carries this descriptor in flavour."""
        from .spead_python import RawDescriptor
        raw = RawDescriptor()
        raw.id = self.id
        raw.name = self.name.encode("ascii")
        raw.description = self.description.encode("ascii")
        raw.shape = list(self.shape)
        if self.dtype is not None:
            dtype = self.dtype
            if flavour.bug_compat & _BUG_COMPAT_SWAP_ENDIAN:
                dtype = dtype.newbyteorder()
            raw.numpy_header = self._make_numpy_header(self.shape, dtype,
                                                       self.order).encode("ascii")
        else:
            raw.format = self.format
        return raw


def _signed(value, bits):
    return value - (1 << bits) if value >> (bits - 1) else value


def _unpack_bits(data, format, count):
    """count elements of format from the start of data (big-endian bit stream)."""
    total = int.from_bytes(data, "big")
    remaining = len(data) * 8
    out = []
    for _ in range(count):
        element = []
        for code, bits in format:
            remaining -= bits
            raw = (total >> remaining) & ((1 << bits) - 1)
            if code == "u":
                element.append(raw)
            elif code == "i":
                element.append(_signed(raw, bits))
            elif code == "b":
                element.append(bool(raw))
            elif code == "c":
                element.append(bytes([raw]) if raw < 256 else chr(raw))
            elif bits == 32:
                element.append(np.uint32(raw).view(np.float32))
            else:
                element.append(np.uint64(raw).view(np.float64))
        out.append(element[0] if len(element) == 1 else tuple(element))
    return out


def _pack_bits(elements, format):
    """Bytes for a flat list of elements of format, padded with zero bits at the end."""
    total = 0
    nbits = 0
    for element in elements:
        fields = (element,) if len(format) == 1 else tuple(element)
        for (code, bits), field in zip(format, fields):
            if code == "u":
                raw = int(field)
                if not 0 <= raw < (1 << bits):
                    raise ValueError(f"value: {raw} does not fit u{bits}; give 0 to "
                                     f"{(1 << bits) - 1}")
            elif code == "i":
                raw = int(field)
                if not -(1 << (bits - 1)) <= raw < (1 << (bits - 1)):
                    raise ValueError(f"value: {raw} does not fit i{bits}; give "
                                     f"{-(1 << (bits - 1))} to {(1 << (bits - 1)) - 1}")
                raw &= (1 << bits) - 1
            elif code == "b":
                raw = 1 if field else 0
            elif code == "c":
                raw = field[0] if isinstance(field, (bytes, np.bytes_)) else ord(field)
            elif bits == 32:
                raw = int(np.float32(field).view(np.uint32))
            else:
                raw = int(np.float64(field).view(np.uint64))
            total = (total << bits) | raw
            nbits += bits
    pad = -nbits % 8
    return bytearray((total << pad).to_bytes((nbits + pad) // 8, "big"))


class Item(Descriptor):
    """A descriptor with a value and a version (as spead2.Item).

    Assigning ``value`` raises the version, which is how send.ItemGroup knows what to
    send again; in-place changes to an array are not seen (reassign the value, or
    increase ``version``).
    """

    def __init__(self, *args, value=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._value = value
        self.version = 1

    @property
    def value(self):
        """The current value (numpy array, numpy scalar, int, str, ... or None)."""
        return self._value

    @value.setter
    def value(self, new_value):
        if new_value is None:
            raise ValueError(f"value: None for item {self.name!r}; SPEAD cannot send "
                             "a missing value")
        self._value = new_value
        self.version += 1

    def set_from_raw(self, raw_item, new_order="="):
        """Decodes a received item (a heap's RawItem) into value. Numpy values are views
        of the heap when no byte swap is needed (new_order '|' never swaps)."""
        raw = np.frombuffer(raw_item, dtype=np.uint8)
        if self._codec == _NUMPY:
            dtype = self._internal_dtype
            have = raw.size // dtype.itemsize
            shape = self.dynamic_shape(have)
            size = _elements(shape) * dtype.itemsize
            if size > raw.size:
                raise ValueError(f"item {self.name!r}: {raw.size} bytes received, shape "
                                 f"{tuple(shape)} of {dtype} needs {size}")
            # immediates are right-aligned, addressed items start at their address
            raw = raw[raw.size - size:] if raw_item.is_immediate else raw[:size]
            array = raw.view(dtype)
            if new_order != "|":
                array = array.astype(dtype.newbyteorder(new_order), copy=False)
            value = array.reshape(shape, order=self.order)
        elif (self._codec == _SMALL_INTEGER and raw_item.is_immediate
              and raw.size * 8 == self.format[0][1]):
            value = raw_item.immediate_value
            if self.format[0][0] == "i":
                value = _signed(value, self.format[0][1])
        else:
            bits = self.itemsize_bits
            have = raw.size * 8 // bits
            shape = self.dynamic_shape(have)
            count = _elements(shape)
            if count > have:
                raise ValueError(f"item {self.name!r}: {raw.size} bytes received, shape "
                                 f"{tuple(shape)} of {bits}-bit elements needs "
                                 f"{(count * bits + 7) // 8}")
            if raw_item.is_immediate:
                raw = raw[raw.size - (count * bits + 7) // 8:]
            flat = _unpack_bits(raw.tobytes(), self.format, count)
            if not self.shape:
                value = flat[0]
            else:
                value = np.empty(count, dtype=self._internal_dtype)
                value[:] = flat
                value = value.reshape(shape)
        if not self.shape and isinstance(value, np.ndarray):
            value = value[()]
        elif len(self.shape) == 1 and self.format == [("c", 8)]:
            value = value.tobytes().decode("ascii")
        self.value = value

    def _as_array(self):
        value = self._value
        if value is None:
            raise ValueError(f"value: item {self.name!r} has no value to send")
        if isinstance(value, str) and len(self.shape) == 1:
            value = value.encode("ascii")
        if isinstance(value, bytes) and len(self.shape) == 1:
            value = np.frombuffer(value, dtype="S1")
        array = np.asarray(value, dtype=self._internal_dtype, order=self.order)
        if not self.compatible_shape(array.shape):
            raise ValueError(f"value: item {self.name!r} has shape {array.shape}, its "
                             f"descriptor says {self.shape}")
        return array

    def to_buffer(self):
        """The value's bytes as a buffer: the numpy array itself when it already has
        the right dtype and order (sent without a copy), otherwise new bytes."""
        if self._codec == _SMALL_INTEGER and self.itemsize_bits % 8 == 0:
            code, bits = self.format[0]
            if isinstance(self._value, np.ndarray) and self._value.shape == () and \
                    self._value.dtype == np.dtype(">u8"):
                # spead2's immediate path: the low bytes of the caller's big-endian
                # 0-d array itself, so updating it in place reaches the next send
                return self._value[np.newaxis].view(np.uint8)[-(bits // 8):]
            number = int(self._value) if self._value is not None else self._as_array()
            if code == "u" and not 0 <= number < (1 << bits):
                raise ValueError(f"value: {number} does not fit u{bits} (item "
                                 f"{self.name!r}); give 0 to {(1 << bits) - 1}")
            if code == "i" and not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
                raise ValueError(f"value: {number} does not fit i{bits} (item "
                                 f"{self.name!r})")
            return (number & ((1 << bits) - 1)).to_bytes(bits // 8, "big")
        array = self._as_array()
        if array.dtype.hasobject:
            return _pack_bits(array.reshape(-1).tolist(), self.format)
        # A Fortran-ordered array is C-contiguous once transposed: same bytes.
        return array.T if self.order == "F" else array


class ItemGroup:
    """Items by name and by id (as spead2.ItemGroup).

    A descriptor identical to a known one keeps the item (and takes the value given
    with it); a different one under the same name or id replaces the item(s), and the
    replacement's version is above theirs so a version check notices.
    """

    def __init__(self):
        self._by_id = {}
        self._by_name = {}

    def _same_descriptor(self, a, b):
        return (a.name == b.name and a.description == b.description and a.shape == b.shape
                and a.dtype == b.dtype and a.order == b.order and a.format == b.format)

    def _add_item(self, item):
        old_by_id = self._by_id.get(item.id)
        old_by_name = self._by_name.get(item.name)
        if old_by_id is not None and self._same_descriptor(old_by_id, item):
            if item.value is not None:
                old_by_id.value = item.value
            return old_by_id
        replaced = [old for old in (old_by_id, old_by_name) if old is not None]
        if replaced:
            _logger.info("descriptor of %#x (%s) replaces an earlier one", item.id, item.name)
        for old in replaced:
            item.version = max(item.version, old.version + 1)
            self._by_id.pop(old.id, None)
            self._by_name.pop(old.name, None)
        self._by_id[item.id] = item
        self._by_name[item.name] = item
        return item

    def add_item(self, *args, **kwargs):
        """Adds an Item made from the arguments; id None takes the first free id from
        0x1000. Returns the item in the group."""
        item = Item(*args, **kwargs)
        if item.id is None:
            item.id = FIRST_FREE_ID
            while item.id in self._by_id:
                item.id += 1
        return self._add_item(item)

    def __getitem__(self, key):
        if isinstance(key, numbers.Integral):
            return self._by_id[key]
        return self._by_name[key]

    def __contains__(self, key):
        if isinstance(key, numbers.Integral):
            return key in self._by_id
        return key in self._by_name

    def keys(self):
        """Item names."""
        return self._by_name.keys()

    def ids(self):
        """Item ids."""
        return self._by_id.keys()

    def values(self):
        """The items."""
        return self._by_name.values()

    def items(self):
        """(name, item) pairs."""
        return self._by_name.items()

    def __len__(self):
        return len(self._by_name)

    def update(self, heap, new_order="="):
        """Takes the descriptors and values of a received heap; returns the items it
        updated, by name. Values of unknown ids are logged and skipped."""
        for raw in heap.get_descriptors():
            self._add_item(Item.from_raw(raw, flavour=heap.flavour))
        updated = {}
        for raw_item in heap.get_items():
            if raw_item.id <= _LAST_SPECIAL_ID:
                continue
            item = self._by_id.get(raw_item.id)
            if item is None:
                _logger.warning("item %#x received without a descriptor: skipped",
                                raw_item.id)
                continue
            item.set_from_raw(raw_item, new_order=new_order)
            updated[item.name] = item
        return updated

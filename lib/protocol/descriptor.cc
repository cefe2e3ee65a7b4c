/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "endian.h"
#include "item_pointer.h"
#include "packet_decoder.h"
#include "packetiser.h"
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/item_ids.h>
#include <array>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/* Field widths of the FORMAT and SHAPE items. spead2 sizes them from the flavour;
 * PySPEAD 0.5.2 always used 4 and 8 bytes (spead2's BUG_COMPAT_DESCRIPTOR_WIDTHS). */
std::size_t format_field_width(int address_bytes, bool pyspead_widths)
{
    return pyspead_widths ? 4 : std::size_t(9 - address_bytes);
}

std::size_t shape_field_width(int address_bytes, bool pyspead_widths)
{
    return pyspead_widths ? 8 : std::size_t(1 + address_bytes);
}

/* Largest number that fits in \p bytes (1..7) big-endian bytes. */
std::uint64_t max_for_bytes(std::size_t bytes)
{
    return (std::uint64_t(1) << (8 * bytes)) - 1;
}

/* Shape flag byte: bit 0 marks a variable dimension (spead2); PySPEAD set bit 1. */
constexpr std::uint8_t shape_flag_variable = 1;
constexpr std::uint8_t shape_flag_variable_pyspead = 2;

/* A descriptor heap holds about ten item pointers; a cap keeps decoding
 * allocation-free and linear-time under hostile input. */
constexpr std::size_t max_descriptor_item_pointers = 64;

using send::item_pointer_size;
using send::packet_header_size;

} // namespace

std::vector<std::uint8_t> encode_descriptor(const descriptor& d, const flavour& f)
{
    const int address_bytes = f.heap_address_bytes();
    const bool pyspead = f.pyspead_descriptor_widths();
    const std::size_t format_width = format_field_width(address_bytes, pyspead);
    const std::size_t shape_width = shape_field_width(address_bytes, pyspead);

    if (d.id == 0 || d.id > f.max_item_id())
        throw std::invalid_argument("encode_descriptor: item id " + std::to_string(d.id) +
                                    " of '" + d.name + "' cannot be described in " +
                                    f.name() + "; use an id from 1 to " +
                                    std::to_string(f.max_item_id()));
    const std::uint64_t max_bits = max_for_bytes(format_width - 1);
    for (const auto& field : d.format) {
        if (field.second < 0 || std::uint64_t(field.second) > max_bits)
            throw std::invalid_argument(
                "encode_descriptor: format field ('" + std::string(1, field.first) +
                "', " + std::to_string(field.second) + ") of '" + d.name +
                "' does not fit the " + std::to_string(format_width - 1) +
                "-byte bit count of " + f.name() + "; use 0 to " +
                std::to_string(max_bits) + " bits");
    }
    const std::uint64_t max_dimension = max_for_bytes(shape_width - 1);
    for (const std::int64_t dimension : d.shape) {
        if (dimension < -1 ||
            (dimension >= 0 && std::uint64_t(dimension) > max_dimension))
            throw std::invalid_argument(
                "encode_descriptor: shape dimension " + std::to_string(dimension) +
                " of '" + d.name + "' does not fit " + f.name() + "; use 0 to " +
                std::to_string(max_dimension) + ", or -1 for a variable dimension");
    }

    const std::size_t format_bytes = format_width * d.format.size();
    const std::size_t shape_bytes = shape_width * d.shape.size();
    const std::size_t payload_size = d.name.size() + d.description.size() + format_bytes +
                                     shape_bytes + d.numpy_header.size();
    if (payload_size > f.max_address())
        throw std::invalid_argument("encode_descriptor: descriptor of '" + d.name +
                                    "' is " + std::to_string(payload_size) +
                                    " bytes, more than a heap of " + f.name() +
                                    " can address; use a wider flavour");

    const bool has_dtype = !d.numpy_header.empty();
    const std::size_t n_pointers = 4 + 5 + (has_dtype ? 1 : 0);
    const std::size_t header_size = packet_header_size + item_pointer_size * n_pointers;
    std::vector<std::uint8_t> out(header_size + payload_size);
    std::uint8_t* p = out.data();

    send::write_packet_header(p, address_bytes, n_pointers);
    p += packet_header_size;

    const item_pointer_codec codec(f.heap_address_bits());
    auto put_pointer = [&p](std::uint64_t pointer) {
        store_be64(p, pointer);
        p += item_pointer_size;
    };
    // The descriptor is a complete one-packet heap, as spead2 writes it.
    put_pointer(codec.encode_immediate(item_id::heap_cnt, 1));
    put_pointer(codec.encode_immediate(item_id::heap_size, payload_size));
    put_pointer(codec.encode_immediate(item_id::heap_offset, 0));
    put_pointer(codec.encode_immediate(item_id::payload_length, payload_size));
    put_pointer(codec.encode_immediate(item_id::descriptor_id, d.id));
    std::uint64_t address = 0;
    put_pointer(codec.encode_address(item_id::descriptor_name, address));
    address += d.name.size();
    put_pointer(codec.encode_address(item_id::descriptor_description, address));
    address += d.description.size();
    put_pointer(codec.encode_address(item_id::descriptor_format, address));
    address += format_bytes;
    put_pointer(codec.encode_address(item_id::descriptor_shape, address));
    address += shape_bytes;
    if (has_dtype)
        put_pointer(codec.encode_address(item_id::descriptor_dtype, address));

    std::memcpy(p, d.name.data(), d.name.size());
    p += d.name.size();
    std::memcpy(p, d.description.data(), d.description.size());
    p += d.description.size();
    for (const auto& field : d.format) {
        p[0] = std::uint8_t(field.first);
        store_be_bytes(p + 1, int(format_width - 1), std::uint64_t(field.second));
        p += format_width;
    }
    // PySPEAD marked variable dimensions with 2; a PySPEAD peer expects that.
    const std::uint8_t variable_flag =
        f.shape_bit_1() ? shape_flag_variable_pyspead : shape_flag_variable;
    for (const std::int64_t dimension : d.shape) {
        const bool variable = dimension < 0;
        p[0] = variable ? variable_flag : 0;
        store_be_bytes(
            p + 1, int(shape_width - 1), variable ? 0 : std::uint64_t(dimension));
        p += shape_width;
    }
    std::memcpy(p, d.numpy_header.data(), d.numpy_header.size());
    return out;
}

std::optional<descriptor>
decode_descriptor(const std::uint8_t* data, std::size_t size, bool pyspead_widths)
{
    if (data == nullptr)
        return std::nullopt;
    packet_header packet;
    if (decode_packet(data, size, packet) != decode_result::ok)
        return std::nullopt;
    // Only a complete one-packet heap is a descriptor.
    if (packet.payload_offset != 0)
        return std::nullopt;
    if (packet.has_heap_size && packet.heap_size != packet.payload_length)
        return std::nullopt;
    if (packet.n_item_pointers > max_descriptor_item_pointers)
        return std::nullopt;

    struct addressed_item {
        std::uint64_t id;
        std::uint64_t address;
        std::uint64_t length;
    };
    std::array<addressed_item, max_descriptor_item_pointers> addressed;
    std::size_t n_addressed = 0;
    const item_pointer_codec codec(packet.heap_address_bits);
    const std::uint64_t payload_length = packet.payload_length;

    descriptor out;
    bool have_id = false;
    for (std::size_t i = 0; i < packet.n_pointers; i++) {
        const std::uint64_t pointer = load_be64(packet.pointers + item_pointer_size * i);
        const std::uint64_t id = codec.id(pointer);
        if (item_id::is_packet_special(id))
            continue;
        const std::uint64_t value = codec.value(pointer);
        if (item_pointer_codec::is_immediate(pointer)) {
            if (id == item_id::descriptor_id) {
                if (have_id)
                    return std::nullopt;
                have_id = true;
                out.id = value;
            } else if (id >= item_id::descriptor_name &&
                       id <= item_id::descriptor_dtype) {
                return std::nullopt; // string and list fields are always addressed
            }
            continue;
        }
        if (value > payload_length)
            return std::nullopt;
        /* Insertion sort by address, stable so that zero-length items at one address
         * (an empty FORMAT before SHAPE) keep wire order: an addressed item ends where
         * the next one starts. */
        std::size_t pos = n_addressed++;
        while (pos > 0 && addressed[pos - 1].address > value) {
            addressed[pos] = addressed[pos - 1];
            pos--;
        }
        addressed[pos] = { id, value, 0 };
    }
    // The id names an item, so it must fit the item id field of the flavour.
    const int address_bytes = packet.heap_address_bits / 8;
    const std::uint64_t max_item_id = (std::uint64_t(1) << (63 - 8 * address_bytes)) - 1;
    if (!have_id || out.id == 0 || out.id > max_item_id)
        return std::nullopt;

    const std::size_t format_width = format_field_width(address_bytes, pyspead_widths);
    const std::size_t shape_width = shape_field_width(address_bytes, pyspead_widths);
    unsigned seen = 0; // bit per descriptor field, to reject repeats
    for (std::size_t i = 0; i < n_addressed; i++) {
        addressed_item& it = addressed[i];
        const std::uint64_t end =
            i + 1 < n_addressed ? addressed[i + 1].address : payload_length;
        it.length = end - it.address;
        if (it.id < item_id::descriptor_name || it.id > item_id::descriptor_dtype ||
            it.id == item_id::descriptor_id)
            continue; // NULL padding and unknown items carry nothing we need
        const unsigned bit = 1u << (it.id - item_id::descriptor_name);
        if (seen & bit)
            return std::nullopt;
        seen |= bit;

        const std::uint8_t* value = packet.payload + it.address;
        const auto length = std::size_t(it.length);
        switch (it.id) {
        case item_id::descriptor_name:
            out.name.assign(reinterpret_cast<const char*>(value), length);
            break;
        case item_id::descriptor_description:
            out.description.assign(reinterpret_cast<const char*>(value), length);
            break;
        case item_id::descriptor_dtype:
            out.numpy_header.assign(reinterpret_cast<const char*>(value), length);
            break;
        case item_id::descriptor_format:
            if (length % format_width != 0)
                return std::nullopt;
            out.format.reserve(length / format_width);
            for (std::size_t off = 0; off < length; off += format_width) {
                const std::uint64_t bits =
                    load_be_bytes(value + off + 1, int(format_width - 1));
                out.format.emplace_back(char(value[off]), std::int64_t(bits));
            }
            break;
        default: // item_id::descriptor_shape
            if (length % shape_width != 0)
                return std::nullopt;
            out.shape.reserve(length / shape_width);
            for (std::size_t off = 0; off < length; off += shape_width) {
                const std::uint8_t flag = value[off];
                if (flag == 0)
                    out.shape.push_back(std::int64_t(
                        load_be_bytes(value + off + 1, int(shape_width - 1))));
                else if (flag == shape_flag_variable ||
                         flag == shape_flag_variable_pyspead)
                    out.shape.push_back(-1);
                else
                    return std::nullopt;
            }
            break;
        }
    }
    return out;
}

} // namespace spead
} // namespace gr

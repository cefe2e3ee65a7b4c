/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The numpy .npy header dicts spead2 and PySPEAD put in a descriptor's DTYPE field.

#include <gnuradio/spead/numpy_header.h>
#include <string_view>
#include <limits>
#include <stdexcept>

namespace gr {
namespace spead {

bool numpy_dtype::needs_byteswap() const
{
    if (itemsize <= 1)
        return false;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return byte_order == '>';
#else
    return byte_order == '<';
#endif
}

namespace {

constexpr char host_byte_order =
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    '<';
#else
    '>';
#endif

/* numpy caps arrays at 32 dimensions (64 since numpy 2). */
constexpr std::size_t max_numpy_dimensions = 64;

/*
 * Recursive-descent parser for the Python dict literal that numpy (and spead2,
 * PySPEAD) write: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * Keys in any order, each exactly once; nothing else is accepted.
 */
class numpy_header_parser
{
public:
    explicit numpy_header_parser(std::string_view text) : d_text(text) {}

    bool parse(numpy_dtype& out)
    {
        bool have_descr = false, have_order = false, have_shape = false;
        skip_space();
        if (!consume('{'))
            return false;
        skip_space();
        while (!peek('}')) {
            std::string key;
            if (!parse_string(key))
                return false;
            skip_space();
            if (!consume(':'))
                return false;
            skip_space();
            if (key == "descr" && !have_descr) {
                if (!parse_string(out.descr))
                    return false;
                have_descr = true;
            } else if (key == "fortran_order" && !have_order) {
                if (!parse_bool(out.fortran_order))
                    return false;
                have_order = true;
            } else if (key == "shape" && !have_shape) {
                if (!parse_shape(out.shape))
                    return false;
                have_shape = true;
            } else {
                return false; // unknown or repeated key
            }
            skip_space();
            if (!consume(','))
                break;
            skip_space();
        }
        if (!consume('}'))
            return false;
        skip_space(); // .npy files pad the header with spaces and a newline
        return d_pos == d_text.size() && have_descr && have_order && have_shape;
    }

private:
    bool peek(char c) const { return d_pos < d_text.size() && d_text[d_pos] == c; }
    bool consume(char c)
    {
        if (!peek(c))
            return false;
        d_pos++;
        return true;
    }
    bool consume(std::string_view word)
    {
        if (d_text.substr(d_pos, word.size()) != word)
            return false;
        d_pos += word.size();
        return true;
    }
    void skip_space()
    {
        while (d_pos < d_text.size() && (d_text[d_pos] == ' ' || d_text[d_pos] == '\n' ||
                                         d_text[d_pos] == '\t' || d_text[d_pos] == '\r'))
            d_pos++;
    }

    /* A quoted string without escapes (none occur in keys or simple descrs). */
    bool parse_string(std::string& out)
    {
        if (d_pos >= d_text.size() || (d_text[d_pos] != '\'' && d_text[d_pos] != '"'))
            return false;
        const char quote = d_text[d_pos++];
        const std::size_t end = d_text.find(quote, d_pos);
        if (end == std::string_view::npos)
            return false;
        const std::string_view body = d_text.substr(d_pos, end - d_pos);
        if (body.find('\\') != std::string_view::npos)
            return false;
        out.assign(body.data(), body.size());
        d_pos = end + 1;
        return true;
    }

    bool parse_bool(bool& out)
    {
        if (consume(std::string_view("True")))
            out = true;
        else if (consume(std::string_view("False")))
            out = false;
        else
            return false;
        return true;
    }

    bool parse_int(std::int64_t& out)
    {
        const std::size_t start = d_pos;
        std::uint64_t value = 0;
        while (d_pos < d_text.size() && d_text[d_pos] >= '0' && d_text[d_pos] <= '9') {
            value = value * 10 + std::uint64_t(d_text[d_pos] - '0');
            if (value > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                return false;
            d_pos++;
        }
        if (d_pos == start)
            return false;
        consume('L'); // Python 2 longs, as PySPEAD's numpy could write them
        out = std::int64_t(value);
        return true;
    }

    /* () or (N,) or (N, M) or (N, M,) */
    bool parse_shape(std::vector<std::int64_t>& out)
    {
        out.clear();
        if (!consume('('))
            return false;
        skip_space();
        if (consume(')'))
            return true;
        while (true) {
            std::int64_t dimension;
            if (out.size() == max_numpy_dimensions || !parse_int(dimension))
                return false;
            out.push_back(dimension);
            skip_space();
            const bool comma = consume(',');
            skip_space();
            if (consume(')'))
                // Python writes a one-element tuple with a trailing comma
                return out.size() > 1 || comma;
            if (!comma)
                return false;
        }
    }

    std::string_view d_text;
    std::size_t d_pos = 0;
};

/* Fills byte_order, kind and itemsize from a simple scalar descr such as '<f4'. */
bool parse_scalar_descr(numpy_dtype& out)
{
    std::string_view descr = out.descr;
    char order = '|';
    if (!descr.empty() &&
        (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
        order = descr[0] == '=' ? host_byte_order : descr[0];
        descr.remove_prefix(1);
    }
    if (descr.size() < 2 || descr.size() > 3)
        return false;
    const char kind = descr[0];
    std::size_t itemsize = 0;
    for (std::size_t i = 1; i < descr.size(); i++) {
        if (descr[i] < '0' || descr[i] > '9')
            return false;
        itemsize = itemsize * 10 + std::size_t(descr[i] - '0');
    }
    bool valid_size;
    switch (kind) {
    case 'b':
        valid_size = itemsize == 1;
        break;
    case 'i':
    case 'u':
        valid_size = itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
        break;
    case 'f':
        valid_size = itemsize == 2 || itemsize == 4 || itemsize == 8;
        break;
    case 'c':
        valid_size = itemsize == 8 || itemsize == 16;
        break;
    default:
        return false;
    }
    if (!valid_size)
        return false;
    // Byte order means nothing for one-byte elements; numpy writes '|' for them.
    if (itemsize == 1)
        order = '|';
    else if (order == '|')
        return false;
    out.byte_order = order;
    out.kind = kind;
    out.itemsize = itemsize;
    return true;
}

} // namespace

std::optional<numpy_dtype> parse_numpy_header(const std::string& header)
{
    numpy_dtype out;
    numpy_header_parser parser(header);
    if (!parser.parse(out) || !parse_scalar_descr(out))
        return std::nullopt;
    return out;
}

std::string make_numpy_header(const std::string& descr,
                              const std::vector<std::int64_t>& shape,
                              bool fortran_order)
{
    if (descr.empty() || descr.find_first_of("'\"\\") != std::string::npos)
        throw std::invalid_argument("make_numpy_header: descr \"" + descr +
                                    "\" is not a numpy type string; write e.g. '>u4'");
    std::string out = "{'shape': (";
    for (std::size_t i = 0; i < shape.size(); i++) {
        if (shape[i] < 0)
            throw std::invalid_argument(
                "make_numpy_header: dimension " + std::to_string(shape[i]) +
                " is negative; numpy shapes are fixed, give the actual size");
        if (i > 0)
            out += ", ";
        out += std::to_string(shape[i]);
    }
    if (shape.size() == 1)
        out += ',';
    out += "), 'fortran_order': ";
    out += fortran_order ? "True" : "False";
    out += ", 'descr': '";
    out += descr;
    out += "'}";
    return out;
}

} // namespace spead
} // namespace gr

/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_HEAP_H
#define INCLUDED_SPEAD_SEND_HEAP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/flavour.h>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief A heap to send: items in the order they are added (which is wire order).
 *
 * Items added by pointer are not copied: the memory must stay valid and unchanged
 * until the heap has been sent (that is what makes zero-copy sends possible).
 * Items no wider than the flavour's immediate field are sent as immediates unless
 * \p allow_immediate is false.
 */
class SPEAD_API heap
{
public:
    struct item {
        std::uint64_t id;
        const std::uint8_t* data; //!< nullptr for inline immediates
        std::size_t length;
        bool allow_immediate;
        bool is_inline;             //!< value given as a number
        std::uint64_t inline_value; //!< for is_inline
    };

    explicit heap(const gr::spead::flavour& f = gr::spead::flavour());

    const gr::spead::flavour& get_flavour() const { return d_flavour; }

    /*! Item whose value lives in caller memory. \throws std::invalid_argument
     * for a reserved or out-of-range id. */
    void add_item(std::uint64_t id,
                  const void* data,
                  std::size_t length,
                  bool allow_immediate = true);
    /*! Item whose value the heap keeps a copy of. */
    void add_item(std::uint64_t id,
                  std::vector<std::uint8_t> value,
                  bool allow_immediate = true);
    /*! Immediate item with a numeric value. \throws std::invalid_argument if the value
     * does not fit flavour::heap_address_bits(). */
    void add_immediate(std::uint64_t id, std::uint64_t value);
    /*! DESCRIPTOR item carrying \p d, encoded in this heap's flavour. */
    void add_descriptor(const descriptor& d);
    /*! STREAM_CTRL = start. */
    void add_start();
    /*! STREAM_CTRL = stop: receivers end the stream when they get this heap. */
    void add_end();

    const std::vector<item>& items() const { return d_items; }
    bool empty() const { return d_items.empty(); }

    /*!
     * Repeat the heap's immediate item pointers in every packet, not only the first
     * (default false), so that a receiver meeting any packet of the heap first can
     * read them (e.g. a timestamp that places the packet). Identical pointers are one
     * item to spead2 and to gr-spead's receivers. All the heap's item pointers must
     * then fit in one packet (the packetiser throws otherwise), as with spead2's
     * repeat_pointers, which also repeats the addressed ones.
     */
    void set_repeat_immediates(bool repeat) { d_repeat_immediates = repeat; }
    bool get_repeat_immediates() const { return d_repeat_immediates; }

private:
    void check_id(std::uint64_t id) const;

    gr::spead::flavour d_flavour;
    std::vector<item> d_items;
    std::deque<std::vector<std::uint8_t>> d_owned; // deque: element addresses are stable
    bool d_repeat_immediates = false;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_HEAP_H */

/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_TCP_FRAMED_INCOMING_H
#define INCLUDED_SPEAD_TRANSPORT_TCP_FRAMED_INCOMING_H

#include "transport/link/connection.h"
#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace transport {

/*!
 * \brief spead2's framing of SPEAD over a byte stream, as a link::incoming: the
 * adapter from bytes to messages. Packets come back to back, each one's length found
 * from its header (next_frame()).
 *
 * Reads into one buffer, made at the first read (256 KiB) and doubled while one packet
 * fills it, up to max(2 × max_packet_size, 256 KiB): memory follows what the peer
 * sent, not what it may send. Gives views of the whole packets in it, so nothing is
 * copied per packet; the start of a packet not yet whole moves to the front before
 * the next read. A buffer that cannot grow ends this connection (-ENOMEM), no other.
 * A derived class gives the bytes (read_bytes(): tcp's socket, a test's script).
 */
class SPEAD_API framed_incoming : public link::incoming
{
public:
    /*! Packets above \p max_packet_size end the connection (-EMSGSIZE). */
    explicit framed_incoming(std::size_t max_packet_size);

    std::ptrdiff_t receive(recv::packet_view* packets, std::size_t n) override;
    void release() override {}
    bool ready() const override { return d_error != 0; }
    std::size_t unfinished_bytes() const override { return d_tail - d_head; }
    /*! spead2's framing in the words: the declared size of a packet too large, the
     * bytes of one cut short, a buffer that could not grow (-ENOMEM). */
    std::string describe_ending(std::ptrdiff_t result) const override;
    /*! The buffer's size now (0 before the first read). */
    std::size_t buffer_size() const { return d_buffer ? d_size : 0; }

protected:
    /*! Reads up to \p size bytes: the count, 0 at a clean close, -EAGAIN when none
     * now, -errno when the connection failed. */
    virtual std::ptrdiff_t read_bytes(std::uint8_t* buffer, std::size_t size) = 0;

private:
    /*! Views of up to \p n whole packets from d_head; sets d_error when the bytes
     * there cannot be framed. */
    std::size_t frame_packets(recv::packet_view* packets, std::size_t n);
    /*! Room to read into at d_tail: the unfinished packet moved to the front, the
     * buffer made or grown. False when it cannot be allocated. */
    bool make_room();

    std::size_t d_max_packet_size;
    std::size_t d_max_size; //!< the buffer's limit
    std::size_t d_size;     //!< the buffer's size now
    std::unique_ptr<std::uint8_t[]> d_buffer;
    std::size_t d_head = 0; //!< first byte not yet given as a packet
    std::size_t d_tail = 0; //!< end of the bytes read
    int d_error = 0;        //!< -errno found after the packets given
    std::size_t d_refused_size = 0;
};

} // namespace transport
} // namespace spead
} // namespace gr

#endif

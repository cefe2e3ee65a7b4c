/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_BUFFER_H
#define INCLUDED_SPEAD_RECV_BUFFER_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Reads SPEAD packets stored back to back in memory (spead2's mem_reader:
 * what a send::streambuf_stream writes, or a file read whole), as if they had
 * arrived in that order.
 *
 * The memory must stay valid until the stream has stopped (or be held by \p keep). Each
 * packet's length comes from its header (8 + 8 x items + PAYLOAD_LENGTH, as over TCP);
 * where the bytes stop being whole packets (not SPEAD, or cut short), the rest is handed
 * on as one last packet, which the stream counts (packets_bad_header, packets_truncated),
 * and reading ends there, as in spead2. Lossless, as a capture replay: a slow consumer
 * slows the reader down. The reader ends (end of input) after the last packet.
 */
class SPEAD_API buffer_reader : public transport_reader
{
public:
    /*! \p keep (optional) holds the memory: the reader keeps it until it is
     * destroyed (after the stream has stopped it). */
    buffer_reader(stream& owner,
                  const std::uint8_t* data,
                  std::size_t size,
                  std::shared_ptr<const void> keep = nullptr);

    /*! Packets found in the buffer (the rest, if any, counts as one more). */
    std::size_t get_packets() const;

private:
    struct impl; //!< the packets found, and the loop (buffer_reader.cc)
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_BUFFER_H */

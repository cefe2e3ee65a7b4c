/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_MAPPED_BUFFER_H
#define INCLUDED_SPEAD_TRANSPORT_MAPPED_BUFFER_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>

namespace gr {
namespace spead {
namespace transport {

/*!
 * \brief A large buffer a reader keeps for its life (a receive batch): anonymous
 * pages of its own, zeroed, given back to the kernel when it goes.
 *
 * Taken from malloc instead, a multi-megabyte buffer that comes and goes with each
 * start and stop of a stream lands in glibc's arenas once its dynamic mmap threshold
 * has risen, and each arena keeps it: the process grew by megabytes over repeated
 * starts (several arenas, as threads differ). Pages only become resident when used.
 */
class SPEAD_API mapped_buffer
{
public:
    mapped_buffer() = default;
    /*! \throws std::system_error when the kernel has no memory for it */
    explicit mapped_buffer(std::size_t bytes);
    ~mapped_buffer();
    mapped_buffer(mapped_buffer&& other) noexcept;
    mapped_buffer& operator=(mapped_buffer&& other) noexcept;
    mapped_buffer(const mapped_buffer&) = delete;
    mapped_buffer& operator=(const mapped_buffer&) = delete;

    std::uint8_t* data() const { return d_data; }
    std::size_t size() const { return d_size; }

private:
    std::uint8_t* d_data = nullptr;
    std::size_t d_size = 0;
};

} // namespace transport
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_TRANSPORT_MAPPED_BUFFER_H */

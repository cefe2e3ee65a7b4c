/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A reader's large buffer in pages of its own (see mapped_buffer.h for why).

#include "transport/mapped_buffer.h"
#include <sys/mman.h>
#include <system_error>
#include <cerrno>
#include <string>
#include <utility>

namespace gr {
namespace spead {
namespace transport {

mapped_buffer::mapped_buffer(std::size_t bytes) : d_size(bytes)
{
    if (bytes == 0)
        return;
    void* p =
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::system_error(errno,
                                std::generic_category(),
                                "allocating a " + std::to_string(bytes) +
                                    "-byte receive buffer");
    d_data = static_cast<std::uint8_t*>(p);
}

mapped_buffer::~mapped_buffer()
{
    if (d_data)
        munmap(d_data, d_size);
}

mapped_buffer::mapped_buffer(mapped_buffer&& other) noexcept
    : d_data(std::exchange(other.d_data, nullptr)), d_size(std::exchange(other.d_size, 0))
{
}

mapped_buffer& mapped_buffer::operator=(mapped_buffer&& other) noexcept
{
    if (this != &other) {
        if (d_data)
            munmap(d_data, d_size);
        d_data = std::exchange(other.d_data, nullptr);
        d_size = std::exchange(other.d_size, 0);
    }
    return *this;
}

} // namespace transport
} // namespace spead
} // namespace gr

/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_COMMON_FILE_DESCRIPTOR_H
#define INCLUDED_SPEAD_COMMON_FILE_DESCRIPTOR_H

#include <gnuradio/spead/api.h>
#include <unistd.h>
#include <utility>

namespace gr {
namespace spead {

/*! Owns a file descriptor (socket, eventfd, ...) and closes it. Move-only. */
class SPEAD_API file_descriptor
{
public:
    file_descriptor() = default;
    explicit file_descriptor(int fd) : d_fd(fd) {}
    file_descriptor(file_descriptor&& other) noexcept
        : d_fd(std::exchange(other.d_fd, -1))
    {
    }
    file_descriptor& operator=(file_descriptor&& other) noexcept
    {
        if (this != &other) {
            reset();
            d_fd = std::exchange(other.d_fd, -1);
        }
        return *this;
    }
    file_descriptor(const file_descriptor&) = delete;
    file_descriptor& operator=(const file_descriptor&) = delete;
    ~file_descriptor() { reset(); }

    int get() const { return d_fd; }
    explicit operator bool() const { return d_fd >= 0; }
    void reset()
    {
        if (d_fd >= 0)
            ::close(d_fd);
        d_fd = -1;
    }

private:
    int d_fd = -1;
};

} // namespace spead
} // namespace gr

#endif

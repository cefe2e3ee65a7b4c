/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_WAKE_EVENT_H
#define INCLUDED_SPEAD_TRANSPORT_WAKE_EVENT_H

#include "common/file_descriptor.h"
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdint>

namespace gr {
namespace spead {
namespace transport {

/*!
 * How stop() ends a reader's loop at once: a flag the loop checks, and an eventfd
 * that its poll() watches beside the reader's own file descriptors.
 */
class wake_event
{
public:
    /*! \throws std::system_error when no eventfd can be made */
    wake_event() : d_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
    {
        if (!d_fd)
            throw std::system_error(errno, std::generic_category(), "eventfd");
    }

    /*! Sets the flag and makes fd() readable; from any thread, any number of times. */
    void wake()
    {
        d_woken.store(true);
        const std::uint64_t one = 1;
        // An eventfd write of 1 cannot fail short of overflow; poll() sees it either way.
        [[maybe_unused]] auto written = ::write(d_fd.get(), &one, sizeof(one));
    }
    bool woken() const { return d_woken.load(std::memory_order_relaxed); }
    /*! For poll(): readable once wake() was called. */
    int fd() const { return d_fd.get(); }

private:
    file_descriptor d_fd;
    std::atomic<bool> d_woken{ false };
};

} // namespace transport
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_TRANSPORT_WAKE_EVENT_H */

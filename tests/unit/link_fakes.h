/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What the connected-link layer's tests fake: an fd that is always ready, and a
// dialer that hands out the one connection it holds.

#ifndef INCLUDED_SPEAD_TESTS_LINK_FAKES_H
#define INCLUDED_SPEAD_TESTS_LINK_FAKES_H

#include "common/file_descriptor.h"
#include "transport/link/connection.h"
#include <sys/eventfd.h>
#include <memory>
#include <string>

namespace spead_test {

/*! An fd that is always readable and writable (an eventfd holding 1). */
inline gr::spead::file_descriptor ready_fd()
{
    return gr::spead::file_descriptor(eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK));
}

/*! Connects once, to the \p Outgoing it holds. */
template <typename Outgoing>
struct fake_dialer : gr::spead::link::dialer {
    std::unique_ptr<Outgoing> next = std::make_unique<Outgoing>();
    std::unique_ptr<gr::spead::link::outgoing> connect(std::chrono::milliseconds,
                                                       int) override
    {
        return std::move(next);
    }
    std::string describe() const override { return "fake:1"; }
};

} // namespace spead_test

#endif

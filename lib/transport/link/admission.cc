/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "admission.h"
#include <algorithm>

namespace gr {
namespace spead {
namespace link {

namespace {
/*! Refused addresses remembered so that each is logged once: bounded, so that a
 * flood from many addresses cannot grow the reader's memory. */
constexpr std::size_t max_logged_refusals = 1024;
} // namespace

constexpr std::chrono::seconds admission::full_grace;
constexpr std::chrono::milliseconds admission::accept_backoff;

admission::admission(listener& l,
                     std::size_t max_connections,
                     const std::string& allowed_peers,
                     std::function<void(recv_stat)> count)
    : d_listener(l),
      d_max_connections(max_connections),
      d_filter(allowed_peers),
      d_count(std::move(count)),
      d_logger("spead connected reader")
{
}

int admission::listener_fd(std::size_t open, int& timeout_ms)
{
    const auto now = steady::now();
    const auto wait_at_most = [&](steady::time_point until) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now);
        if (left.count() <= 0)
            return false;
        timeout_ms = std::min<int>(timeout_ms, int(left.count()));
        return true;
    };
    if (d_resting_until && wait_at_most(*d_resting_until))
        return -1;
    d_resting_until.reset();
    const bool full = open >= d_max_connections;
    if (!full)
        d_full_wait_start.reset();
    hold(full);
    // While every slot is taken, a sender that came is left waiting (the listener not
    // polled) for up to full_grace, in case a slot frees.
    if (full && d_full_wait_start && wait_at_most(*d_full_wait_start + full_grace))
        return -1;
    return d_listener.fd();
}

void admission::accept_waiting(
    std::size_t open,
    const std::function<void(std::unique_ptr<incoming>, const std::string&)>& take)
{
    for (;;) {
        if (open >= d_max_connections) {
            // A sender waits: it is refused only if no slot frees within full_grace.
            if (!d_full_wait_start) {
                d_full_wait_start = steady::now();
                return;
            }
            if (steady::now() < *d_full_wait_start + full_grace)
                return;
        }
        std::string who;
        std::unique_ptr<incoming> in;
        try {
            in = d_listener.accept([&](const boost::asio::ip::address& peer) {
                who = peer.to_string();
                return admits(peer, open);
            });
        } catch (const accept_failure& e) {
            accept_failed(e);
            return;
        }
        if (!in) {
            d_full_wait_start.reset(); // the next sender to come while full waits anew
            return;
        }
        if (d_failures_in_burst > 0)
            d_logger.info("took a connection on {} again, after {} accepts that failed "
                          "for want of resources",
                          d_listener.describe(),
                          d_failures_in_burst);
        d_failures_in_burst = 0;
        // The last slot: hold the next senders' data before this one is seen taken.
        const bool last = ++open >= d_max_connections;
        if (last)
            hold(true);
        take(std::move(in), who);
        if (last)
            return; // whether another sender waits, the listener tells when polled
    }
}

void admission::connection_ended(std::size_t open)
{
    d_resting_until.reset(); // a descriptor and memory came back: try again at once
    if (open < d_max_connections)
        hold(false);
}

bool admission::admits(const boost::asio::ip::address& peer, std::size_t open)
{
    std::string refusal;
    if (!d_filter.allows(peer))
        refusal = "it is not in allowed_peers (add it there to let it in)";
    else if (open >= d_max_connections)
        refusal = "max_connections (" + std::to_string(d_max_connections) +
                  ") senders are already connected (raise max_connections)";
    if (refusal.empty())
        return true;
    d_count(recv_stat::connections_refused);
    const std::string who = peer.to_string();
    if (d_logged_refusals.size() < max_logged_refusals &&
        d_logged_refusals.insert(who).second)
        d_logger.warn("refused a connection from {} on {}: {}; further refusals of this "
                      "peer are counted, not logged",
                      who,
                      d_listener.describe(),
                      refusal);
    return false;
}

void admission::accept_failed(const accept_failure& e)
{
    d_count(recv_stat::accept_failures);
    if (d_failures_in_burst++ == 0)
        d_logger.error("could not take a connection on {}: {} ({}); the listener rests "
                       "{} ms or until a connection ends, and further failures are "
                       "counted in accept_failures, not logged, until one is taken",
                       d_listener.describe(),
                       e.what(),
                       connection_advice(e.code().value()),
                       accept_backoff.count());
    d_resting_until = steady::now() + accept_backoff;
}

void admission::hold(bool held)
{
    if (held == d_held)
        return;
    d_listener.hold(held);
    d_held = held;
}

} // namespace link
} // namespace spead
} // namespace gr

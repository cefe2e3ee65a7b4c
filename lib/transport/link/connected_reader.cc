/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "connected_reader.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <system_error>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace gr {
namespace spead {
namespace link {

namespace {
using steady = std::chrono::steady_clock;
/*! Upper bound on a poll() wait (also the idle_timeout check's resolution). */
constexpr int poll_timeout_ms = 100;
/*! Packets handed to the stream at once. */
constexpr std::size_t max_batch = 64;
} // namespace

struct connected_reader::conn {
    std::unique_ptr<incoming> link;
    std::string peer;
    std::size_t slot = 0; //!< the lowest free when it came: names it to the sink
    /*! No whole packet yet, or one begun (unfinished_bytes()) and not finished: the
     * progress idle_timeout bounds, measured from since (less d_stalled's growth
     * from stalled_at). */
    bool awaiting_first = true;
    bool in_packet = false;
    steady::time_point since;
    steady::duration stalled_at{ 0 };
};

connected_reader::connected_reader(std::unique_ptr<listener> l,
                                   const reader_limits& limits)
    : d_listener(std::move(l)),
      d_limits(limits),
      d_admission(*d_listener,
                  limits.max_connections,
                  limits.allowed_peers,
                  [this](recv_stat s) { count(s); }),
      d_wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      d_logger("spead connected reader")
{
    if (!d_wake)
        throw std::system_error(errno, std::generic_category(), "eventfd");
}

connected_reader::~connected_reader() = default;

void connected_reader::wake()
{
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(d_wake.get(), &one, sizeof(one));
}

void connected_reader::count(recv_stat s)
{
    std::lock_guard<std::mutex> lock(d_stats_mutex);
    d_stats[s]++;
}

recv_stats connected_reader::stats() const
{
    std::lock_guard<std::mutex> lock(d_stats_mutex);
    return d_stats;
}

void connected_reader::take(std::unique_ptr<incoming> in, const std::string& peer)
{
    auto c = std::make_unique<conn>();
    c->link = std::move(in);
    c->peer = peer;
    c->slot = free_slot();
    c->since = steady::now();
    c->stalled_at = d_stalled;
    d_conns.push_back(std::move(c));
    d_conns_changed = true;
    d_open.store(d_conns.size());
    d_accepted_any = true;
    count(recv_stat::connections_accepted);
    d_logger.info("{} connected to {}", peer, d_listener->describe());
}

std::size_t connected_reader::free_slot() const
{
    // Fewer than max_connections are open: one of 0 .. size() is free.
    for (std::size_t slot = 0;; slot++)
        if (std::none_of(d_conns.begin(), d_conns.end(), [slot](const auto& c) {
                return c->slot == slot;
            }))
            return slot;
}

void connected_reader::end(std::size_t index, ending why, const std::string& detail)
{
    std::unique_ptr<conn> c = std::move(d_conns[index]);
    if (d_sink && why != ending::stopped)
        d_sink->connection_ended(c->slot);
    // Closed and gone from num_connections() before it is counted: whoever sees the
    // count sees the connection gone, its descriptor and memory too.
    c->link.reset();
    d_conns.erase(d_conns.begin() + std::ptrdiff_t(index));
    d_conns_changed = true;
    d_open.store(d_conns.size());
    static constexpr recv_stat counters[] = {
        recv_stat::connections_closed,         recv_stat::connections_lost,
        recv_stat::connections_framing_errors, recv_stat::connections_frame_too_large,
        recv_stat::connections_partial_frame,  recv_stat::connections_idle_timeout,
        recv_stat::connections_stopped,
    };
    count(counters[static_cast<int>(why)]);
    d_admission.connection_ended(d_conns.size());
    if (why == ending::closed || why == ending::stopped)
        d_logger.info("connection from {} ended ({})", c->peer, detail);
    else
        d_logger.warn("connection from {} ended: {}", c->peer, detail);
}

bool connected_reader::deliver(conn& c,
                               const recv::packet_view* views,
                               const bool* run_starts,
                               std::size_t n,
                               packet_sink& sink,
                               bool& ended)
{
    std::size_t i = 0;
    while (i < n) {
        // A run of packets of one heap completes at most one heap and evicts at most
        // one: a batch of free / 2 runs cannot overflow the queue (recv_reader.h).
        std::size_t free = sink.wait_for_queue_space(std::chrono::microseconds(0));
        if (free == 0) {
            count(recv_stat::receive_waits);
            const auto waited_from = steady::now();
            while (free == 0) {
                if (sink.stopping())
                    return false;
                free = sink.wait_for_queue_space(std::chrono::milliseconds(100));
            }
            d_stalled += steady::now() - waited_from; // no connection's fault
        }
        const std::size_t runs_allowed = std::max<std::size_t>(1, free / 2);
        std::size_t runs = 0;
        std::size_t end = i;
        while (end < n) {
            if (run_starts[end] || end == i) {
                if (runs == runs_allowed)
                    break;
                runs++;
            }
            end++;
        }
        if (!sink.add_packets_from(c.slot, views + i, end - i)) {
            if (sink.stopping())
                return false;
            ended = true; // the rest of its batch was counted in packets_after_stop
            this->end(index_of(c), ending::closed, "its sender sent a stop heap");
            return true;
        }
        i = end;
    }
    return true;
}

std::size_t connected_reader::index_of(const conn& c) const
{
    return std::size_t(
        std::find_if(d_conns.begin(),
                     d_conns.end(),
                     [&c](const std::unique_ptr<conn>& p) { return p.get() == &c; }) -
        d_conns.begin());
}

namespace {
/*! Packets of one heap carry the same first item pointer (HEAP_CNT). */
bool starts_run(const recv::packet_view* prev, const recv::packet_view& p)
{
    return !prev || p.size < 16 || prev->size < 16 ||
           std::memcmp(prev->data + 8, p.data + 8, 8) != 0;
}
} // namespace

void connected_reader::end_by(conn& c, std::ptrdiff_t result)
{
    const std::size_t index = index_of(c);
    if (result == 0 && c.link->unfinished_bytes() == 0)
        end(index, ending::closed, "closed by the peer");
    else if (result == 0)
        end(index, ending::partial, c.link->describe_ending(result));
    else if (result == -EBADMSG || result == -EPROTO)
        end(index, ending::framing, c.link->describe_ending(result));
    else if (result == -EMSGSIZE)
        end(index, ending::too_large, c.link->describe_ending(result));
    else if (result == -ENOMEM)
        end(index, ending::lost, c.link->describe_ending(result));
    else
        end(index,
            ending::lost,
            std::string(std::strerror(int(-result))) + ": " +
                connection_advice(int(-result)));
}

bool connected_reader::service(conn& c, packet_sink& sink)
{
    recv::packet_view views[max_batch];
    bool run_starts[max_batch];
    bool progressed = false;
    for (;;) {
        const std::ptrdiff_t r = c.link->receive(views, max_batch);
        if (r == -EAGAIN || r == -EINTR)
            break;
        if (r <= 0) {
            end_by(c, r);
            return true;
        }
        const std::size_t n = std::size_t(r);
        for (std::size_t i = 0; i < n; i++)
            run_starts[i] = starts_run(i ? &views[i - 1] : nullptr, views[i]);
        progressed = true;
        bool ended = false;
        if (!deliver(c, views, run_starts, n, sink, ended))
            return false;
        if (ended)
            return true; // c is gone
        c.link->release();
        if (n < max_batch && !c.link->ready())
            break;
    }
    // Progress: whole packets came; a packet begun starts its own clock.
    if (progressed) {
        c.awaiting_first = false;
        c.in_packet = false;
    }
    const bool in_packet = !c.awaiting_first && c.link->unfinished_bytes() > 0;
    if (in_packet && !c.in_packet) {
        c.since = steady::now();
        c.stalled_at = d_stalled;
    }
    c.in_packet = in_packet;
    return true;
}

void connected_reader::end_stalled()
{
    const auto bound = d_limits.idle_timeout;
    if (bound.count() <= 0)
        return;
    const auto now = steady::now();
    const std::string limit = "idle_timeout (" + std::to_string(bound.count()) + " ms)";
    for (std::size_t i = d_conns.size(); i-- > 0;) {
        const conn& c = *d_conns[i];
        if (!c.awaiting_first && !c.in_packet)
            continue; // idle between whole packets: allowed
        if (now - c.since - (d_stalled - c.stalled_at) <= bound)
            continue;
        if (c.awaiting_first)
            end(i,
                ending::idle,
                "it sent no whole packet within " + limit +
                    " of connecting: raise idle_timeout if the sender takes longer to "
                    "start");
        else
            end(i,
                ending::partial,
                "it began a packet and did not finish it within " + limit + " (" +
                    std::to_string(c.link->unfinished_bytes()) +
                    " bytes of it discarded): raise idle_timeout if its packets take "
                    "longer to arrive");
    }
}

void connected_reader::run(packet_sink& sink)
{
    d_sink = &sink;
    // The poll list changes only when a connection comes or goes, or the listener is
    // held or rests: it is rebuilt then, not on every wake-up.
    std::vector<pollfd> fds;
    std::vector<conn*> polled;
    for (;;) {
        if (sink.stopping())
            break;
        if (!d_limits.keep_listening && d_accepted_any && d_conns.empty())
            return; // the last sender has gone: the end of this reader's input
        int timeout_ms = poll_timeout_ms;
        const int listener_fd = d_admission.listener_fd(d_conns.size(), timeout_ms);
        if (std::exchange(d_conns_changed, false) || fds.empty() ||
            fds[1].fd != listener_fd) {
            fds.clear();
            polled.clear();
            fds.push_back({ d_wake.get(), POLLIN, 0 });
            fds.push_back({ listener_fd, POLLIN, 0 });
            for (auto& c : d_conns) {
                fds.push_back({ c->link->fd(), POLLIN, 0 });
                polled.push_back(c.get());
            }
        }
        const int ready = poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0 && errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "poll");
        if (fds[0].revents) {
            std::uint64_t v;
            [[maybe_unused]] auto r = ::read(d_wake.get(), &v, sizeof(v));
        }
        if (sink.stopping())
            break;
        for (std::size_t i = 0; i < polled.size(); i++) {
            if (!fds[i + 2].revents)
                continue;
            if (!service(*polled[i], sink))
                goto stopped;
        }
        if (fds[1].revents)
            d_admission.accept_waiting(
                d_conns.size(),
                [this](std::unique_ptr<incoming> in, const std::string& peer) {
                    take(std::move(in), peer);
                });
        end_stalled();
    }
stopped:
    while (!d_conns.empty())
        end(d_conns.size() - 1, ending::stopped, "the stream stopped");
}

} // namespace link
} // namespace spead
} // namespace gr

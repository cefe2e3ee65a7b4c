/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "connected_writer.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <system_error>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace gr {
namespace spead {
namespace link {

namespace {
using steady = std::chrono::steady_clock;
/*! After abort(), how long a wait for room may go without progress. */
constexpr auto abort_grace = std::chrono::seconds(2);
/*! How long the acknowledgments of what a peer that said goodbye took last may trail
 * its goodbye (without progress) before the rest counts lost. */
constexpr auto goodbye_grace = std::chrono::milliseconds(200);
/*! How often an idle writer asks its connection whether the peer still answers. */
constexpr auto keepalive_period = std::chrono::milliseconds(1000);
} // namespace

connected_writer::connected_writer(std::unique_ptr<dialer> d,
                                   const writer_settings& settings)
    : d_dialer(std::move(d)),
      d_settings(settings),
      d_abort(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      d_logger("spead connected writer")
{
    if (!d_abort)
        throw std::system_error(errno, std::generic_category(), "eventfd");
}

connected_writer::~connected_writer()
{
    abort();
    if (d_connector.joinable())
        d_connector.join();
    // Destroyed outside the mutex: a connection's watcher may be waiting for it.
    std::unique_ptr<outgoing> link, ready;
    {
        std::lock_guard<std::mutex> lock(d_link_mutex);
        link = std::move(d_link);
        ready = std::move(d_ready);
    }
}

void connected_writer::watch(outgoing& link)
{
    const outgoing* which = &link;
    link.watch([this, which](int err) { link_gone(which, err); });
}

void connected_writer::link_gone(const outgoing* link, int err)
{
    // Under the mutex: abort() (the stream is going) then sees no count after it, and
    // lose() does not count the same loss again.
    std::lock_guard<std::mutex> lock(d_link_mutex);
    if (d_aborted.load() || d_link.get() != link || d_loss_noted)
        return; // not the connection in use (yet), or already seen
    d_loss_noted = true;
    d_idle_loss.store(err);
    d_connected.store(false);
    count(send_stat::connections_lost, 1);
    d_logger.error("the connection to {} failed while idle: {}; {}",
                   d_dialer->describe(),
                   std::strerror(err),
                   connection_advice(err));
    d_wanted = d_settings.reconnect; // the connector starts again
    d_link_changed.notify_all();
}

void connected_writer::take_idle_loss()
{
    // The flag first: d_link is the writer thread's only once set (connect_first() may
    // still be setting it under the mutex while this runs before the first heap).
    if (d_idle_loss.load(std::memory_order_acquire) == 0 || !d_link)
        return;
    // The peer's goodbye (rdma: the CM's DISCONNECTED) may overtake the acknowledgments
    // of what it took last, which come another way (send completions): collect them
    // while they come, so that a receiver that ends after the stop heap has not lost the
    // heaps before it.
    auto progress = steady::now();
    while (d_ledger.unsettled() > 0 && steady::now() - progress < goodbye_grace) {
        if (update_acked())
            progress = steady::now();
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    lose(d_idle_loss.load());
}

std::chrono::milliseconds connected_writer::idle_period() const
{
    return keepalive_period;
}

void connected_writer::idle()
{
    take_idle_loss();
    outgoing* link = nullptr;
    {
        // Under the mutex: before the first heap, connect_first() may be setting d_link.
        std::lock_guard<std::mutex> lock(d_link_mutex);
        if (!d_loss_noted)
            link = d_link.get();
    }
    if (!link)
        return;
    if (const int err = link->keep_alive()) {
        link_gone(link, err); // counted and logged as a loss while idle
        take_idle_loss();
    }
}

void connected_writer::abort()
{
    d_aborted.store(true);
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(d_abort.get(), &one, sizeof(one));
    // Under the mutex: a waiter between its check and its wait still gets the notice.
    std::lock_guard<std::mutex> lock(d_link_mutex);
    d_link_changed.notify_all();
}

std::size_t connected_writer::granted_buffer() const
{
    std::lock_guard<std::mutex> lock(d_link_mutex);
    if (d_link)
        return d_link->granted_buffer();
    return d_ready ? d_ready->granted_buffer() : 0;
}

std::unique_ptr<outgoing> connected_writer::try_connect(bool log_failure)
{
    try {
        auto link = d_dialer->connect(d_settings.connect_timeout, d_abort.get());
        count(send_stat::connections_established, 1);
        if (d_ever_connected)
            d_logger.info("reconnected to {}", d_dialer->describe());
        d_ever_connected = true;
        return link;
    } catch (const std::system_error& e) {
        if (e.code().value() == ECANCELED)
            return nullptr;
        count(send_stat::connect_failures, 1);
        if (log_failure)
            d_logger.warn("{}", e.what());
        if (!d_settings.reconnect)
            throw;
        return nullptr;
    }
}

void connected_writer::connect_first()
{
    if (!d_settings.reconnect) {
        auto link = try_connect(true);
        std::lock_guard<std::mutex> lock(d_link_mutex);
        d_link = std::move(link);
        watch(*d_link);
        d_connected.store(true);
        return;
    }
    // Reconnecting: the connector connects in the background, where abort() can end
    // the attempt, so that a producer waiting on is_connected() sees the link come up.
    d_wanted = true;
    d_connector = std::thread([this] { connector_loop(); });
}

void connected_writer::connector_loop()
{
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(d_link_mutex);
            d_link_changed.wait(lock, [this] { return d_wanted || d_aborted.load(); });
            if (d_aborted.load())
                return;
        }
        auto delay = d_settings.reconnect_min;
        bool logged = false;
        std::unique_ptr<outgoing> link;
        while (!link) {
            link = try_connect(!logged); // failures are logged once per outage
            if (link || d_aborted.load())
                break;
            logged = true;
            pollfd pfd{ d_abort.get(), POLLIN, 0 };
            ::poll(&pfd, 1, int(delay.count()));
            if (d_aborted.load())
                return;
            delay = std::min(delay * 2, d_settings.reconnect_max);
        }
        if (!link)
            return;   // aborted
        watch(*link); // it reports only once it is d_link
        std::lock_guard<std::mutex> lock(d_link_mutex);
        d_ready = std::move(link);
        d_wanted = false;
        d_connected.store(true);
        d_link_changed.notify_all();
    }
}

bool connected_writer::ensure_connected()
{
    if (d_link)
        return true;
    if (!d_settings.reconnect || d_aborted.load()) {
        if (!d_failed_for_good && !d_aborted.load())
            d_logger.error("the connection to {} is gone and reconnect is off: every "
                           "further heap fails (set reconnect to keep trying)",
                           d_dialer->describe());
        d_failed_for_good = true;
        return false;
    }
    // Back-pressure: the batch waits for the connector's next connection.
    std::unique_lock<std::mutex> lock(d_link_mutex);
    d_link_changed.wait(lock, [this] { return d_ready || d_aborted.load(); });
    if (!d_ready)
        return false; // aborted
    d_link = std::move(d_ready);
    return true;
}

void connected_writer::lose(int err)
{
    bool noted;
    {
        std::lock_guard<std::mutex> lock(d_link_mutex);
        noted = d_loss_noted;
        d_loss_noted = true;
    }
    if (!noted) {
        count(send_stat::connections_lost, 1);
        d_logger.error("the connection to {} failed: {}; {}",
                       d_dialer->describe(),
                       std::strerror(err),
                       connection_advice(err));
    }
    drop_link(boost::system::error_code(err, boost::system::system_category()));
    std::lock_guard<std::mutex> lock(d_link_mutex);
    d_wanted = d_settings.reconnect; // the connector starts again
    d_link_changed.notify_all();
}

void connected_writer::drop_link(const boost::system::error_code& ec)
{
    update_acked(); // what the peer acknowledged before the end still counts as sent
    d_ledger.connection_lost(ec);
    d_connected.store(false);
    std::unique_ptr<outgoing> gone; // destroyed unlocked: its watcher may be waiting
    std::lock_guard<std::mutex> lock(d_link_mutex);
    gone = std::move(d_link);
    d_loss_noted = false;
    d_idle_loss.store(0);
}

bool connected_writer::update_acked()
{
    if (d_ledger.unsettled() == 0 || !d_link) // nothing written: d_link not read
        return false;
    const std::ptrdiff_t unacked = d_link->unacknowledged();
    if (unacked < 0 || !d_ledger.acknowledged(std::uint64_t(unacked)))
        return false;
    d_ack_sleep = std::chrono::microseconds(0);
    return true;
}

void connected_writer::wait_for_ack()
{
    // No event says "acknowledged": poll with a timeout growing from 10 us to 1 ms,
    // woken at once by a failure (POLLERR, POLLHUP) or abort(). The default timer
    // slack (50 us) would add itself to every short wait: 1 us for this thread.
    if (!d_slack_set) {
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        d_slack_set = true;
    }
    d_ack_sleep = std::clamp(
        d_ack_sleep * 2, std::chrono::microseconds(10), std::chrono::microseconds(1000));
    const timespec ts{ 0, long(d_ack_sleep.count()) * 1000 };
    pollfd fds[2] = { { d_link->fd(), 0, 0 }, { d_abort.get(), POLLIN, 0 } };
    ::ppoll(fds, d_aborted.load() ? 1 : 2, &ts, nullptr);
    if (fds[0].revents & (POLLERR | POLLHUP)) {
        int err = d_link->pending_error();
        if (err == 0 && (fds[0].revents & POLLHUP))
            err = EPIPE;
        if (err != 0) {
            lose(err);
            return;
        }
    }
    if (update_acked())
        return;
    if (d_aborted.load() && steady::now() - d_ledger.last_progress() > abort_grace) {
        d_logger.error("the stream was destroyed while {} acknowledged nothing for 2 s: "
                       "{} packets written but not acknowledged are counted lost",
                       d_dialer->describe(),
                       d_ledger.unsettled());
        drop_link(boost::asio::error::operation_aborted);
    }
}

std::uint64_t connected_writer::reap_completions(bool wait,
                                                 boost::system::error_code& ec,
                                                 std::uint64_t written)
{
    take_idle_loss();
    if (!update_acked() && wait && d_ledger.unsettled() > 0 && d_link)
        wait_for_ack();
    return d_ledger.report(ec, written);
}

bool connected_writer::wait_for_room(steady::time_point last_progress)
{
    const auto start = steady::now();
    pollfd fds[2] = { { d_link->fd(), d_link->room_events(), 0 },
                      { d_abort.get(), POLLIN, 0 } };
    ::poll(fds, d_aborted.load() ? 1 : 2, d_link->room_wait_ms());
    count(send_stat::send_wait_us,
          std::uint64_t(
              std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - start)
                  .count()));
    if (!d_aborted.load() || steady::now() - last_progress <= abort_grace)
        return true;
    d_logger.error("the stream was destroyed while {} took no data for 2 s: the rest "
                   "of the queue is dropped",
                   d_dialer->describe());
    return false;
}

std::size_t connected_writer::write_packets(const send::packet* packets,
                                            std::size_t n,
                                            boost::system::error_code& ec)
{
    take_idle_loss();
    if (!ensure_connected()) {
        ec = d_aborted.load() ? boost::asio::error::operation_aborted
                              : boost::asio::error::not_connected;
        return 0;
    }
    auto last_progress = steady::now();
    bool waiting = false; // send_waits counts each wait without progress once
    std::size_t done = 0;
    int err = 0;
    while (done < n) {
        const std::ptrdiff_t r = d_link->send(packets + done, n - done);
        if (r >= 0) { // r packets taken (0: part of one)
            d_ledger.written(packets + done, std::size_t(r));
            done += std::size_t(r);
            waiting = false;
            last_progress = steady::now();
            continue;
        }
        if (r == -EINTR)
            continue;
        if (r != -EAGAIN) {
            err = int(-r);
            break;
        }
        // The receiver is slower than us: wait for room (back-pressure).
        if (!waiting)
            count(send_stat::send_waits, 1);
        waiting = true;
        if (!wait_for_room(last_progress)) {
            err = ECANCELED;
            break;
        }
    }
    // Packets taken are done once the connection acknowledges them (reap_completions).
    if (err == ECANCELED) {
        ec = boost::asio::error::operation_aborted;
        drop_link(ec);
    } else if (err != 0) {
        ec = boost::system::error_code(err, boost::system::system_category());
        lose(err);
    }
    return done;
}

} // namespace link
} // namespace spead
} // namespace gr

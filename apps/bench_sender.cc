/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_sender.h"
#include <gnuradio/spead/send_udp.h>
#include <condition_variable>
#include <fcntl.h>
#include <sys/wait.h>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {
bool write_all(int fd, const void* data, std::size_t size)
{
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        size -= std::size_t(n);
    }
    return true;
}

/*! \return bytes read: \p size, or fewer at end of file or on error */
std::size_t read_all(int fd, void* data, std::size_t size)
{
    char* p = static_cast<char*>(data);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::read(fd, p + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += std::size_t(n);
    }
    return done;
}

/*! The child of a forked_sender: waits for the start byte, sends, reports.
 * \return its exit status */
int run_sender_child(const sender_options& options, int start_fd, int report_fd) noexcept
{
    char start = 0;
    if (read_all(start_fd, &start, 1) != 1)
        return 1; // the parent gave up before starting it
    const sender_message m = sender_message::of_send(options);
    return write_all(report_fd, &m, sizeof(m)) ? 0 : 1;
}
} // namespace

sender_report send_heaps(const sender_options& options)
{
    generator_config gen;
    gen.heap_size = options.heap_size;
    gen.items = 1;
    gen.timestamp_item = options.timestamp_item;
    gen.stop_heap = options.timestamp_item != 0; // a continuous receiver ends on it
    gen.max_heaps = options.max_heaps;
    gen.one_buffer = options.one_buffer;
    if (options.rate_gbps > 0)
        gen.heaps = static_cast<std::int64_t>(
            std::ceil(options.rate_gbps * 1e9 / 8 * options.seconds / options.heap_size));
    heap_generator generator(gen);

    send::stream_config config;
    if (options.make_stream) // a message transport (rdma): no UDP datagram limit
        config.set_max_message_size(options.packet);
    else
        config.set_max_packet_size(options.packet);
    config.set_rate(options.rate_gbps * 1e9 / 8)
        .set_burst_size(options.burst)
        .set_max_heaps(options.max_heaps)
        // as spead_send: the writer refills its own queue, never waiting for this
        // thread to be scheduled (it shares the cores with the receiver)
        .set_inline_completions(true);
    boost::asio::io_context io;
    std::unique_ptr<send::stream> owned;
    if (options.make_stream) {
        owned = options.make_stream(io, config);
    } else {
        send::udp_config udp;
        udp.set_endpoints(options.destination).set_buffer_size(options.buffer);
        owned = std::make_unique<send::udp_stream>(io, config, udp);
    }
    send::stream& stream = *owned;

    // Unlimited rate: send for the time asked. A timer thread ends the run.
    std::atomic<bool> stop{ false };
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    std::thread timer;
    if (options.rate_gbps <= 0)
        timer = std::thread([&] {
            std::unique_lock<std::mutex> lock(mutex);
            done.wait_for(lock,
                          std::chrono::duration<double>(options.seconds),
                          [&finished] { return finished; });
            stop = true;
        });

    sender_report report;
    const cpu_times before = cpu_times::of_process();
    report.result = generator.run(stream, io, stop);
    report.cpu = cpu_times::of_process() - before;
    if (timer.joinable()) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            finished = true;
        }
        done.notify_all();
        timer.join();
    }
    report.stats = stream.get_stats();
    if (report.result.seconds > 0)
        report.achieved_gbps = report.result.bytes * 8e-9 / report.result.seconds;
    return report;
}

sender_message sender_message::of_send(const sender_options& options) noexcept
{
    sender_message m;
    const auto say = [&m](outcome o, const std::string& text) {
        m.result = o;
        std::strncpy(m.text, text.c_str(), sizeof(m.text) - 1);
    };
    try {
        const sender_report r = send_heaps(options);
        m.data_heaps = r.result.data_heaps;
        m.control_heaps = r.result.control_heaps;
        m.heaps_failed = r.result.heaps_failed;
        m.bytes = r.result.bytes;
        m.seconds = r.result.seconds;
        m.achieved_gbps = r.achieved_gbps;
        m.stats = r.stats;
        m.cpu = r.cpu;
        if (r.result.error)
            say(outcome::send_error, r.result.error.message());
    } catch (const std::invalid_argument& e) {
        say(outcome::invalid_argument, e.what());
    } catch (const std::exception& e) {
        say(outcome::setup_error, e.what());
    }
    return m;
}

sender_report sender_message::report() const
{
    switch (result) {
    case outcome::sent:
        break;
    case outcome::send_error:
        throw std::runtime_error(std::string("sending failed: ") + text);
    case outcome::invalid_argument:
        throw std::invalid_argument(text);
    case outcome::setup_error:
        throw std::runtime_error(text);
    }
    sender_report r;
    r.result.data_heaps = data_heaps;
    r.result.control_heaps = control_heaps;
    r.result.heaps_failed = heaps_failed;
    r.result.bytes = bytes;
    r.result.seconds = seconds;
    r.achieved_gbps = achieved_gbps;
    r.stats = stats;
    r.cpu = cpu;
    return r;
}

trial_result trial_sent(double rate_gbps, const sender_report& sent)
{
    trial_result r;
    r.target_gbps = rate_gbps;
    r.achieved_gbps = sent.achieved_gbps;
    r.heaps_sent = sent.result.data_heaps;
    r.packets_sent = sent.stats[send_stat::packets];
    return r;
}

forked_sender::forked_sender(const sender_options& options)
{
    int start[2];
    int report[2];
    if (pipe2(start, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe");
    if (pipe2(report, O_CLOEXEC) != 0) {
        const int err = errno;
        close(start[0]);
        close(start[1]);
        throw std::system_error(err, std::generic_category(), "pipe");
    }
    d_pid = fork();
    if (d_pid == 0) {
        close(start[1]);
        close(report[0]);
        // _exit: no destructor or atexit handler of the parent's objects runs twice,
        // and the parent's unflushed output is not written again.
        _exit(run_sender_child(options, start[0], report[1]));
    }
    const int err = errno;
    close(start[0]);
    close(report[1]);
    d_start_fd = start[1];
    d_report_fd = report[0];
    if (d_pid < 0) {
        close(d_start_fd);
        close(d_report_fd);
        throw std::system_error(err, std::generic_category(), "fork (the sender)");
    }
}

forked_sender::~forked_sender()
{
    if (d_start_fd >= 0)
        close(d_start_fd);
    if (d_report_fd >= 0)
        close(d_report_fd);
    if (d_pid > 0) {
        kill(d_pid, SIGKILL);
        waitpid(d_pid, nullptr, 0);
    }
}

void forked_sender::start()
{
    const char go = 1;
    if (!write_all(d_start_fd, &go, 1))
        throw std::system_error(errno, std::generic_category(), "starting the sender");
    close(d_start_fd);
    d_start_fd = -1;
}

sender_report forked_sender::wait()
{
    sender_message m;
    const bool whole = read_all(d_report_fd, &m, sizeof(m)) == sizeof(m);
    close(d_report_fd);
    d_report_fd = -1;
    int status = 0;
    waitpid(d_pid, &status, 0);
    d_pid = -1;
    if (!whole)
        throw std::runtime_error(
            "the sender process ended without a report (" +
            (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                 : "exit status " + std::to_string(WEXITSTATUS(status))) +
            ")");
    return m.report();
}

namespace {
/*! \p sender as a function that starts it and returns its report. */
std::function<sender_report()> started(forked_sender& sender)
{
    return [&sender] {
        sender.start();
        return sender.wait();
    };
}
} // namespace

sender_report send_then_settle(forked_sender& sender,
                               recv::stream& stream,
                               recv_stat settled,
                               const std::function<void()>& stop_consumer)
{
    return send_then_settle(started(sender), stream, settled, stop_consumer);
}

sender_report send_then_settle(const std::function<sender_report()>& send,
                               recv::stream& stream,
                               recv_stat settled,
                               const std::function<void()>& stop_consumer)
{
    sender_report sent;
    try {
        sent = send();
    } catch (...) {
        stream.stop();
        stop_consumer();
        throw;
    }
    std::uint64_t last = ~std::uint64_t(0);
    for (int i = 0; i < 30; i++) {
        const std::uint64_t now = stream.get_stats()[settled];
        if (now == last)
            break;
        last = now;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return sent;
}

heap_consumer::heap_consumer(recv::stream& stream, std::function<void()> take)
    : d_thread([this, &stream, take = std::move(take)] {
          recv::heap h;
          while (!d_done.load()) {
              if (stream.pop(h, std::chrono::milliseconds(20)) ==
                  recv::stream::pop_result::heap) {
                  if (h.is_complete())
                      take();
                  h = recv::heap();
              }
          }
          while (stream.try_pop(h))
              if (h.is_complete())
                  take();
      })
{
}

void heap_consumer::stop()
{
    d_done = true;
    if (d_thread.joinable())
        d_thread.join();
}

sender_report receive_until_settled(const std::function<sender_report()>& send,
                                    recv::stream& stream,
                                    recv_stat settled,
                                    const std::function<void()>& stop_consumer,
                                    cpu_times& used)
{
    const cpu_times before = cpu_times::of_process();
    const sender_report sent = send_then_settle(send, stream, settled, stop_consumer);
    used = cpu_times::of_process() - before;
    stream.stop();
    stop_consumer();
    return sent;
}

sender_report receive_until_settled(forked_sender& sender,
                                    recv::stream& stream,
                                    recv_stat settled,
                                    const std::function<void()>& stop_consumer,
                                    cpu_times& used)
{
    return receive_until_settled(started(sender), stream, settled, stop_consumer, used);
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_common.h"
#include <gnuradio/spead/send_udp.h>
#include <condition_variable>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {
const char* const rmem_max_path = "/proc/sys/net/core/rmem_max";

bool write_rmem_max(std::size_t bytes)
{
    std::ofstream out(rmem_max_path);
    out << bytes << "\n";
    out.flush();
    return bool(out);
}

std::string gbps(double value)
{
    std::ostringstream out;
    out << std::setprecision(value < 10 ? 3 : 4) << value;
    return out.str();
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
    if (options.rate_gbps > 0)
        gen.heaps = static_cast<std::int64_t>(
            std::ceil(options.rate_gbps * 1e9 / 8 * options.seconds / options.heap_size));
    heap_generator generator(gen);

    send::stream_config config;
    config.set_max_packet_size(options.packet)
        .set_rate(options.rate_gbps * 1e9 / 8)
        .set_burst_size(options.burst)
        .set_max_heaps(options.max_heaps)
        // as spead_send: the writer refills its own queue, never waiting for this
        // thread to be scheduled (it shares the cores with the receiver)
        .set_inline_completions(true);
    send::udp_config udp;
    udp.set_endpoints(options.destination).set_buffer_size(options.buffer);
    boost::asio::io_context io;
    send::udp_stream stream(io, config, udp);

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
    report.result = generator.run(stream, io, stop);
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

std::string describe(const trial_result& r)
{
    std::ostringstream out;
    out << gbps(r.target_gbps) << " Gb/s: sent " << r.heaps_sent << " heaps ("
        << r.packets_sent << " packets) at " << gbps(r.achieved_gbps)
        << " Gb/s, received " << r.heaps_received << " (" << r.packets_received
        << " packets), lost " << r.heaps_lost();
    for (const auto& [name, value] : r.drops)
        if (value)
            out << ", " << name << " " << value;
    return out.str();
}

double search_lossless_rate(const trial_function& trial,
                            const search_options& options,
                            const std::string& label)
{
    // A run that loses nothing but sent well below the rate asked says nothing about
    // that rate: the sender (sharing the CPUs) is the limit, and the search ends.
    constexpr double reached = 0.95;
    enum class outcome { pass, loss, sender_short };
    std::vector<double> rates = options.rates;
    std::sort(rates.begin(), rates.end());
    std::vector<double> achieved_at_best;
    double sender_short_at = -1.0;
    double sender_short_achieved = 0.0;

    auto attempt = [&](double rate) {
        std::vector<double> achieved;
        for (int run = 1; run <= options.runs; run++) {
            const trial_result r = trial(rate);
            std::cout << "  " << label << " run " << run << "/" << options.runs << " at "
                      << describe(r) << std::endl;
            achieved.push_back(r.achieved_gbps);
            if (r.heaps_lost() > 0 || r.heaps_sent == 0)
                return outcome::loss;
            if (r.achieved_gbps < reached * rate) {
                sender_short_at = rate;
                sender_short_achieved = r.achieved_gbps;
                return outcome::sender_short;
            }
        }
        achieved_at_best = achieved;
        return outcome::pass;
    };

    double best = 0.0;
    double first_fail = -1.0;
    for (double rate : rates) {
        const outcome o = attempt(rate);
        if (o == outcome::pass) {
            best = rate;
            continue;
        }
        if (o == outcome::loss)
            first_fail = rate;
        break;
    }
    if (first_fail > 0) {
        double lo = best;
        double hi = first_fail;
        for (int i = 0; i < options.refine; i++) {
            const double mid = (lo + hi) / 2;
            const outcome o = attempt(mid);
            if (o == outcome::pass)
                lo = mid;
            else if (o == outcome::loss)
                hi = mid;
            else
                break;
        }
        best = lo;
        first_fail = hi;
    }

    std::cout << label << ": highest lossless rate " << gbps(best) << " Gb/s";
    if (!achieved_at_best.empty() && best > 0) {
        const auto [lo, hi] =
            std::minmax_element(achieved_at_best.begin(), achieved_at_best.end());
        std::cout << " (" << options.runs << " consecutive runs without loss, achieved "
                  << gbps(*lo) << "-" << gbps(*hi) << " Gb/s)";
    }
    if (first_fail > 0)
        std::cout << "; heaps lost at " << gbps(first_fail) << " Gb/s";
    if (sender_short_at > 0)
        std::cout << "; the sender reached only " << gbps(sender_short_achieved)
                  << " Gb/s of " << gbps(sender_short_at)
                  << " (sender-limited: the receiver's limit was not found)";
    if (first_fail <= 0 && sender_short_at <= 0)
        std::cout << "; no loss up to the highest rate tried";
    std::cout << "; " << load_average() << std::endl;
    return best;
}

int report_lossless_rates(const boost::program_options::variables_map& vm,
                          const std::string& mode,
                          const packet_trial& trial)
{
    search_options search;
    search.rates = parse_rates(vm["rates"].as<std::string>());
    search.runs = vm["runs"].as<int>();
    search.refine = vm["refine"].as<int>();
    std::vector<std::pair<std::size_t, double>> figures;
    for (std::size_t packet : vm["packet"].as<std::vector<std::size_t>>()) {
        bool first = true;
        const auto at_rate = [&](double rate) {
            auto r = trial(packet, rate, first);
            first = false;
            return r;
        };
        figures.emplace_back(
            packet,
            search_lossless_rate(
                at_rate, search, mode + " packet " + std::to_string(packet)));
    }
    for (const auto& [packet, gbps] : figures)
        std::cout << mode << "_lossless_gbps_" << packet << ": " << gbps << "\n";
    return 0;
}

std::string load_average()
{
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return "load average " + a + " " + b + " " + c;
}

double median(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

std::size_t read_rmem_max()
{
    std::ifstream in(rmem_max_path);
    std::size_t value = 0;
    in >> value;
    return value;
}

rmem_max_raise::rmem_max_raise(std::size_t bytes)
    : d_original(read_rmem_max()), d_effective(d_original)
{
    if (d_original == 0 || d_original >= bytes || geteuid() != 0)
        return;
    if (write_rmem_max(bytes)) {
        d_raised = true;
        d_effective = bytes;
    }
}

rmem_max_raise::~rmem_max_raise()
{
    if (d_raised)
        write_rmem_max(d_original);
}

std::string describe_receive_buffer(std::size_t asked,
                                    const rmem_max_raise& raise,
                                    std::size_t granted)
{
    std::ostringstream out;
    out << "receive socket buffer: asked " << asked << " bytes, net.core.rmem_max "
        << raise.original();
    if (raise.effective() != raise.original())
        out << " (raised to " << raise.effective()
            << " while the socket was made, as root, then restored)";
    else if (raise.original() < asked)
        out << " (not raised: run as root to lift it)";
    out << ", granted " << granted;
    return out.str();
}

discard_socket::discard_socket()
{
    d_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (d_fd < 0)
        throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(d_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(d_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        const int err = errno;
        close(d_fd);
        throw std::system_error(err, std::generic_category(), "bind 127.0.0.1:0");
    }
    d_port = ntohs(addr.sin_port);
}

discard_socket::~discard_socket() { close(d_fd); }

std::uint64_t discard_socket::drops() const
{
    std::uint32_t meminfo[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof(meminfo);
    if (getsockopt(d_fd, SOL_SOCKET, SO_MEMINFO, meminfo, &len) != 0)
        return 0;
    return meminfo[SK_MEMINFO_DROPS];
}

unsigned short free_udp_port()
{
    discard_socket probe;
    return probe.port();
}

std::vector<double> parse_rates(const std::string& text)
{
    std::string spaced = text;
    std::replace(spaced.begin(), spaced.end(), ',', ' ');
    std::istringstream in(spaced);
    std::vector<double> out;
    std::string word;
    while (in >> word) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(word, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != word.size() || !(v > 0) || !std::isfinite(v))
            throw std::invalid_argument("--rates: '" + word +
                                        "' is not a rate; give Gb/s > 0, e.g. 2,4,8");
        out.push_back(v);
    }
    if (out.empty())
        throw std::invalid_argument(
            "--rates: give at least one rate in Gb/s, e.g. 2,4,8");
    return out;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_rdma_agent.h"
#include <gnuradio/spead/send_rdma.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {

/*! A command to the agent, plain bytes. */
struct agent_command {
    enum class kind : std::uint8_t { write_raw, send, quit };
    kind what = kind::quit;
    // write_raw
    char address[64] = {};
    std::uint16_t port = 0;
    std::uint64_t message = 0;
    std::uint64_t depth = 0;
    double seconds = 0.0; //!< both: how long to send
    // send
    char endpoint[128] = {};
    std::uint64_t packet = 0;
    std::uint64_t heap_size = 0;
    std::uint64_t burst = 0;
    std::uint64_t max_heaps = 0;
    double rate_gbps = 0.0;
};
static_assert(std::is_trivially_copyable_v<agent_command>);

/*! The agent's answer, plain bytes: ready (error empty or why not), or a command's. */
struct agent_reply {
    char error[512] = {}; //!< ready and write_raw: empty when all went well
    raw_write_result raw;
    cpu_times cpu; //!< write_raw: the agent's CPU time while writing
    sender_message sent;
};
static_assert(std::is_trivially_copyable_v<agent_reply>);

template <std::size_t N>
void copy_text(char (&to)[N], const std::string& text)
{
    std::strncpy(to, text.c_str(), N - 1);
}

/*! Runs \p c in the agent. */
agent_reply serve(const agent_command& c) noexcept
{
    agent_reply r;
    if (c.what == agent_command::kind::write_raw) {
        try {
            raw_write_options o;
            o.address = c.address;
            o.port = c.port;
            o.message = c.message;
            o.depth = c.depth;
            o.seconds = c.seconds;
            const cpu_times before = cpu_times::of_process();
            r.raw = write_raw(o);
            r.cpu = cpu_times::of_process() - before;
        } catch (const std::exception& e) {
            copy_text(r.error, std::string("the raw writer: ") + e.what());
        }
        return r;
    }
    sender_options o;
    o.packet = c.packet;
    o.heap_size = c.heap_size;
    o.seconds = c.seconds;
    o.burst = c.burst;
    o.max_heaps = c.max_heaps;
    o.rate_gbps = c.rate_gbps;
    const std::string endpoint = c.endpoint;
    o.make_stream = [endpoint](boost::asio::io_context& io,
                               const send::stream_config& config) {
        send::rdma_config rdma;
        rdma.set_endpoint(endpoint);
        return std::unique_ptr<send::stream>(
            std::make_unique<send::rdma_stream>(io, config, rdma));
    };
    r.sent = sender_message::of_send(o);
    return r;
}

/*! The agent: enters the namespace, says it is ready, serves commands until quit or
 * until the bench's end closes. \return its exit status */
int run_agent(int fd, int netns_fd, const std::string& netns) noexcept
{
    agent_reply ready;
    if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0) {
        const int err = errno;
        copy_text(ready.error,
                  "--sender-netns: cannot enter '" + netns + "' (setns " +
                      netns_path(netns) + ": " + std::strerror(err) + "); " +
                      (err == EPERM ? "run spead_bench as root (it needs CAP_SYS_ADMIN)"
                                    : "give a network namespace: /run/netns/NAME or "
                                      "/proc/PID/ns/net"));
    }
    if (::send(fd, &ready, sizeof(ready), MSG_NOSIGNAL) != sizeof(ready) ||
        ready.error[0])
        return 1;
    agent_command c;
    while (::recv(fd, &c, sizeof(c), 0) == sizeof(c) &&
           c.what != agent_command::kind::quit) {
        const agent_reply r = serve(c);
        if (::send(fd, &r, sizeof(r), MSG_NOSIGNAL) != sizeof(r))
            return 1;
    }
    return 0;
}

/*! Waits up to \p seconds for the agent's answer on \p fd.
 * \throws std::runtime_error when it ends or does not answer */
agent_reply answer(int fd, double seconds)
{
    pollfd ready{ fd, POLLIN, 0 };
    const int n = poll(&ready, 1, static_cast<int>(seconds * 1000));
    agent_reply r;
    if (n < 0)
        throw std::system_error(
            errno, std::generic_category(), "poll (the sender agent)");
    if (n == 0)
        throw std::runtime_error("the sender agent did not answer within " +
                                 std::to_string(int(seconds)) + " s");
    if (::recv(fd, &r, sizeof(r), 0) != sizeof(r))
        throw std::runtime_error("the sender agent ended without an answer (see its "
                                 "messages above)");
    return r;
}

/*! How long a command may take beyond its sending time: setup and a busy machine. */
constexpr double answer_margin_s = 60.0;

/*! Sends \p c to the agent and waits for its answer, up to its sending time and the
 * margin. \throws as answer() does */
agent_reply ask(int fd, const agent_command& c)
{
    if (::send(fd, &c, sizeof(c), MSG_NOSIGNAL) != sizeof(c))
        throw std::system_error(
            errno, std::generic_category(), "sending the sender agent a command");
    return answer(fd, c.seconds + answer_margin_s);
}

} // namespace

std::string netns_path(const std::string& netns)
{
    return netns.find('/') == std::string::npos ? "/run/netns/" + netns : netns;
}

sender_agent::sender_agent(const std::string& netns)
{
    int netns_fd = -1;
    if (!netns.empty()) {
        netns_fd = open(netns_path(netns).c_str(), O_RDONLY | O_CLOEXEC);
        if (netns_fd < 0)
            throw std::invalid_argument(
                "--sender-netns: '" + netns + "' is not a network namespace (" +
                netns_path(netns) + ": " + std::strerror(errno) +
                "); give a name `ip netns list` shows or a path such as "
                "/proc/PID/ns/net, or create it with `ip netns add " +
                netns + "`");
    }
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
        const int err = errno;
        if (netns_fd >= 0)
            close(netns_fd);
        throw std::system_error(err, std::generic_category(), "socketpair");
    }
    d_pid = fork();
    if (d_pid == 0) {
        close(fds[0]);
        // _exit: no destructor or atexit handler of the parent's objects runs twice.
        _exit(run_agent(fds[1], netns_fd, netns));
    }
    const int err = errno;
    close(fds[1]);
    if (netns_fd >= 0)
        close(netns_fd);
    d_fd = fds[0];
    if (d_pid < 0) {
        close(d_fd);
        throw std::system_error(err, std::generic_category(), "fork (the sender agent)");
    }
    try {
        const agent_reply ready = answer(d_fd, answer_margin_s);
        if (ready.error[0])
            throw std::invalid_argument(ready.error);
    } catch (...) {
        end(); // no destructor runs after a constructor throws
        throw;
    }
}

sender_agent::~sender_agent() { end(); }

void sender_agent::end() noexcept
{
    const agent_command quit;
    ::send(d_fd, &quit, sizeof(quit), MSG_NOSIGNAL);
    close(d_fd);
    // An agent still busy (a command that timed out) is killed after a grace period.
    int status = 0;
    for (int i = 0; i < 50 && waitpid(d_pid, &status, WNOHANG) == 0; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (waitpid(d_pid, &status, WNOHANG) == 0) {
        kill(d_pid, SIGKILL);
        waitpid(d_pid, &status, 0);
    }
}

raw_sent sender_agent::write_raw(const raw_write_options& options)
{
    agent_command c;
    c.what = agent_command::kind::write_raw;
    copy_text(c.address, options.address);
    c.port = options.port;
    c.message = options.message;
    c.depth = options.depth;
    c.seconds = options.seconds;
    const agent_reply r = ask(d_fd, c);
    if (r.error[0])
        throw std::runtime_error(r.error);
    return { r.raw, r.cpu };
}

sender_report sender_agent::send(const std::string& endpoint,
                                 const sender_options& options)
{
    agent_command c;
    c.what = agent_command::kind::send;
    copy_text(c.endpoint, endpoint);
    c.packet = options.packet;
    c.heap_size = options.heap_size;
    c.seconds = options.seconds;
    c.burst = options.burst;
    c.max_heaps = options.max_heaps;
    c.rate_gbps = options.rate_gbps;
    return ask(d_fd, c).sent.report();
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// emu_udp_peer: the kernel-socket side of the traffic tests.
//
//   emu_udp_peer send --destination IP:PORT --count N --size BYTES
//                     [--interface ADDRESS] [--ttl N] [--interval-us US]
//   emu_udp_peer receive --bind IP:PORT --count N --size BYTES
//                        [--group MULTICAST --interface ADDRESS]
//                        [--timeout-ms MS] [--ready-file PATH]
//
// Exit: 0 done (receive: all N arrived intact), 1 not all arrived, 2 usage.
#include "program_support.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace emu_programs;

namespace {

int usage()
{
    fprintf(stderr, "usage: emu_udp_peer send|receive --option value ...\n");
    return exit_usage;
}

// What both directions take: an endpoint (--destination or --bind), --count and --size.
struct run_options {
    in_addr address;
    uint16_t port;
    uint64_t count;
    size_t size;
};

// Exits with the usage when the endpoint option is not IPv4:PORT.
run_options run_options_of(const options& args, const char* endpoint_option)
{
    run_options run{};
    if (!parse_endpoint(args.required(endpoint_option), run.address, run.port))
        exit(usage());
    run.count = static_cast<uint64_t>(args.number("count", 0));
    run.size = static_cast<size_t>(args.number("size", 1024));
    return run;
}

int send_datagrams(const options& args)
{
    const auto [destination, port, count, size] = run_options_of(args, "destination");
    const auto interval = std::chrono::microseconds(args.number("interval-us", 0));
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int ttl = static_cast<int>(args.number("ttl", 1));
    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
    if (args.has("interface")) {
        in_addr interface {
        };
        inet_pton(AF_INET, args.text("interface").c_str(), &interface);
        setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &interface, sizeof(interface));
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr = destination;
    to.sin_port = htons(port);
    std::vector<uint8_t> payload(size);
    for (uint64_t sequence = 0; sequence < count; sequence++) {
        fill_payload(payload.data(), size, sequence);
        // Unconnected: an ICMP port unreachable (nobody listening in the kernel, only
        // the verbs receiver) must not fail the next send. A full queue is retried for
        // at most a second.
        int retries = 0;
        while (sendto(fd,
                      payload.data(),
                      size,
                      0,
                      reinterpret_cast<sockaddr*>(&to),
                      sizeof(to)) < 0) {
            if ((errno != ENOBUFS && errno != EAGAIN) || ++retries > 1000) {
                fprintf(stderr, "emu_udp_peer: sendto: %s\n", strerror(errno));
                return exit_traffic_mismatch;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (interval.count() > 0)
            std::this_thread::sleep_for(interval);
    }
    close(fd);
    printf("emu_udp_peer: sent %llu datagrams of %zu bytes\n",
           static_cast<unsigned long long>(count),
           size);
    return exit_ok;
}

int receive_datagrams(const options& args)
{
    const auto [address, port, count, size] = run_options_of(args, "bind");
    const auto limit = std::chrono::milliseconds(args.number("timeout-ms", 10000));
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int buffer = 32 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof(buffer)) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr = address;
    local.sin_port = htons(port);
    if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
        fprintf(stderr, "emu_udp_peer: bind: %s\n", strerror(errno));
        return exit_usage;
    }
    if (args.has("group")) {
        ip_mreq request{};
        inet_pton(AF_INET, args.text("group").c_str(), &request.imr_multiaddr);
        inet_pton(
            AF_INET, args.text("interface", "0.0.0.0").c_str(), &request.imr_interface);
        if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &request, sizeof(request)) !=
            0) {
            fprintf(stderr, "emu_udp_peer: IP_ADD_MEMBERSHIP: %s\n", strerror(errno));
            return exit_usage;
        }
    }
    announce_ready(args.text("ready-file"));
    arrival_tally tally(count);
    std::vector<uint8_t> datagram(65536);
    const auto deadline = steady_clock::now() + limit;
    while (!tally.complete() && steady_clock::now() < deadline) {
        pollfd wait{ fd, POLLIN, 0 };
        if (poll(&wait, 1, 100) != 1)
            continue;
        const ssize_t length = recv(fd, datagram.data(), datagram.size(), 0);
        if (length >= 0)
            tally.record(datagram.data(), static_cast<size_t>(length), size);
    }
    close(fd);
    printf("emu_udp_peer: %s\n", tally.summary().c_str());
    return tally.complete() ? exit_ok : exit_traffic_mismatch;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2)
        return usage();
    const std::string command = argv[1];
    const options args(argc, argv, 2);
    if (command == "send")
        return send_datagrams(args);
    if (command == "receive")
        return receive_datagrams(args);
    return usage();
}

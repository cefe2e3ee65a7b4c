/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_ibv_check: can the ibverbs transport run on this interface, for this user?
// Prints what it found (interface, RDMA device, device capabilities, this process's
// capabilities and memlock limit), every problem with its fix, and what spead.source /
// spead.sink with transport=auto would do. The verdict comes from the same
// ibv::preflight() the blocks consult, so the two always agree. Exit status: 0 when
// ibverbs is usable, 1 when it is not, 2 for a usage error.

#include "command_line.h"
#include "transport/ibv/device_binding.h"
#include "transport/ibv/preflight.h"
#include "transport/ibv/privileges.h"
#include "transport/rdma/rdma_probe.h"
#include <system_error>
#include <boost/asio/ip/address_v4.hpp>
#include <boost/program_options.hpp>
#include <cstddef>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>

namespace po = boost::program_options;
using namespace gr::spead;

namespace {

/*! Device limits worth knowing when sizing buffers; not part of the verdict. */
struct device_limits {
    int max_qp_wr = 0; //!< work requests per queue
    int max_cqe = 0;   //!< entries per completion queue
    int max_sge = 0;   //!< scatter-gather entries per work request
    std::uint64_t max_mr_size = 0;
};

/*! Queries the limits of the device that owns \p address; nothing if that fails
 * (preflight has already said why). */
std::optional<device_limits> query_limits(const std::string& address)
{
    try {
        const ibv::device_binding binding(boost::asio::ip::make_address_v4(address));
        const ibv_device_attr attr = binding.query_device();
        return device_limits{
            attr.max_qp_wr, attr.max_cqe, attr.max_sge, attr.max_mr_size
        };
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

/*! Prints \p text after \p first, wrapped at 88 columns; continuation lines are
 * indented by the width of \p first. */
void print_wrapped(const std::string& first, const std::string& text)
{
    constexpr std::size_t width = 88;
    const std::string indent(first.size(), ' ');
    std::string out = first;
    std::size_t column = first.size();
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find(' ', pos);
        if (end == std::string::npos)
            end = text.size();
        const std::string word = text.substr(pos, end - pos);
        if (column > indent.size() && column + 1 + word.size() > width) {
            out += "\n" + indent;
            column = indent.size();
        } else if (column > indent.size()) {
            out += ' ';
            column++;
        }
        out += word;
        column += word.size();
        pos = end + 1;
    }
    std::cout << out << "\n";
}

const char* yes_no(bool value) { return value ? "yes" : "no"; }

void line(const std::string& name, const std::string& value)
{
    std::cout << "  " << std::left << std::setw(24) << name + ":" << value << "\n";
}

std::string memlock_text(const ibv::preflight_report& r)
{
    return "soft " + ibv::format_limit(r.memlock_soft) + ", hard " +
           ibv::format_limit(r.memlock_hard) + "; " + ibv::format_limit(r.buffer_bytes) +
           " to pin" +
           (r.cap_ipc_lock ? " (CAP_IPC_LOCK: the limit does not apply)" : "");
}

void print_report(const ibv::preflight_report& r)
{
    std::cout << "ibverbs preflight for \"" << r.interface_query << "\"\n\n";

    std::cout << "Interface\n";
    if (r.interface_name.empty()) {
        line("name", "not found");
    } else {
        line("name", r.interface_name);
        line("IPv4 address", r.interface_address);
        line("MTU", r.mtu > 0 ? std::to_string(r.mtu) + " bytes" : "unknown");
    }

    std::cout << "\nRDMA device\n";
    if (!r.device_found) {
        line("device", "none owns this interface");
    } else {
        line("device", r.device_name);
        line("port",
             std::to_string(r.port_num) +
                 (r.port_active ? " (active)" : " (not active: link down)"));
        line("completion vectors", std::to_string(r.comp_vectors));
        line("flow steering", yes_no(r.flow_steering));
        line("IPv4 checksum offload", yes_no(r.ip_csum_offload));
        if (const auto limits = query_limits(r.interface_address)) {
            line("max work requests/QP", std::to_string(limits->max_qp_wr));
            line("max CQ entries", std::to_string(limits->max_cqe));
            line("max SGEs/work request", std::to_string(limits->max_sge));
        }
    }

    if (r.device_found) {
        // What transport rdma (a connected link over RC queue pairs) needs.
        std::cout << "\nConnected links (transport rdma)\n";
        const rdma::probe_report p =
            rdma::probe(boost::asio::ip::make_address_v4(r.interface_address));
        line("rdma_cm reachable", p.cm_reachable ? "yes" : "no: " + p.cm_error);
        if (p.cm_reachable) {
            line("RC queue pairs", p.rc_supported ? "yes" : "no: " + p.rc_error);
            line("max message size", std::to_string(p.max_message) + " bytes");
            line("max inline", std::to_string(p.max_inline) + " bytes");
        }
    }

    std::cout << "\nThis process\n";
    line("CAP_NET_RAW", yes_no(r.cap_net_raw));
    line("CAP_IPC_LOCK", yes_no(r.cap_ipc_lock));
    line("memlock limit", memlock_text(r));

    if (!r.problems.empty()) {
        std::cout << "\nProblems, each with its fix\n";
        for (std::size_t i = 0; i < r.problems.size(); i++)
            print_wrapped("  " + std::to_string(i + 1) + ". ", r.problems[i]);
    }
    if (!r.notes.empty()) {
        std::cout << "\nNotes\n";
        for (const std::string& note : r.notes)
            print_wrapped("  - ", note);
    }

    std::cout << "\nspead.source / spead.sink with transport=auto on this interface\n";
    if (r.usable())
        std::cout << "  would use ibverbs (device " << r.device_name << ", port "
                  << r.port_num << ").\n";
    else
        std::cout << "  would fall back to udp (kernel sockets) and warn why: "
                  << r.problems.size()
                  << (r.problems.size() == 1 ? " problem" : " problems")
                  << " above (transport=ibverbs would fail instead).\n";

    if (r.usable())
        std::cout << "\n" << r.summary() << "\n";
    else
        std::cout << "\nibverbs cannot be used on \"" << r.interface_query
                  << "\": fix the " << (r.problems.size() == 1 ? "problem" : "problems")
                  << " above.\n";
}

} // namespace

int main(int argc, char** argv)
{
    po::options_description options(
        "spead_ibv_check [options] INTERFACE\n\n"
        "Checks whether the ibverbs transport (spead_recv/spead_send --ibv, "
        "spead.source/\n"
        "spead.sink transport=ibverbs or auto) can run on INTERFACE (a netdev name "
        "or its\n"
        "IPv4 address) in this process, and says how to fix what stands in the way.\n"
        "Run it the way the real program will run (same user, capabilities and "
        "limits).\n"
        "Exit status: 0 usable, 1 not usable, 2 usage error.\n\nOptions");
    std::size_t buffer = 0;
    std::string interface;
    // clang-format off
    options.add_options()
        ("help,h", "show this help")
        ("buffer", po::value(&buffer)->default_value(0), "memory the transport will pin, bytes, checked against the memlock limit (0: the receive default, 16 MiB)");
    // clang-format on
    po::options_description hidden;
    hidden.add_options()("interface", po::value(&interface), "interface");
    try {
        const po::variables_map vm =
            apps::parse_command_line(argc, argv, options, hidden, "interface", 1);
        if (vm.count("help")) {
            std::cout << options;
            return 0;
        }
        if (interface.empty())
            throw po::error("give the INTERFACE to check (a netdev name such as eth0, "
                            "or its IPv4 address)");
    } catch (const po::error& e) {
        std::cerr << "spead_ibv_check: " << e.what() << "\n\n" << options;
        return 2;
    }
    try {
        const ibv::preflight_report report = ibv::preflight(interface, buffer);
        print_report(report);
        return report.usable() ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "spead_ibv_check: " << e.what() << "\n";
        return 1;
    }
}

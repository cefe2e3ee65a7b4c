/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transport/endpoint_argument.h"
#include "transport/rdma/rdma_uri.h"
#include <arpa/inet.h>
#include <filesystem>
#include <stdexcept>

namespace gr {
namespace spead {
namespace transport {

namespace {

bool ends_with(const std::string& text, const std::string& suffix)
{
    return text.size() > suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_port(const std::string& text)
{
    return !text.empty() && text.size() <= 5 &&
           text.find_first_not_of("0123456789") == std::string::npos;
}

/*! An IPv4 address, or a range ADDRESS+N, with nothing else: a port left out. */
bool is_address_without_port(const std::string& text)
{
    if (text.find(':') != std::string::npos)
        return false;
    const std::string address = text.substr(0, text.find('+'));
    in_addr parsed{};
    return inet_pton(AF_INET, address.c_str(), &parsed) == 1;
}

} // namespace

std::string form_name(endpoint_form form)
{
    switch (form) {
    case endpoint_form::addresses:
        return "addresses (HOST:PORT)";
    case endpoint_form::verbs:
        return "an RDMA endpoint (verbs://HOST:PORT)";
    default:
        return "a capture file";
    }
}

namespace {

/*! One entry of a list. */
endpoint_argument
read_entry(const std::string& value, const std::string& parameter, endpoint_use use)
{
    const bool receive = use == endpoint_use::receive;
    if (value.rfind("verbs://", 0) == 0) {
        rdma::parse_uri(value, parameter, receive);
        return { endpoint_form::verbs, value };
    }
    if (ends_with(value, ".pcap") || ends_with(value, ".pcapng") ||
        (receive && std::filesystem::is_regular_file(value)))
        return { endpoint_form::capture_file, value };
    if (is_port(value)) {
        if (receive)
            return { endpoint_form::addresses, ":" + value };
        throw std::invalid_argument(parameter + ": \"" + value +
                                    "\" names no host; write HOST:" + value +
                                    ", e.g. 127.0.0.1:" + value);
    }
    if (is_address_without_port(value))
        throw std::invalid_argument(
            parameter + ": \"" + value + "\" has no port; write " + value +
            ":PORT, e.g. " + value + ":7148" +
            (receive ? " (it names no existing capture file either)" : ""));
    if (value.find(':') == std::string::npos)
        throw std::invalid_argument(
            parameter + ": \"" + value + "\" is neither an endpoint nor " +
            (receive ? "an existing" : "a") + " capture file; write HOST:PORT, " +
            "GROUP+N:PORT (a range), " +
            (receive ? ":PORT or PORT (every address), " : "") +
            "[IPv6]:PORT, verbs://HOST:PORT (rdma) or the path of a capture file "
            "(*.pcap)");
    // The transport's config parses the addresses (parse_endpoints): resolving a name
    // and checking each address is its job, where it is used.
    return { endpoint_form::addresses, value };
}

} // namespace

endpoint_argument read_endpoint_argument(const std::string& text,
                                         const std::string& parameter,
                                         endpoint_use use)
{
    endpoint_argument out{ endpoint_form::addresses, "" };
    std::size_t begin = 0;
    for (;;) {
        const std::size_t comma = text.find(',', begin);
        const endpoint_argument entry = read_entry(
            trim(text.substr(begin, comma == std::string::npos ? comma : comma - begin)),
            parameter,
            use);
        if (begin != 0 &&
            (entry.form != out.form || entry.form == endpoint_form::capture_file))
            throw std::invalid_argument(
                parameter + ": \"" + text + "\" lists " + form_name(out.form) + " and " +
                form_name(entry.form) + "; give one kind of place (a list of " +
                "addresses or of verbs:// endpoints, or one capture file)");
        out.form = entry.form;
        out.text += (begin ? "," : "") + entry.text;
        if (comma == std::string::npos)
            return out;
        begin = comma + 1;
    }
}

} // namespace transport
} // namespace spead
} // namespace gr

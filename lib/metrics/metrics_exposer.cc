/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "metrics/metric_families.h"
#include "metrics/metrics_exposer.h"
#include <arpa/inet.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <map>
#include <mutex>
#include <stdexcept>

namespace gr {
namespace spead {
namespace metrics {

namespace {

bool is_port(const std::string& text)
{
    if (text.empty() || text.size() > 5)
        return false;
    for (char c : text)
        if (c < '0' || c > '9')
            return false;
    return std::stoul(text) <= 65535;
}

/*! The samplers of one address; a scrape calls them all under the lock, so that a
 * registration, once removed, is never called again. */
class collector : public prometheus::Collectable
{
public:
    std::vector<prometheus::MetricFamily> Collect() const override
    {
        std::vector<stream_sample> samples;
        std::lock_guard<std::mutex> lock(d_mutex);
        for (const auto& kv : d_samplers) {
            try {
                auto more = kv.second();
                samples.insert(samples.end(), more.begin(), more.end());
            } catch (const std::exception&) {
                // A stream being torn down: it is simply not in this scrape.
            }
        }
        return metric_families(samples);
    }

    std::uint64_t add(sampler s)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_samplers.emplace(++d_last_id, std::move(s));
        return d_last_id;
    }

    void remove(std::uint64_t id)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_samplers.erase(id);
    }

private:
    mutable std::mutex d_mutex;
    std::map<std::uint64_t, sampler> d_samplers;
    std::uint64_t d_last_id = 0;
};

/*! The process's exposers by address. Never destroyed: registrations held by
 * objects that outlive static destruction (Python's) may still end. */
struct exposer_table {
    std::mutex mutex;
    std::map<std::string, std::weak_ptr<exposer_endpoint>> by_address;
};

exposer_table& table()
{
    static exposer_table* t = new exposer_table;
    return *t;
}

} // namespace

/*! One address's HTTP server and what it serves. */
class exposer_endpoint
{
public:
    explicit exposer_endpoint(const std::string& address)
        : d_collector(std::make_shared<collector>())
    {
        try {
            d_exposer = std::make_unique<prometheus::Exposer>(listen_address(address), 1);
        } catch (const std::invalid_argument&) {
            throw;
        } catch (const std::exception& e) {
            throw std::runtime_error(
                "metrics: cannot listen on " + address + " (" + e.what() +
                "): another process may hold the port, or the address is not this "
                "host's; give a free HOST:PORT, or leave metrics empty");
        }
        d_exposer->RegisterCollectable(d_collector);
    }

    ~exposer_endpoint()
    {
        // Closed under the table's lock: a new exposer for the address waits until
        // the port is free again.
        std::lock_guard<std::mutex> lock(table().mutex);
        d_exposer.reset();
    }

    collector& samplers() { return *d_collector; }
    std::uint16_t port() const
    {
        const auto ports = d_exposer->GetListeningPorts();
        return ports.empty() ? 0 : static_cast<std::uint16_t>(ports.front());
    }

private:
    std::shared_ptr<collector> d_collector;
    std::unique_ptr<prometheus::Exposer> d_exposer; // stops serving before the above
};

std::string listen_address(const std::string& address, const std::string& option)
{
    const auto fail = [&](const std::string& why) {
        return std::invalid_argument(
            option + ": '" + address + "' " + why +
            "; give the address and port to serve Prometheus metrics on, e.g. "
            "127.0.0.1:9148, [::1]:9148 or :9148 (every interface; 0 takes a free "
            "port), or leave it empty for none");
    };
    const auto colon = address.rfind(':');
    if (colon == std::string::npos || !is_port(address.substr(colon + 1)))
        throw fail("is not HOST:PORT");
    const std::string host = address.substr(0, colon);
    const std::string port = address.substr(colon + 1);
    if (host.empty())
        return port;
    in_addr v4{};
    in6_addr v6{};
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
        return address;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']' &&
        inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6) == 1)
        return address;
    throw fail("does not start with a numeric address (names are not looked up)");
}

registration::registration(std::shared_ptr<exposer_endpoint> endpoint, std::uint64_t id)
    : d_endpoint(std::move(endpoint)), d_id(id)
{
}

registration::~registration() { reset(); }

registration::registration(registration&& other) noexcept
    : d_endpoint(std::move(other.d_endpoint)), d_id(other.d_id)
{
}

registration& registration::operator=(registration&& other) noexcept
{
    if (this != &other) {
        reset();
        d_endpoint = std::move(other.d_endpoint);
        d_id = other.d_id;
    }
    return *this;
}

void registration::reset()
{
    if (d_endpoint)
        d_endpoint->samplers().remove(d_id);
    d_endpoint.reset(); // the last one closes the exposer
}

std::uint16_t registration::port() const { return d_endpoint ? d_endpoint->port() : 0; }

registration expose(const std::string& address, sampler sample)
{
    listen_address(address); // a malformed address fails before anything starts
    std::shared_ptr<exposer_endpoint> endpoint;
    {
        // Made under the lock, so that two blocks naming a new address share one.
        std::lock_guard<std::mutex> lock(table().mutex);
        auto& slot = table().by_address[address];
        endpoint = slot.lock();
        if (!endpoint) {
            endpoint = std::make_shared<exposer_endpoint>(address);
            slot = endpoint;
        }
    }
    const std::uint64_t id = endpoint->samplers().add(std::move(sample));
    return registration(std::move(endpoint), id);
}

} // namespace metrics
} // namespace spead
} // namespace gr

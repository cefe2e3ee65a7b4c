/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_rdma_raw.h"
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <system_error>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {

using clock_type = std::chrono::steady_clock;

/*! What the target sends once connected: where the writer may write. */
struct ring_info {
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::uint32_t slots = 0;
};

void check(int result, const char* call)
{
    if (result != 0)
        throw std::system_error(errno, std::generic_category(), std::string(call));
}

/*! A work completion's status as an exception. */
void check(const ibv_wc& wc, const char* what)
{
    if (wc.status != IBV_WC_SUCCESS)
        throw std::system_error(EIO,
                                std::generic_category(),
                                std::string(what) + ": " + ibv_wc_status_str(wc.status));
}

/*! One end: an endpoint made with rdma_create_ep, its registrations, torn down in order.
 */
struct endpoint {
    rdma_cm_id* id = nullptr;
    rdma_cm_id* listener = nullptr; //!< the target's listening id
    std::vector<ibv_mr*> regions;
    bool connected = false;

    endpoint() = default;
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;
    ~endpoint()
    {
        if (connected)
            rdma_disconnect(id);
        for (ibv_mr* mr : regions)
            rdma_dereg_mr(mr);
        if (id)
            rdma_destroy_ep(id);
        if (listener)
            rdma_destroy_ep(listener);
    }
    ibv_mr* keep(ibv_mr* mr, const char* call)
    {
        if (!mr)
            throw std::system_error(errno, std::generic_category(), call);
        regions.push_back(mr);
        return mr;
    }
};

/*! rdma_getaddrinfo and rdma_create_ep for an RC QP of \p send_depth sends. */
rdma_cm_id* create_ep(const raw_write_options& o, bool passive, std::size_t send_depth)
{
    rdma_addrinfo hints{};
    hints.ai_port_space = RDMA_PS_TCP;
    hints.ai_flags = passive ? RAI_PASSIVE : 0;
    rdma_addrinfo* info = nullptr;
    const std::string port = std::to_string(o.port);
    if (rdma_getaddrinfo(o.address.c_str(), port.c_str(), &hints, &info) != 0)
        throw std::system_error(
            errno, std::generic_category(), "rdma_getaddrinfo " + o.address + ":" + port);
    ibv_qp_init_attr attr{};
    attr.cap.max_send_wr = static_cast<std::uint32_t>(send_depth);
    attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.sq_sig_all = 1;
    rdma_cm_id* id = nullptr;
    const int result = rdma_create_ep(&id, info, nullptr, &attr);
    const int err = errno;
    rdma_freeaddrinfo(info);
    if (result != 0)
        throw std::system_error(err, std::generic_category(), "rdma_create_ep");
    return id;
}

/*! The target: accepts one writer, sends its ring, waits for the writer's last SEND
 * (polling, so that a writer that fails never leaves it blocked) up to \p deadline. */
void run_target(const raw_write_options& o,
                endpoint& ep,
                std::atomic<bool>& listening,
                const std::atomic<bool>& given_up,
                clock_type::time_point deadline)
{
    ep.listener = create_ep(o, true, 1);
    check(rdma_listen(ep.listener, 1), "rdma_listen");
    listening = true;
    // Wait on the listener's own channel (rdma_create_ep's ids have one), so that a
    // writer that failed before connecting never leaves this thread blocked.
    pollfd request{ ep.listener->channel->fd, POLLIN, 0 };
    while (poll(&request, 1, 10) == 0 && !given_up.load()) {
        if (clock_type::now() > deadline)
            throw std::system_error(
                ETIMEDOUT, std::generic_category(), "the raw writer never connected");
    }
    if (given_up.load())
        return;
    check(rdma_get_request(ep.listener, &ep.id), "rdma_get_request");
    std::vector<std::uint8_t> ring(o.message * o.depth);
    ibv_mr* ring_mr = ep.keep(rdma_reg_write(ep.id, ring.data(), ring.size()),
                              "rdma_reg_write (the ring)");
    ring_info info;
    info.address = reinterpret_cast<std::uintptr_t>(ring.data());
    info.rkey = ring_mr->rkey;
    info.slots = static_cast<std::uint32_t>(o.depth);
    std::uint8_t done = 0;
    ibv_mr* info_mr = ep.keep(rdma_reg_msgs(ep.id, &info, sizeof(info)), "rdma_reg_msgs");
    ibv_mr* done_mr = ep.keep(rdma_reg_msgs(ep.id, &done, sizeof(done)), "rdma_reg_msgs");
    check(rdma_post_recv(ep.id, nullptr, &done, sizeof(done), done_mr), "rdma_post_recv");
    check(rdma_accept(ep.id, nullptr), "rdma_accept");
    ep.connected = true;
    check(rdma_post_send(ep.id, nullptr, &info, sizeof(info), info_mr, 0),
          "rdma_post_send (the ring)");
    ibv_wc wc{};
    int n = 0;
    for (bool sent = false, over = false; !(sent && over);) {
        while ((n = ibv_poll_cq(ep.id->send_cq, 1, &wc)) > 0) {
            check(wc, "sending the ring's address");
            sent = true;
        }
        while (n >= 0 && (n = ibv_poll_cq(ep.id->recv_cq, 1, &wc)) > 0) {
            check(wc, "receiving the writer's end");
            over = true;
        }
        if (n < 0)
            throw std::system_error(EIO, std::generic_category(), "ibv_poll_cq");
        if (given_up.load() || clock_type::now() > deadline)
            throw std::system_error(
                ETIMEDOUT, std::generic_category(), "the raw writer's end never came");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

} // namespace

raw_write_result write_raw(const raw_write_options& o)
{
    raw_write_result result;
    result.message_bytes = o.message;
    endpoint writer;
    writer.id = create_ep(o, false, o.depth + 1);
    ring_info info;
    ibv_mr* info_mr =
        writer.keep(rdma_reg_msgs(writer.id, &info, sizeof(info)), "rdma_reg_msgs");
    // Before connecting: the target sends as soon as it is connected.
    check(rdma_post_recv(writer.id, nullptr, &info, sizeof(info), info_mr),
          "rdma_post_recv");
    check(rdma_connect(writer.id, nullptr), "rdma_connect");
    writer.connected = true;
    ibv_wc wc{};
    if (rdma_get_recv_comp(writer.id, &wc) < 0)
        throw std::system_error(errno, std::generic_category(), "rdma_get_recv_comp");
    check(wc, "receiving the target's ring");

    std::vector<std::uint8_t> source(o.message, 0);
    ibv_mr* source_mr =
        writer.keep(rdma_reg_msgs(writer.id, source.data(), source.size()),
                    "rdma_reg_msgs (the source)");
    const auto start = clock_type::now();
    const auto stop = start + std::chrono::duration_cast<clock_type::duration>(
                                  std::chrono::duration<double>(o.seconds));
    std::uint64_t posted = 0;
    std::uint64_t completed = 0;
    auto last = start;
    while (true) {
        const bool more = clock_type::now() < stop;
        while (more && posted - completed < info.slots) {
            const std::uint64_t slot = posted % info.slots;
            check(rdma_post_write(writer.id,
                                  nullptr,
                                  source.data(),
                                  source.size(),
                                  source_mr,
                                  0,
                                  info.address + slot * o.message,
                                  info.rkey),
                  "rdma_post_write");
            posted++;
        }
        if (completed == posted)
            break;
        if (rdma_get_send_comp(writer.id, &wc) < 0)
            throw std::system_error(errno, std::generic_category(), "rdma_get_send_comp");
        check(wc, "an RDMA write");
        completed++;
        last = clock_type::now();
    }
    result.messages = completed;
    result.seconds = std::chrono::duration<double>(last - start).count();
    std::uint8_t done = 1;
    ibv_mr* done_mr =
        writer.keep(rdma_reg_msgs(writer.id, &done, sizeof(done)), "rdma_reg_msgs");
    check(rdma_post_send(writer.id, nullptr, &done, sizeof(done), done_mr, 0),
          "rdma_post_send (the end)");
    if (rdma_get_send_comp(writer.id, &wc) < 0)
        throw std::system_error(errno, std::generic_category(), "rdma_get_send_comp");
    check(wc, "sending the end");
    return result;
}

raw_write_result run_raw_writes(const raw_write_options& o, const raw_writer& write)
{
    const auto deadline =
        clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                std::chrono::duration<double>(o.seconds + 30.0));
    endpoint target;
    std::exception_ptr target_error;
    std::atomic<bool> listening{ false };
    std::atomic<bool> failed{ false };
    std::atomic<bool> given_up{ false };     //!< the writer failed
    std::atomic<bool> failed_first{ false }; //!< the target failed before the writer
    std::thread target_thread([&] {
        try {
            run_target(o, target, listening, given_up, deadline);
        } catch (...) {
            target_error = std::current_exception();
            failed = true;
        }
    });
    raw_write_result result;
    std::exception_ptr writer_error;
    try {
        // Connect once the target listens: rdma_cm refuses a connection to nobody.
        while (!listening.load() && !failed.load()) {
            if (clock_type::now() > deadline)
                throw std::system_error(
                    ETIMEDOUT, std::generic_category(), "the raw target never listened");
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (failed.load())
            throw std::runtime_error("the raw target failed"); // its error is reported
        result = write(o);
    } catch (...) {
        writer_error = std::current_exception();
        failed_first = failed.load();
        given_up = true;
    }
    target_thread.join();
    // The first failure is the cause: a target that failed first ends the writer too,
    // and a writer that failed first leaves the target waiting in vain.
    if (target_error && (failed_first.load() || !writer_error))
        std::rethrow_exception(target_error);
    if (writer_error)
        std::rethrow_exception(writer_error);
    return result;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

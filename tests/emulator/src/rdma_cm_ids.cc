/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// rdma_cm_id lifetime: rdma_create_id, rdma_destroy_id, rdma_migrate_id, rdma_set_option
// and the port getters.
#include "log.h"
#include "rdma_cm_id.h"

#include <netinet/in.h>

#include <cerrno>
#include <mutex>
#include <random>

namespace {

// An id's starting PSN, fixed at creation: an application may walk its own QP to RTS
// with rdma_init_qp_attr before the REQ or REP that announces the PSN goes out.
uint32_t random_psn()
{
    static std::mutex mutex;
    static std::mt19937 generator{ std::random_device{}() };
    std::lock_guard<std::mutex> lock(mutex);
    return generator() & 0xffffff;
}

} // namespace

extern "C" {

int rdma_create_id(rdma_event_channel* channel,
                   rdma_cm_id** id,
                   void* context,
                   rdma_port_space ps)
{
    if (id == nullptr) {
        errno = EINVAL;
        return -1;
    }
    // As librdmacm: without any RDMA device, rdma_cm is unusable.
    int device_count = 0;
    ibv_device** devices = ibv_get_device_list(&device_count);
    if (devices != nullptr)
        ibv_free_device_list(devices);
    if (device_count == 0) {
        errno = ENODEV;
        return -1;
    }
    auto* shell = new spead_emu::cm_id_shell;
    if (channel == nullptr) {
        // A synchronous id: its calls wait for their own events (librdmacm's "sync").
        shell->owned_channel = spead_emu::new_channel_shell();
        if (shell->owned_channel == nullptr) {
            const int error = errno;
            delete shell;
            errno = error;
            return -1;
        }
        channel = &shell->owned_channel->channel;
    }
    shell->id.channel = channel;
    shell->id.context = context;
    shell->id.ps = ps;
    shell->local.psn = random_psn();
    shell->id.qp_type =
        (ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB) ? IBV_QPT_UD : IBV_QPT_RC;
    *id = &shell->id;
    return 0;
}

int rdma_destroy_id(rdma_cm_id* id)
{
    if (id == nullptr) {
        errno = EINVAL;
        return -1;
    }
    auto* shell = spead_emu::shell_of(id);
    if (id->event != nullptr) { // a synchronous id's last event, as librdmacm acks it
        rdma_ack_cm_event(id->event);
        id->event = nullptr;
    }
    // As librdmacm: the id is destroyed (its connection closed, its queued events
    // dropped), then the call waits for the events already read to be acknowledged,
    // typically by another thread handling one. Where hardware would wait forever, the
    // emulator names the bug and refuses; the id stays valid for the late acks.
    spead_emu::stop_connection(shell);
    spead_emu::discard_cm_events(shell);
    constexpr std::chrono::seconds acknowledgement_bound{ 2 };
    if (const int unacknowledged =
            spead_emu::wait_for_acknowledgements(shell, acknowledgement_bound)) {
        spead_emu::warn(
            "rdma_destroy_id: %d event(s) of this id were read and not acknowledged "
            "within %lld s; refused with EBUSY. ON HARDWARE THIS CALL HANGS until "
            "rdma_ack_cm_event is called for each",
            unacknowledged,
            static_cast<long long>(acknowledgement_bound.count()));
        errno = EBUSY;
        return -1;
    }
    spead_emu::destroy_channel_shell(shell->owned_channel);
    delete shell;
    return 0;
}

int rdma_migrate_id(rdma_cm_id* id, rdma_event_channel* channel)
{
    if (id == nullptr) {
        errno = EINVAL;
        return -1;
    }
    auto* shell = spead_emu::shell_of(id);
    spead_emu::cm_channel_shell* created = nullptr;
    if (channel == nullptr) {
        created = spead_emu::new_channel_shell();
        if (created == nullptr)
            return -1;
        channel = &created->channel;
    }
    spead_emu::cm_channel_shell* old_owned;
    rdma_event_channel* old_channel;
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        old_channel = id->channel;
        old_owned = shell->owned_channel;
        id->channel = channel;
        shell->owned_channel = created;
    }
    spead_emu::move_cm_events(
        shell, spead_emu::shell_of(old_channel), spead_emu::shell_of(channel));
    spead_emu::destroy_channel_shell(old_owned);
    return 0;
}

int rdma_set_option(rdma_cm_id* id, int level, int optname, void* optval, size_t optlen)
{
    (void)level;
    (void)optval;
    (void)optlen;
    if (id == nullptr) {
        errno = EINVAL;
        return -1;
    }
    // TOS, REUSEADDR, AFONLY, ACK_TIMEOUT...: accepted; the emulated fabric has no use
    // for them.
    spead_emu::trace("rdma_set_option(%d, %d): accepted, not modelled", level, optname);
    return 0;
}

__be16 rdma_get_src_port(rdma_cm_id* id) { return id->route.addr.src_sin.sin_port; }
__be16 rdma_get_dst_port(rdma_cm_id* id) { return id->route.addr.dst_sin.sin_port; }

} // extern "C"

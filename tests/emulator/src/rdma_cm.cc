/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The stand-in librdmacm: just enough of rdma_cm to find the device that owns an IPv4
// address (rdma_create_id + rdma_bind_addr), which is how raw-packet applications pick
// their NIC. Connection management is not emulated.
#include "log.h"
#include "netdev.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

// Exported by the stand-in libibverbs in its private version node.
extern "C" const char* spead_emu_device_netdev(ibv_device* device);

namespace spead_emu {
namespace {

// librdmacm opens every device once and keeps the contexts for the life of the process;
// every rdma_cm_id bound to a device shares its context. So does the emulator.
ibv_context* shared_context(ibv_device* device)
{
    static std::mutex mutex;
    static auto* contexts = new std::map<ibv_device*, ibv_context*>;
    std::lock_guard<std::mutex> lock(mutex);
    ibv_context*& context = (*contexts)[device];
    if (context == nullptr)
        context = ibv_open_device(device);
    return context;
}

// The rdma_cm_id handed out, plus the event channel made for it when the caller passed
// none (librdmacm's "synchronous" ids).
struct cm_id_shell {
    rdma_cm_id id{};
    rdma_event_channel* owned_channel = nullptr;
};

rdma_event_channel* new_event_channel()
{
    auto* channel = new rdma_event_channel;
    // A real fd the application may poll; the emulator never posts CM events on it.
    channel->fd = eventfd(0, EFD_CLOEXEC);
    if (channel->fd < 0) {
        const int error = errno;
        delete channel;
        errno = error;
        return nullptr;
    }
    return channel;
}

ibv_device* device_on_netdev(const std::string& netdev, int& device_count)
{
    ibv_device** devices = ibv_get_device_list(&device_count);
    if (devices == nullptr)
        return nullptr;
    ibv_device* found = nullptr;
    for (int i = 0; i < device_count && found == nullptr; i++) {
        const char* name = spead_emu_device_netdev(devices[i]);
        if (name != nullptr && netdev == name)
            found = devices[i];
    }
    ibv_free_device_list(devices);
    return found;
}

} // namespace
} // namespace spead_emu

extern "C" {

rdma_event_channel* rdma_create_event_channel() { return spead_emu::new_event_channel(); }

void rdma_destroy_event_channel(rdma_event_channel* channel)
{
    if (channel == nullptr)
        return;
    close(channel->fd);
    delete channel;
}

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
        shell->owned_channel = spead_emu::new_event_channel();
        if (shell->owned_channel == nullptr) {
            const int error = errno;
            delete shell;
            errno = error;
            return -1;
        }
        channel = shell->owned_channel;
    }
    shell->id.channel = channel;
    shell->id.context = context;
    shell->id.ps = ps;
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
    auto* shell = reinterpret_cast<spead_emu::cm_id_shell*>(id);
    rdma_destroy_event_channel(shell->owned_channel);
    delete shell;
    return 0;
}

int rdma_bind_addr(rdma_cm_id* id, sockaddr* address)
{
    if (id == nullptr || address == nullptr) {
        errno = EINVAL;
        return -1;
    }
    if (address->sa_family != AF_INET) {
        spead_emu::warn("rdma_bind_addr: only IPv4 addresses are emulated (family %d)",
                        address->sa_family);
        errno = EAFNOSUPPORT;
        return -1;
    }
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(address);
    memcpy(&id->route.addr.src_sin, ipv4, sizeof(*ipv4));
    if (ipv4->sin_addr.s_addr == htonl(INADDR_ANY))
        return 0; // bound to no device yet, as librdmacm does
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof(text));
    const auto netdev = spead_emu::netdev_owning_ipv4(ipv4->sin_addr);
    if (!netdev) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    int device_count = 0;
    ibv_device* device = spead_emu::device_on_netdev(*netdev, device_count);
    if (device == nullptr) {
        spead_emu::warn(
            "rdma_bind_addr(%s): its interface %s has no emulated device; add "
            "it to SPEAD_EMU_NETDEVS",
            text,
            netdev->c_str());
        errno = ENODEV;
        return -1;
    }
    ibv_context* context = spead_emu::shared_context(device);
    if (context == nullptr)
        return -1;
    id->verbs = context;
    id->port_num = 1;
    spead_emu::trace("rdma_bind_addr(%s): %s on %s", text, device->name, netdev->c_str());
    return 0;
}

ibv_context** rdma_get_devices(int* num_devices)
{
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    if (devices == nullptr)
        return nullptr;
    auto** contexts = static_cast<ibv_context**>(calloc(count + 1, sizeof(ibv_context*)));
    int opened = 0;
    for (int i = 0; contexts != nullptr && i < count; i++) {
        if (ibv_context* context = spead_emu::shared_context(devices[i]))
            contexts[opened++] = context;
    }
    ibv_free_device_list(devices);
    if (contexts == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    if (num_devices != nullptr)
        *num_devices = opened;
    return contexts;
}

void rdma_free_devices(ibv_context** list) { free(list); }

} // extern "C"

/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Addresses and devices: rdma_bind_addr, rdma_resolve_addr, rdma_resolve_route,
// rdma_get_devices. An IPv4 address picks the emulated device whose netdev owns it; a
// destination picks its source address by the kernel's routing (a UDP connect), as
// rdma_cm's kernel side does.
#include "log.h"
#include "netdev.h"
#include "rdma_cm_id.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

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

ibv_device* device_on_netdev(const std::string& netdev)
{
    int device_count = 0;
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

std::string text_of(in_addr address)
{
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &address, text, sizeof(text));
    return text;
}

// The source address the kernel's routing picks for a destination; errno when none.
std::optional<in_addr> route_source(const sockaddr_in& destination)
{
    unique_fd probe(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in target = destination;
    if (target.sin_port == 0)
        target.sin_port = htons(9); // any port: connect only routes
    if (!probe ||
        connect(probe.get(), reinterpret_cast<sockaddr*>(&target), sizeof(target)) != 0)
        return std::nullopt;
    sockaddr_in source{};
    socklen_t length = sizeof(source);
    if (getsockname(probe.get(), reinterpret_cast<sockaddr*>(&source), &length) != 0)
        return std::nullopt;
    return source.sin_addr;
}

bool is_ipv4(const sockaddr* address, const char* call)
{
    if (address->sa_family == AF_INET)
        return true;
    warn("%s: only IPv4 addresses are emulated (family %d)", call, address->sa_family);
    errno = EAFNOSUPPORT;
    return false;
}

int bind_cm_socket(const sockaddr_in& address)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
        const int error = errno;
        close(fd);
        errno = error;
        return -1;
    }
    return fd;
}

union ibv_gid ipv4_mapped_gid(in_addr address)
{
    union ibv_gid gid {
    };
    gid.raw[10] = 0xff;
    gid.raw[11] = 0xff;
    memcpy(&gid.raw[12], &address.s_addr, 4);
    return gid;
}

} // namespace

int attach_device(rdma_cm_id* id, const sockaddr_in& address)
{
    if (address.sin_addr.s_addr == htonl(INADDR_ANY))
        return 0; // bound to no device yet, as librdmacm does
    const std::string text = text_of(address.sin_addr);
    const auto netdev = netdev_owning_ipv4(address.sin_addr);
    if (!netdev) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    ibv_device* device = device_on_netdev(*netdev);
    if (device == nullptr) {
        warn("rdma_cm(%s): its interface %s has no emulated device; add it to "
             "SPEAD_EMU_NETDEVS",
             text.c_str(),
             netdev->c_str());
        errno = ENODEV;
        return -1;
    }
    ibv_context* context = shared_context(device);
    if (context == nullptr)
        return -1;
    id->verbs = context;
    id->port_num = 1;
    trace("rdma_cm(%s): %s on %s", text.c_str(), device->name, netdev->c_str());
    return 0;
}

void set_route_gids(rdma_cm_id* id)
{
    id->route.addr.addr.ibaddr.sgid = ipv4_mapped_gid(id->route.addr.src_sin.sin_addr);
    id->route.addr.addr.ibaddr.dgid = ipv4_mapped_gid(id->route.addr.dst_sin.sin_addr);
    id->route.addr.addr.ibaddr.pkey = htons(0xffff);
}

uint8_t source_gid_index(rdma_cm_id* id)
{
    const union ibv_gid wanted = ipv4_mapped_gid(id->route.addr.src_sin.sin_addr);
    ibv_port_attr port{};
    if (id->verbs != nullptr && ibv_query_port(id->verbs, id->port_num, &port) == 0) {
        for (int index = 0; index < port.gid_tbl_len; index++) {
            union ibv_gid gid {
            };
            if (ibv_query_gid(id->verbs, id->port_num, index, &gid) == 0 &&
                memcmp(&gid, &wanted, sizeof(gid)) == 0)
                return static_cast<uint8_t>(index);
        }
    }
    return 0;
}

namespace {

// Takes the bound socket, or binds one to the address with port 0.
int reserve_address(cm_id_shell* shell, const sockaddr_in& address)
{
    unique_fd fd(bind_cm_socket(address));
    if (!fd)
        return -1;
    sockaddr_in bound{};
    socklen_t length = sizeof(bound);
    getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length);
    shell->id.route.addr.src_sin = bound;
    shell->socket = std::move(fd);
    return 0;
}

} // namespace
} // namespace spead_emu

extern "C" {

int rdma_bind_addr(rdma_cm_id* id, sockaddr* address)
{
    if (id == nullptr || address == nullptr) {
        errno = EINVAL;
        return -1;
    }
    if (!spead_emu::is_ipv4(address, "rdma_bind_addr"))
        return -1;
    auto* shell = spead_emu::shell_of(id);
    if (shell->socket) {
        errno = EINVAL; // already bound
        return -1;
    }
    const auto& ipv4 = *reinterpret_cast<const sockaddr_in*>(address);
    if (spead_emu::attach_device(id, ipv4) != 0)
        return -1;
    // The port is taken for real (EADDRINUSE as rdma_cm gives for a port in use).
    return spead_emu::reserve_address(shell, ipv4);
}

int rdma_resolve_addr(rdma_cm_id* id,
                      sockaddr* src_addr,
                      sockaddr* dst_addr,
                      int timeout_ms)
{
    (void)timeout_ms; // resolution is immediate: there is no ARP to wait for
    if (id == nullptr || dst_addr == nullptr) {
        errno = EINVAL;
        return -1;
    }
    if (!spead_emu::is_ipv4(dst_addr, "rdma_resolve_addr") ||
        (src_addr != nullptr && !spead_emu::is_ipv4(src_addr, "rdma_resolve_addr")))
        return -1;
    auto* shell = spead_emu::shell_of(id);
    const auto& destination = *reinterpret_cast<const sockaddr_in*>(dst_addr);
    id->route.addr.dst_sin = destination;
    int status = 0;
    if (src_addr != nullptr && !shell->socket) {
        if (rdma_bind_addr(id, src_addr) != 0)
            return -1;
    }
    if (!shell->socket || id->route.addr.src_sin.sin_addr.s_addr == htonl(INADDR_ANY)) {
        const auto source = spead_emu::route_source(destination);
        if (!source) {
            // As the kernel: no route fails the call itself (ENETUNREACH), no event.
            spead_emu::trace("rdma_resolve_addr: no route: %s", strerror(errno));
            return -1;
        }
        {
            sockaddr_in address{};
            address.sin_family = AF_INET;
            address.sin_addr = *source;
            address.sin_port = id->route.addr.src_sin.sin_port;
            shell->socket.reset();
            // A source on an interface without a device is the kernel's ADDR_ERROR
            // (-ENODEV) when it acquires the device.
            if (spead_emu::attach_device(id, address) != 0 ||
                spead_emu::reserve_address(shell, address) != 0)
                status = -errno;
        }
    }
    if (status == 0) {
        spead_emu::set_route_gids(id);
        shell->state = spead_emu::cm_state::address_resolved;
    } else {
        spead_emu::trace("rdma_resolve_addr: %s", strerror(-status));
    }
    spead_emu::post_cm_event(shell,
                             status == 0 ? RDMA_CM_EVENT_ADDR_RESOLVED
                                         : RDMA_CM_EVENT_ADDR_ERROR,
                             status);
    return shell->owned_channel != nullptr ? spead_emu::complete_synchronously(shell) : 0;
}

int rdma_resolve_route(rdma_cm_id* id, int timeout_ms)
{
    (void)timeout_ms;
    if (id == nullptr) {
        errno = EINVAL;
        return -1;
    }
    auto* shell = spead_emu::shell_of(id);
    if (shell->state != spead_emu::cm_state::address_resolved) {
        errno = EINVAL; // the kernel's answer before ADDR_RESOLVED
        return -1;
    }
    // The path is the port's: a port whose link is down has no route (ROUTE_ERROR).
    ibv_port_attr port{};
    int status = 0;
    if (ibv_query_port(id->verbs, id->port_num, &port) != 0)
        status = -errno;
    else if (port.state != IBV_PORT_ACTIVE)
        status = -ENETUNREACH;
    if (status == 0) {
        ibv_sa_path_rec& path = shell->path;
        path.sgid = id->route.addr.addr.ibaddr.sgid;
        path.dgid = id->route.addr.addr.ibaddr.dgid;
        path.pkey = htons(0xffff);
        path.mtu = port.active_mtu;
        path.hop_limit = 64;
        id->route.path_rec = &path;
        id->route.num_paths = 1;
        shell->state = spead_emu::cm_state::route_resolved;
    }
    spead_emu::post_cm_event(shell,
                             status == 0 ? RDMA_CM_EVENT_ROUTE_RESOLVED
                                         : RDMA_CM_EVENT_ROUTE_ERROR,
                             status);
    return shell->owned_channel != nullptr ? spead_emu::complete_synchronously(shell) : 0;
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

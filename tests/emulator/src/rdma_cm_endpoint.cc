/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// librdmacm's synchronous layer: rdma_getaddrinfo / rdma_freeaddrinfo, rdma_create_ep /
// rdma_destroy_ep and rdma_get_request, over the event-channel calls (the ids they make
// have their own channel, so each call waits for its event).
#include "log.h"
#include "rdma_cm_id.h"

#include <netdb.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

// rdma_getaddrinfo's time limits, as librdmacm's rdma_create_ep uses.
constexpr int resolve_timeout_ms = 2000;

sockaddr* copy_address(const sockaddr* address, socklen_t length)
{
    auto* copy = static_cast<sockaddr*>(malloc(length));
    if (copy != nullptr)
        memcpy(copy, address, length);
    return copy;
}

} // namespace

extern "C" {

int rdma_getaddrinfo(const char* node,
                     const char* service,
                     const rdma_addrinfo* hints,
                     rdma_addrinfo** res)
{
    if (res == nullptr || (node == nullptr && service == nullptr)) {
        errno = EINVAL;
        return -1;
    }
    const int flags = hints != nullptr ? hints->ai_flags : 0;
    addrinfo query{};
    query.ai_family = AF_INET; // the emulated fabric is IPv4 (RoCEv2 IPv4-mapped GIDs)
    query.ai_socktype = SOCK_STREAM;
    if (flags & RAI_PASSIVE)
        query.ai_flags |= AI_PASSIVE;
    if (flags & RAI_NUMERICHOST)
        query.ai_flags |= AI_NUMERICHOST;
    if (hints != nullptr && hints->ai_family != 0 && hints->ai_family != AF_INET) {
        spead_emu::warn("rdma_getaddrinfo: only IPv4 is emulated (ai_family %d)",
                        hints->ai_family);
        errno = EAFNOSUPPORT;
        return -1;
    }
    addrinfo* found = nullptr;
    const int result = getaddrinfo(node, service, &query, &found);
    if (result != 0) {
        // librdmacm returns getaddrinfo's code (negative EAI_*) and sets errno.
        errno = result == EAI_SYSTEM ? errno : ENODEV;
        return result;
    }
    auto* info = static_cast<rdma_addrinfo*>(calloc(1, sizeof(rdma_addrinfo)));
    if (info == nullptr) {
        freeaddrinfo(found);
        errno = ENOMEM;
        return -1;
    }
    info->ai_flags = flags;
    info->ai_family = AF_INET;
    info->ai_qp_type =
        hints != nullptr && hints->ai_qp_type != 0 ? hints->ai_qp_type : IBV_QPT_RC;
    info->ai_port_space = hints != nullptr && hints->ai_port_space != 0
                              ? hints->ai_port_space
                              : RDMA_PS_TCP;
    sockaddr* address = copy_address(found->ai_addr, found->ai_addrlen);
    if (flags & RAI_PASSIVE) {
        info->ai_src_addr = address;
        info->ai_src_len = found->ai_addrlen;
    } else {
        info->ai_dst_addr = address;
        info->ai_dst_len = found->ai_addrlen;
        if (hints != nullptr && hints->ai_src_addr != nullptr) {
            info->ai_src_addr = copy_address(hints->ai_src_addr, hints->ai_src_len);
            info->ai_src_len = hints->ai_src_len;
        }
    }
    freeaddrinfo(found);
    *res = info;
    return 0;
}

void rdma_freeaddrinfo(rdma_addrinfo* res)
{
    while (res != nullptr) {
        rdma_addrinfo* next = res->ai_next;
        free(res->ai_src_addr);
        free(res->ai_dst_addr);
        free(res->ai_src_canonname);
        free(res->ai_dst_canonname);
        free(res->ai_route);
        free(res->ai_connect);
        free(res);
        res = next;
    }
}

int rdma_create_ep(rdma_cm_id** id,
                   rdma_addrinfo* res,
                   ibv_pd* pd,
                   ibv_qp_init_attr* qp_init_attr)
{
    if (id == nullptr || res == nullptr) {
        errno = EINVAL;
        return -1;
    }
    rdma_cm_id* created = nullptr;
    if (rdma_create_id(nullptr,
                       &created,
                       nullptr,
                       static_cast<rdma_port_space>(res->ai_port_space)) != 0)
        return -1;
    created->qp_type = static_cast<ibv_qp_type>(res->ai_qp_type);
    int result;
    if (res->ai_flags & RAI_PASSIVE) {
        result = rdma_bind_addr(created, res->ai_src_addr);
        if (result == 0 && qp_init_attr != nullptr) {
            // rdma_get_request gives each new id a QP like this one.
            spead_emu::shell_of(created)->endpoint_qp_attr = *qp_init_attr;
            spead_emu::shell_of(created)->endpoint_pd = pd;
        }
    } else {
        result = rdma_resolve_addr(
            created, res->ai_src_addr, res->ai_dst_addr, resolve_timeout_ms);
        if (result == 0)
            result = rdma_resolve_route(created, resolve_timeout_ms);
        if (result == 0 && qp_init_attr != nullptr)
            result = rdma_create_qp(created, pd, qp_init_attr);
    }
    if (result != 0) {
        const int error = errno;
        rdma_destroy_ep(created);
        errno = error;
        return -1;
    }
    if (pd != nullptr)
        created->pd = pd;
    *id = created;
    return 0;
}

void rdma_destroy_ep(rdma_cm_id* id)
{
    if (id == nullptr)
        return;
    rdma_destroy_qp(id);
    rdma_destroy_id(id);
}

int rdma_get_request(rdma_cm_id* listen, rdma_cm_id** id)
{
    if (listen == nullptr || id == nullptr) {
        errno = EINVAL;
        return -1;
    }
    auto* listener = spead_emu::shell_of(listen);
    if (listener->owned_channel == nullptr) {
        errno = EINVAL; // only for ids made synchronous (rdma_create_ep, no channel)
        return -1;
    }
    if (spead_emu::complete_synchronously(listener) != 0)
        return -1;
    rdma_cm_event* event = listen->event;
    listen->event = nullptr;
    if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
        rdma_ack_cm_event(event);
        errno = EINVAL;
        return -1;
    }
    rdma_cm_id* request = event->id;
    // The new id is synchronous too, and keeps its CONNECT_REQUEST until rdma_accept.
    if (rdma_migrate_id(request, nullptr) != 0) {
        const int error = errno;
        rdma_ack_cm_event(event);
        rdma_destroy_id(request);
        errno = error;
        return -1;
    }
    request->event = event;
    if (listener->endpoint_qp_attr) {
        ibv_qp_init_attr attr = *listener->endpoint_qp_attr;
        if (rdma_create_qp(request, listener->endpoint_pd, &attr) != 0) {
            const int error = errno;
            rdma_reject(request, nullptr, 0);
            rdma_destroy_id(request);
            errno = error;
            return -1;
        }
    }
    if (listener->endpoint_pd != nullptr)
        request->pd = listener->endpoint_pd;
    *id = request;
    return 0;
}

} // extern "C"

/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// ibv_query_gid, ibv_query_gid_ex, ibv_query_gid_table, ibv_query_gid_type and
// ibv_query_pkey of the emulated RoCE v2 port.
#include "gid_table.h"

#include "device.h"
#include "device_context.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace spead_emu {
namespace {

ibv_gid ipv4_mapped(in_addr address)
{
    ibv_gid gid{};
    gid.raw[10] = 0xff;
    gid.raw[11] = 0xff;
    memcpy(&gid.raw[12], &address, 4);
    return gid;
}

// The GID at \p index of the device's port 1: 0, or the errno rdma-core gives.
int gid_at(ibv_context* context, uint32_t port, uint32_t index, ibv_gid& gid)
{
    device_context* emulated = device_context::from(context);
    if (emulated == nullptr || port != 1)
        return EINVAL;
    const std::vector<ibv_gid> table = gid_table_of(emulated->device().netdev());
    if (index >= table.size())
        return ENODATA; // an empty entry of the 256-entry table
    gid = table[index];
    return 0;
}

} // namespace

std::vector<ibv_gid> gid_table_of(const std::string& netdev)
{
    std::vector<ibv_gid> ipv4, ipv6;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0)
        return {};
    for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
        if (entry->ifa_addr == nullptr || netdev != entry->ifa_name)
            continue;
        if (entry->ifa_addr->sa_family == AF_INET) {
            ipv4.push_back(ipv4_mapped(
                reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr));
        } else if (entry->ifa_addr->sa_family == AF_INET6) {
            ibv_gid gid{};
            memcpy(gid.raw,
                   &reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr,
                   16);
            ipv6.push_back(gid);
        }
    }
    freeifaddrs(list);
    ipv4.insert(ipv4.end(), ipv6.begin(), ipv6.end());
    return ipv4;
}

bool ipv4_of_gid(const ibv_gid& gid, in_addr& address)
{
    static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    if (memcmp(gid.raw, prefix, sizeof(prefix)) != 0)
        return false;
    memcpy(&address, &gid.raw[12], 4);
    return true;
}

} // namespace spead_emu

extern "C" {

int ibv_query_gid(ibv_context* context, uint8_t port_num, int index, ibv_gid* gid)
{
    if (gid == nullptr || index < 0)
        return -1;
    // rdma-core answers an empty entry with the zero GID and success.
    const int error = spead_emu::gid_at(context, port_num, index, *gid);
    if (error == ENODATA) {
        *gid = ibv_gid{};
        return 0;
    }
    return error == 0 ? 0 : -1;
}

// IBVERBS_PRIVATE_34, for providers and librdmacm: the type of a GID entry.
int ibv_query_gid_type(ibv_context* context,
                       uint8_t port_num,
                       unsigned int index,
                       int* type)
{
    ibv_gid gid{};
    if (type == nullptr || spead_emu::gid_at(context, port_num, index, gid) != 0)
        return -1;
    // rdma-core's private enum ibv_gid_type_sysfs (driver.h): 1 is RoCE v2.
    *type = 1;
    return 0;
}

int _ibv_query_gid_ex(ibv_context* context,
                      uint32_t port_num,
                      uint32_t gid_index,
                      ibv_gid_entry* entry,
                      uint32_t flags,
                      size_t entry_size)
{
    if (entry == nullptr || flags != 0 || entry_size < sizeof(ibv_gid_entry))
        return EINVAL;
    ibv_gid gid{};
    if (const int error = spead_emu::gid_at(context, port_num, gid_index, gid))
        return error;
    ibv_gid_entry full{};
    full.gid = gid;
    full.gid_index = gid_index;
    full.port_num = port_num;
    full.gid_type = IBV_GID_TYPE_ROCE_V2;
    full.ndev_ifindex = if_nametoindex(
        spead_emu::device_context::from(context)->device().netdev().c_str());
    memcpy(entry, &full, sizeof(full));
    return 0;
}

ssize_t _ibv_query_gid_table(ibv_context* context,
                             ibv_gid_entry* entries,
                             size_t max_entries,
                             uint32_t flags,
                             size_t entry_size)
{
    spead_emu::device_context* emulated = spead_emu::device_context::from(context);
    if (emulated == nullptr || flags != 0 || entry_size < sizeof(ibv_gid_entry))
        return -EINVAL;
    const auto table = spead_emu::gid_table_of(emulated->device().netdev());
    if (table.size() > max_entries)
        return -EINVAL;
    const unsigned ifindex = if_nametoindex(emulated->device().netdev().c_str());
    for (size_t i = 0; i < table.size(); i++) {
        ibv_gid_entry full{};
        full.gid = table[i];
        full.gid_index = static_cast<uint32_t>(i);
        full.port_num = 1;
        full.gid_type = IBV_GID_TYPE_ROCE_V2;
        full.ndev_ifindex = ifindex;
        memcpy(reinterpret_cast<uint8_t*>(entries) + i * entry_size, &full, sizeof(full));
    }
    return static_cast<ssize_t>(table.size());
}

int ibv_query_pkey(ibv_context* context, uint8_t port_num, int index, __be16* pkey)
{
    if (spead_emu::device_context::from(context) == nullptr || port_num != 1 ||
        pkey == nullptr || index != 0)
        return EINVAL;
    *pkey = htons(0xffff); // RoCE ports hold the default P_Key only
    return 0;
}

} // extern "C"

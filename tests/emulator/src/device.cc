/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "device.h"

#include "log.h"

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace spead_emu {
namespace {

struct device_registry {
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<emulated_device>> by_netdev;
    std::set<std::string> warned_missing;
    bool warned_unset = false;
};

device_registry& registry()
{
    // Never destroyed: NIC threads and late destructors may still use devices at exit.
    static auto* instance = new device_registry;
    return *instance;
}

__be64 guid_from_mac(const mac_address& mac)
{
    // Modified EUI-64: flip the universal/local bit, insert ff:fe in the middle.
    const uint64_t guid =
        static_cast<uint64_t>(mac[0] ^ 0x02) << 56 | static_cast<uint64_t>(mac[1]) << 48 |
        static_cast<uint64_t>(mac[2]) << 40 | 0xffull << 32 | 0xfeull << 24 |
        static_cast<uint64_t>(mac[3]) << 16 | static_cast<uint64_t>(mac[4]) << 8 | mac[5];
    return htobe64(guid);
}

void copy_string(char* destination, size_t capacity, const std::string& text)
{
    snprintf(destination, capacity, "%s", text.c_str());
}

bool enabled_unless_zero(const char* variable)
{
    const char* value = getenv(variable);
    return value == nullptr || strcmp(value, "0") != 0;
}

device_features read_features()
{
    device_features found;
    found.flow_counters = enabled_unless_zero("SPEAD_EMU_FLOW_COUNTERS");
    found.hw_counters = enabled_unless_zero("SPEAD_EMU_HW_COUNTERS");
    found.ip_checksum_offload = enabled_unless_zero("SPEAD_EMU_IP_CSUM");
    if (const char* value = getenv("SPEAD_EMU_MODEL")) {
        if (strcmp(value, "cx5") == 0)
            found.model = device_model::cx5;
        else if (value[0] != '\0' && strcmp(value, "plain") != 0)
            warn("SPEAD_EMU_MODEL=%s is not a model the emulator knows (plain, cx5); "
                 "the plain raw-packet device is used",
                 value);
    }
    if (const char* value = getenv("SPEAD_EMU_COMP_VECTORS")) {
        char* end = nullptr;
        const long vectors = strtol(value, &end, 10);
        if (end != value && *end == '\0' && vectors >= 1 &&
            vectors <= device_limits::max_comp_vectors)
            found.comp_vectors = static_cast<int>(vectors);
        else
            warn("SPEAD_EMU_COMP_VECTORS=%s is not a number from 1 to %d; ignored",
                 value,
                 device_limits::max_comp_vectors);
    }
    return found;
}

} // namespace

const device_features& features()
{
    static const device_features instance = read_features();
    return instance;
}

emulated_device::emulated_device(const netdev_facts& netdev, int index)
    : m_netdev(netdev.name), m_index(index), m_node_guid(guid_from_mac(netdev.mac))
{
    ibv_device& device = m_shell.verbs;
    device.node_type = IBV_NODE_CA;
    device.transport_type =
        IBV_TRANSPORT_IB; // as RoCE NICs report; the port says Ethernet
    copy_string(device.name, sizeof(device.name), "emu_" + m_netdev);
    copy_string(
        device.dev_name, sizeof(device.dev_name), "uverbs" + std::to_string(index));
    // Plausible sysfs paths that do not exist: nothing about the emulator is in sysfs.
    copy_string(device.dev_path,
                sizeof(device.dev_path),
                "/sys/class/infiniband_verbs/uverbs" + std::to_string(index));
    copy_string(device.ibdev_path,
                sizeof(device.ibdev_path),
                std::string("/sys/class/infiniband/") + device.name);
    // Except the port counters applications read through ibdev_path: they live in a
    // private directory that ibdev_path then leads to.
    if (features().hw_counters) {
        m_hw_counters = std::make_unique<port_hw_counters>(device.name);
        if (!m_hw_counters->ibdev_path().empty())
            copy_string(device.ibdev_path,
                        sizeof(device.ibdev_path),
                        m_hw_counters->ibdev_path());
    }
}

void emulated_device::publish_port_counters()
{
    if (m_hw_counters)
        m_hw_counters->publish_out_of_buffer(
            m_port_counters.rx_frames_dropped_no_receive.load());
}

void emulated_device::add_context(device_context* context)
{
    std::lock_guard<std::mutex> lock(m_contexts_mutex);
    m_contexts.push_back(context);
}

void emulated_device::remove_context(device_context* context)
{
    std::lock_guard<std::mutex> lock(m_contexts_mutex);
    m_contexts.erase(std::remove(m_contexts.begin(), m_contexts.end(), context),
                     m_contexts.end());
}

emulated_device* emulated_device::from(ibv_device* device)
{
    return object_shell<ibv_device, emulated_device>::owner_of(device);
}

std::vector<emulated_device*> discover_devices()
{
    device_registry& devices = registry();
    std::lock_guard<std::mutex> lock(devices.mutex);
    const auto names = configured_netdevs();
    if (names.empty() && !devices.warned_unset) {
        devices.warned_unset = true;
        warn("SPEAD_EMU_NETDEVS is empty: no emulated RDMA device exists. Name the "
             "interfaces to emulate, e.g. SPEAD_EMU_NETDEVS=lo");
    }
    std::vector<emulated_device*> found;
    for (const auto& name : names) {
        auto known = devices.by_netdev.find(name);
        if (known != devices.by_netdev.end()) {
            // A removed device (SPEAD_EMU_FAULT_DEVICE_REMOVED) is listed no more.
            if (!known->second->faults().removed())
                found.push_back(known->second.get());
            continue;
        }
        const auto facts = query_netdev(name);
        if (!facts) {
            if (devices.warned_missing.insert(name).second)
                warn("SPEAD_EMU_NETDEVS names %s, which does not exist in this network "
                     "namespace; no device for it",
                     name.c_str());
            continue;
        }
        auto device = std::make_unique<emulated_device>(
            *facts, static_cast<int>(devices.by_netdev.size()));
        trace("device %s on netdev %s (ifindex %d, mtu %d)",
              device->verbs()->name,
              name.c_str(),
              facts->ifindex,
              facts->mtu);
        found.push_back(device.get());
        devices.by_netdev.emplace(name, std::move(device));
    }
    return found;
}

} // namespace spead_emu

using spead_emu::emulated_device;

extern "C" {

ibv_device** ibv_get_device_list(int* num_devices)
{
    // Unlike rdma-core on a kernel without uverbs (NULL, ENOSYS), the emulator always
    // answers with a list, possibly empty.
    const auto devices = spead_emu::discover_devices();
    auto** list =
        static_cast<ibv_device**>(calloc(devices.size() + 1, sizeof(ibv_device*)));
    if (list == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    for (size_t i = 0; i < devices.size(); i++)
        list[i] = devices[i]->verbs();
    if (num_devices != nullptr)
        *num_devices = static_cast<int>(devices.size());
    return list;
}

void ibv_free_device_list(ibv_device** list) { free(list); }

const char* ibv_get_device_name(ibv_device* device)
{
    return device == nullptr ? nullptr : device->name;
}

__be64 ibv_get_device_guid(ibv_device* device)
{
    emulated_device* emulated = emulated_device::from(device);
    return emulated == nullptr ? 0 : emulated->node_guid();
}

int ibv_get_device_index(ibv_device* device)
{
    emulated_device* emulated = emulated_device::from(device);
    return emulated == nullptr ? -1 : emulated->index();
}

__attribute__((visibility("default"))) const char*
spead_emu_device_netdev(ibv_device* device)
{
    emulated_device* emulated = emulated_device::from(device);
    return emulated == nullptr ? nullptr : emulated->netdev().c_str();
}

} // extern "C"

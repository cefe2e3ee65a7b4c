/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transport/endpoint.h"
#include "verbs.h"
#include <arpa/inet.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <system_error>
#include <unistd.h>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gr {
namespace spead {
namespace ibv {

namespace {
/*! A std::system_error whose what() is exactly the message given: std::system_error
 * appends the error's text again after any message, which here already holds it and
 * ends in the fix. */
class verbs_error : public std::system_error
{
public:
    verbs_error(int err, std::string message)
        : std::system_error(err, std::generic_category()), d_message(std::move(message))
    {
    }
    const char* what() const noexcept override { return d_message.c_str(); }

private:
    std::string d_message;
};
} // namespace

void throw_error(const std::string& what, int err, const std::string& fix)
{
    std::string message = what + ": " + std::strerror(err);
    if (!fix.empty())
        message += ". " + fix;
    throw verbs_error(err, std::move(message));
}

void mapping_deleter::operator()(std::uint8_t* p) const { munmap(p, size); }

mapping_ptr allocate_ring(std::size_t bytes)
{
    // mmap gives page-aligned, zeroed memory that registers cleanly with the NIC.
    void* p =
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw_error("allocating a " + std::to_string(bytes) + "-byte ring", errno);
    return mapping_ptr(static_cast<std::uint8_t*>(p), mapping_deleter{ bytes });
}

namespace {

mac_address read_interface_mac(const std::string& name)
{
    mac_address mac{};
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return mac;
    ifreq request{};
    std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFHWADDR, &request) == 0)
        std::memcpy(mac.data(), request.ifr_hwaddr.sa_data, mac.size());
    close(fd);
    return mac;
}

std::string no_device_message(const boost::asio::ip::address_v4& address,
                              const std::string& name)
{
    return "no RDMA device owns interface " + address.to_string() +
           (name.empty() ? "" : " (" + name + ")") +
           ". ibverbs needs a NIC whose driver provides verbs (Mellanox/NVIDIA ConnectX "
           "with rdma-core's mlx4/mlx5 providers); check `ibv_devices` and `rdma link "
           "show`, or use transport udp (auto falls back to it)";
}

} // namespace

device_binding::device_binding(const boost::asio::ip::address_v4& interface_address)
    : d_address(interface_address)
{
    try {
        d_interface_name =
            transport::resolve_interface(interface_address.to_string(), "interface").name;
    } catch (const std::invalid_argument&) {
        // Not a local address: rdma_bind_addr below reports it with the RDMA context.
    }
    if (!d_interface_name.empty())
        d_interface_mac = read_interface_mac(d_interface_name);

    rdma_cm_id* id = nullptr;
    errno = 0;
    // A NULL event channel puts the id in synchronous mode: we only bind it.
    if (rdma_create_id(nullptr, &id, nullptr, RDMA_PS_UDP) != 0)
        throw_error("rdma_create_id",
                    errno ? errno : ENODEV,
                    no_device_message(d_address, d_interface_name));
    d_id.reset(id);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(interface_address.to_uint());
    errno = 0;
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&sin)) != 0)
        throw_error("rdma_bind_addr(" + d_address.to_string() + ")",
                    errno ? errno : ENODEV,
                    no_device_message(d_address, d_interface_name));
    if (!id->verbs)
        throw_error("rdma_bind_addr(" + d_address.to_string() + ")",
                    ENODEV,
                    no_device_message(d_address, d_interface_name));
}

ibv_device_attr device_binding::query_device() const
{
    ibv_device_attr attr{};
    const int status = ibv_query_device(context(), &attr);
    if (status != 0)
        throw_error("ibv_query_device", status);
    return attr;
}

ibv_device_attr_ex device_binding::query_device_ex() const
{
    ibv_device_attr_ex attr{};
    const int status = ibv_query_device_ex(context(), nullptr, &attr);
    if (status != 0)
        throw_error("ibv_query_device_ex", status);
    return attr;
}

ibv_port_attr device_binding::query_port() const
{
    ibv_port_attr attr{};
    const int status = ibv_query_port(context(), port_num(), &attr);
    if (status != 0)
        throw_error("ibv_query_port", status);
    return attr;
}

bool device_binding::has_flow_steering() const
{
    return query_device().device_cap_flags & IBV_DEVICE_MANAGED_FLOW_STEERING;
}

bool device_binding::has_ip_checksum_offload() const
{
    try {
        return query_device_ex().raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM;
    } catch (const std::system_error&) {
        return false; // old providers without the extended query: checksum in software
    }
}

int device_binding::num_comp_vectors() const
{
    return context()->num_comp_vectors > 0 ? context()->num_comp_vectors : 1;
}

std::string device_binding::device_name() const
{
    const char* name = ibv_get_device_name(context()->device);
    return name ? name : "?";
}

std::string device_binding::port_counter_path(const std::string& counter) const
{
    return std::string(context()->device->ibdev_path) + "/ports/" +
           std::to_string(port_num()) + "/hw_counters/" + counter;
}

comp_channel_ptr create_comp_channel(ibv_context* context)
{
    errno = 0;
    ibv_comp_channel* channel = ibv_create_comp_channel(context);
    if (!channel)
        throw_error("ibv_create_comp_channel", errno ? errno : ENOMEM);
    return comp_channel_ptr(channel);
}

cq_ptr
create_cq(ibv_context* context, int entries, ibv_comp_channel* channel, int comp_vector)
{
    errno = 0;
    ibv_cq* cq = ibv_create_cq(context, entries, nullptr, channel, comp_vector);
    if (!cq)
        throw_error("ibv_create_cq(" + std::to_string(entries) + " entries)",
                    errno ? errno : ENOMEM,
                    "reduce buffer_size or max_size (the device limits completion queue "
                    "entries, see spead_ibv_check)");
    return cq_ptr(cq);
}

pd_ptr alloc_pd(ibv_context* context)
{
    errno = 0;
    ibv_pd* pd = ibv_alloc_pd(context);
    if (!pd)
        throw_error("ibv_alloc_pd", errno ? errno : ENOMEM);
    return pd_ptr(pd);
}

qp_ptr
create_raw_packet_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const ibv_qp_cap& cap)
{
    ibv_qp_init_attr attr{};
    attr.send_cq = send_cq;
    attr.recv_cq = recv_cq;
    attr.qp_type = IBV_QPT_RAW_PACKET;
    attr.cap = cap;
    errno = 0;
    ibv_qp* qp = ibv_create_qp(pd, &attr);
    if (!qp) {
        const int err = errno ? errno : EINVAL;
        // Some kernels report a missing CAP_NET_RAW as EINVAL rather than EPERM.
        if (err == EPERM || err == EACCES || (err == EINVAL && !has_cap_net_raw()))
            throw_error("ibv_create_qp(RAW_PACKET)",
                        EPERM,
                        "Raw-packet queue pairs need CAP_NET_RAW. " + cap_net_raw_fix());
        throw_error("ibv_create_qp(RAW_PACKET)", err);
    }
    return qp_ptr(qp);
}

void modify_qp(ibv_qp* qp, ibv_qp_state state, int port_num)
{
    ibv_qp_attr attr{};
    attr.qp_state = state;
    int mask = IBV_QP_STATE;
    if (port_num > 0) {
        attr.port_num = std::uint8_t(port_num);
        mask |= IBV_QP_PORT;
    }
    const int status = ibv_modify_qp(qp, &attr, mask);
    if (status != 0)
        throw_error("ibv_modify_qp to state " + std::to_string(int(state)), status);
}

mr_ptr register_memory(ibv_pd* pd, const void* address, std::size_t size, int access)
{
    errno = 0;
    ibv_mr* mr = ibv_reg_mr(pd, const_cast<void*>(address), size, access);
    if (!mr) {
        const int err = errno ? errno : ENOMEM;
        if (err == ENOMEM || err == EPERM || err == EAGAIN)
            throw_error(
                "ibv_reg_mr(" + std::to_string(size) + " bytes)", err, memlock_fix(size));
        throw_error("ibv_reg_mr(" + std::to_string(size) + " bytes)", err);
    }
    return mr_ptr(mr);
}

flow_ptr create_udp_flow(ibv_qp* qp,
                         const boost::asio::ip::udp::endpoint& endpoint,
                         const mac_address& interface_mac,
                         int port_num)
{
    return create_udp_flow(qp, endpoint, interface_mac, port_num, nullptr);
}

flow_ptr create_udp_flow(ibv_qp* qp,
                         const boost::asio::ip::udp::endpoint& endpoint,
                         const mac_address& interface_mac,
                         int port_num,
                         ibv_counters* counters)
{
    struct {
        ibv_flow_attr attr;
        ibv_flow_spec_eth eth;
        ibv_flow_spec_ipv4 ip;
        ibv_flow_spec_tcp_udp udp;
        ibv_flow_spec_counter_action count; // only with counters
    } __attribute__((packed, aligned(8))) rule;
    std::memset(&rule, 0, sizeof(rule));
    rule.attr.type = IBV_FLOW_ATTR_NORMAL;
    rule.attr.size = counters ? sizeof(rule) : offsetof(decltype(rule), count);
    rule.attr.num_of_specs = counters ? 4 : 3;
    rule.attr.port = std::uint8_t(port_num);

    rule.eth.type = IBV_FLOW_SPEC_ETH;
    rule.eth.size = sizeof(rule.eth);
    rule.ip.type = IBV_FLOW_SPEC_IPV4;
    rule.ip.size = sizeof(rule.ip);
    const auto address = endpoint.address().to_v4();
    if (!address.is_unspecified()) {
        // Match the destination MAC too: ConnectX-3 requires an Ethernet match.
        const mac_address dst =
            address.is_multicast() ? multicast_mac(address.to_uint()) : interface_mac;
        std::memcpy(rule.eth.val.dst_mac, dst.data(), dst.size());
        std::memset(rule.eth.mask.dst_mac, 0xff, sizeof(rule.eth.mask.dst_mac));
        const std::uint32_t ip = htonl(address.to_uint());
        std::memcpy(&rule.ip.val.dst_ip, &ip, sizeof(ip));
        std::memset(&rule.ip.mask.dst_ip, 0xff, sizeof(rule.ip.mask.dst_ip));
    }
    rule.udp.type = IBV_FLOW_SPEC_UDP;
    rule.udp.size = sizeof(rule.udp);
    rule.udp.val.dst_port = htons(endpoint.port());
    rule.udp.mask.dst_port = 0xffff;
    if (counters) {
        rule.count.type = IBV_FLOW_SPEC_ACTION_COUNT;
        rule.count.size = sizeof(rule.count);
        rule.count.counters = counters;
    }

    errno = 0;
    ibv_flow* flow = ibv_create_flow(qp, reinterpret_cast<ibv_flow_attr*>(&rule));
    if (!flow) {
        std::ostringstream what;
        what << "ibv_create_flow(" << endpoint << ")";
        throw_error(
            what.str(),
            errno ? errno : EOPNOTSUPP,
            "The device refused a flow-steering rule: ConnectX-3 needs "
            "`options mlx4_core log_num_mgm_entry_size=-1` (then reload mlx4_core); "
            "see docs/ibverbs.md");
    }
    return flow_ptr(flow);
}

counters_ptr create_flow_packet_counter(ibv_context* context, int& error)
{
    ibv_counters_init_attr init{};
    errno = 0;
    counters_ptr counters(ibv_create_counters(context, &init));
    if (!counters) {
        error = errno ? errno : EOPNOTSUPP;
        return nullptr;
    }
    ibv_counter_attach_attr attach{};
    attach.counter_desc = IBV_COUNTER_PACKETS;
    attach.index = 0;
    // NULL flow: a static attach, bound when a flow is created with the counters.
    error = ibv_attach_counters_point_flow(counters.get(), &attach, nullptr);
    if (error != 0)
        return nullptr;
    return counters;
}

int read_flow_packet_counter(ibv_counters* counters, std::uint64_t& packets)
{
    std::uint64_t value = 0;
    // flags 0: a volatile read from the device, not the driver's periodic cache, so a
    // final reconciliation sees every frame counted so far.
    const int status = ibv_read_counters(counters, &value, 1, 0);
    if (status == 0)
        packets = value;
    return status;
}

int read_counter_file(const std::string& path, std::uint64_t& value)
{
    errno = 0;
    std::ifstream file(path);
    if (!file)
        return errno ? errno : ENOENT;
    std::uint64_t parsed = 0;
    if (!(file >> parsed))
        return EINVAL;
    value = parsed;
    return 0;
}

bool has_cap_net_raw()
{
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &header, data) != 0)
        return false;
    return data[CAP_NET_RAW / 32].effective & (1u << (CAP_NET_RAW % 32));
}

std::string cap_net_raw_fix()
{
    return "Give the capability to the program that runs, never to Python and never by "
           "running as root: for the tools, `sudo setcap cap_net_raw+ep "
           "/usr/local/bin/spead_recv`; for GRC or a Python flowgraph, start it with the "
           "capability, e.g. `sudo setpriv --reuid=$(id -u) --regid=$(id -g) "
           "--init-groups "
           "--inh-caps=+net_raw --ambient-caps=+net_raw -- env HOME=$HOME "
           "gnuradio-companion` (or a "
           "systemd "
           "unit with AmbientCapabilities=CAP_NET_RAW). See docs/ibverbs.md";
}

std::pair<rlim_t, rlim_t> memlock_limit()
{
    rlimit limit{};
    if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0)
        return { 0, 0 };
    return { limit.rlim_cur, limit.rlim_max };
}

std::string format_limit(rlim_t bytes)
{
    if (bytes == RLIM_INFINITY)
        return "unlimited";
    if (bytes >= (rlim_t(1) << 20) && bytes % (rlim_t(1) << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

std::string memlock_fix(std::size_t needed)
{
    const auto [soft, hard] = memlock_limit();
    return "The NIC must pin " + format_limit(needed) +
           " of memory but RLIMIT_MEMLOCK is " + format_limit(soft) + " (hard limit " +
           format_limit(hard) +
           "). Raise it: `ulimit -l unlimited` in the shell that starts the program, "
           "`memlock unlimited` for the user in /etc/security/limits.conf, or "
           "LimitMEMLOCK=infinity in a systemd unit; or reduce buffer_size";
}

bool lookup_neighbour(const boost::asio::ip::address_v4& host,
                      const std::string& interface_name,
                      mac_address& out)
{
    // /proc/net/arp: IP address, HW type, Flags, HW address, Mask, Device
    std::ifstream arp("/proc/net/arp");
    std::string line;
    std::getline(arp, line); // header
    const std::string wanted = host.to_string();
    while (std::getline(arp, line)) {
        std::istringstream fields(line);
        std::string ip, hw_type, flags, mac, mask, device;
        if (!(fields >> ip >> hw_type >> flags >> mac >> mask >> device))
            continue;
        if (ip != wanted || (!interface_name.empty() && device != interface_name))
            continue;
        if ((std::stoul(flags, nullptr, 16) & 0x2) == 0) // ATF_COM: resolved
            continue;
        unsigned int b[6];
        if (std::sscanf(mac.c_str(),
                        "%x:%x:%x:%x:%x:%x",
                        &b[0],
                        &b[1],
                        &b[2],
                        &b[3],
                        &b[4],
                        &b[5]) != 6)
            continue;
        for (int i = 0; i < 6; i++)
            out[i] = std::uint8_t(b[i]);
        return true;
    }
    return false;
}

} // namespace ibv
} // namespace spead
} // namespace gr

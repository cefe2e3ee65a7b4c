/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "verbs_test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

namespace verbs_test {
namespace {

int control_socket() { return socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); }

void write_sysctl(const std::string& path, const char* value)
{
    std::ofstream file(path);
    file << value;
    ASSERT_TRUE(file.good()) << "cannot write " << path;
}

void set_loopback_offload(uint32_t command)
{
    const int fd = control_socket();
    ethtool_value value{ command, 0 };
    ifreq request{};
    strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    request.ifr_data = reinterpret_cast<char*>(&value);
    ioctl(fd, SIOCETHTOOL, &request); // lo's TX checksum is fixed on: that one fails
    close(fd);
}

class private_loopback_environment : public ::testing::Environment
{
public:
    void SetUp() override
    {
        // A private namespace per test process: tests cannot see each other's frames
        // and can change loopback's MTU freely.
        ASSERT_EQ(unshare(CLONE_NEWNET), 0)
            << "unshare(CLONE_NEWNET): " << strerror(errno)
            << ". The fidelity tests need root (CAP_SYS_ADMIN) for a private network "
               "namespace.";
        const int fd = control_socket();
        ifreq request{};
        strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
        ASSERT_EQ(ioctl(fd, SIOCGIFFLAGS, &request), 0);
        request.ifr_flags |= IFF_UP;
        ASSERT_EQ(ioctl(fd, SIOCSIFFLAGS, &request), 0);
        close(fd);
        // Raw frames injected on lo with 127.0.0.1 at both ends are martians unless the
        // namespace allows them (no dst cache entry, unlike kernel-generated packets).
        write_sysctl("/proc/sys/net/ipv4/conf/all/route_localnet", "1");
        write_sysctl("/proc/sys/net/ipv4/conf/lo/route_localnet", "1");
        write_sysctl("/proc/sys/net/ipv4/conf/all/accept_local", "1");
        write_sysctl("/proc/sys/net/ipv4/conf/lo/accept_local", "1");
        // Frames as a wire would carry them: no GSO/TSO superframes, no GRO merging.
        set_loopback_offload(ETHTOOL_SGSO);
        set_loopback_offload(ETHTOOL_STSO);
        set_loopback_offload(ETHTOOL_SGRO);
        ASSERT_TRUE(emulator().find())
            << "The verbs library in this process is not the emulated NIC. Run with "
               "LD_LIBRARY_PATH=<build>/tests/emulator/lib (see docs/testing.md).";
    }
};

} // namespace

void install_private_loopback_environment()
{
    setenv("SPEAD_EMU_NETDEVS", "lo", 0);
    ::testing::AddGlobalTestEnvironment(new private_loopback_environment);
}

spead_emu_api& emulator()
{
    static spead_emu_api api;
    return api;
}

void set_loopback_mtu(int mtu)
{
    const int fd = control_socket();
    ifreq request{};
    strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    request.ifr_mtu = mtu;
    EXPECT_EQ(ioctl(fd, SIOCSIFMTU, &request), 0) << strerror(errno);
    close(fd);
}

void run_command(const std::string& command)
{
    ASSERT_EQ(system(command.c_str()), 0) << command;
}

context_ptr open_loopback_device()
{
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    context_ptr context;
    for (int i = 0; devices != nullptr && i < count; i++) {
        if (strcmp(ibv_get_device_name(devices[i]), "emu_lo") == 0)
            context.reset(ibv_open_device(devices[i]));
    }
    ibv_free_device_list(devices);
    EXPECT_NE(context, nullptr) << "no emu_lo device";
    return context;
}

ibv_device_attr_ex query_device_ex(ibv_context* context)
{
    ibv_device_attr_ex attr{};
    EXPECT_EQ(ibv_query_device_ex(context, nullptr, &attr), 0);
    return attr;
}

void make_queue_pair_parts(queue_pair_parts& made,
                           int cq_entries,
                           bool with_channel,
                           ibv_qp_type type,
                           const ibv_qp_cap& cap,
                           bool signal_all)
{
    made.context = open_loopback_device();
    if (!made.context)
        return;
    made.pd.reset(ibv_alloc_pd(made.context.get()));
    if (with_channel)
        made.channel.reset(ibv_create_comp_channel(made.context.get()));
    made.send_cq.reset(
        ibv_create_cq(made.context.get(), cq_entries, nullptr, nullptr, 0));
    made.receive_cq.reset(
        ibv_create_cq(made.context.get(), cq_entries, nullptr, made.channel.get(), 0));
    ibv_qp_init_attr attr =
        qp_init_attr(made.send_cq.get(), made.receive_cq.get(), type, cap);
    attr.sq_sig_all = signal_all ? 1 : 0;
    made.qp.reset(ibv_create_qp(made.pd.get(), &attr));
    EXPECT_NE(made.qp, nullptr)
        << "ibv_create_qp(" << (type == IBV_QPT_RC ? "RC" : "RAW_PACKET")
        << "): " << strerror(errno);
}

raw_queue_pair make_raw_queue_pair(const queue_pair_options& options)
{
    raw_queue_pair made;
    make_queue_pair_parts(made,
                          options.cq_entries,
                          options.with_channel,
                          IBV_QPT_RAW_PACKET,
                          { options.send_wr,
                            options.receive_wr,
                            options.send_sge,
                            options.receive_sge,
                            options.inline_data });
    return made;
}

int move_to_init(ibv_qp* qp)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT);
}

int move_to_rtr(ibv_qp* qp)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

int move_to_rts(ibv_qp* qp)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTS;
    return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

void bring_up(ibv_qp* qp, ibv_qp_state state)
{
    ASSERT_EQ(move_to_init(qp), 0);
    if (state == IBV_QPS_INIT)
        return;
    ASSERT_EQ(move_to_rtr(qp), 0);
    if (state == IBV_QPS_RTR)
        return;
    ASSERT_EQ(move_to_rts(qp), 0);
}

ibv_qp_state current_state(ibv_qp* qp)
{
    ibv_qp_attr attr{};
    ibv_qp_init_attr init_attr{};
    EXPECT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init_attr), 0);
    return attr.qp_state;
}

flow_ptr steer_loopback_udp(ibv_qp* qp, uint16_t port)
{
    const uint8_t loopback_mac[6] = {};
    udp_flow_rule rule = make_udp_flow_rule(loopback_mac, htonl(INADDR_LOOPBACK), port);
    flow_ptr flow(ibv_create_flow(qp, &rule.attr));
    EXPECT_NE(flow, nullptr) << "ibv_create_flow: " << strerror(errno);
    return flow;
}

raw_queue_pair make_loopback_receiver(uint16_t port, const queue_pair_options& options)
{
    raw_queue_pair made = make_raw_queue_pair(options);
    made.flow = steer_loopback_udp(made.qp.get(), port);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    return made;
}

void send_kernel_datagram(const std::string& payload, uint16_t port, const char* address)
{
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in destination{};
    destination.sin_family = AF_INET;
    destination.sin_port = htons(port);
    inet_pton(AF_INET, address, &destination.sin_addr);
    EXPECT_EQ(sendto(fd,
                     payload.data(),
                     payload.size(),
                     0,
                     reinterpret_cast<sockaddr*>(&destination),
                     sizeof(destination)),
              static_cast<ssize_t>(payload.size()))
        << strerror(errno);
    close(fd);
}

std::vector<uint8_t> make_loopback_udp_frame(uint16_t port, const std::string& payload)
{
    std::vector<uint8_t> frame(udp_frame_overhead + payload.size(), 0);
    uint8_t* ip = frame.data() + 14;
    uint8_t* udp = ip + 20;
    frame[12] = 0x08; // IPv4; both MACs stay zero, as on loopback
    ip[0] = 0x45;
    const uint16_t total = htons(static_cast<uint16_t>(20 + 8 + payload.size()));
    memcpy(ip + 2, &total, 2);
    ip[6] = 0x40; // DF
    ip[8] = 64;   // TTL
    ip[9] = 17;   // UDP
    const in_addr_t loopback = htonl(INADDR_LOOPBACK);
    memcpy(ip + 12, &loopback, 4);
    memcpy(ip + 16, &loopback, 4);
    const uint16_t source_port = htons(40000);
    const uint16_t destination_port = htons(port);
    const uint16_t udp_length = htons(static_cast<uint16_t>(8 + payload.size()));
    memcpy(udp, &source_port, 2);
    memcpy(udp + 2, &destination_port, 2);
    memcpy(udp + 4, &udp_length, 2);
    memcpy(udp + 8, payload.data(), payload.size());
    return frame;
}

ibv_sge registered_buffer::sge(size_t offset, uint32_t length) const
{
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(bytes.data() + offset);
    sge.length = length != 0 ? length : static_cast<uint32_t>(bytes.size() - offset);
    sge.lkey = mr->lkey;
    return sge;
}

registered_buffer register_buffer(ibv_pd* pd, size_t size, int access)
{
    registered_buffer buffer;
    buffer.bytes.assign(size, 0);
    buffer.mr.reset(ibv_reg_mr(pd, buffer.bytes.data(), size, access));
    EXPECT_NE(buffer.mr, nullptr) << "ibv_reg_mr: " << strerror(errno);
    return buffer;
}

int post_one_receive(ibv_qp* qp, uint64_t wr_id, const ibv_sge& sge)
{
    ibv_sge list = sge;
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &list;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp, &wr, &bad);
}

std::vector<ibv_wc>
poll_completions(ibv_cq* cq, size_t wanted, std::chrono::milliseconds limit)
{
    std::vector<ibv_wc> completions;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (completions.size() < wanted && std::chrono::steady_clock::now() < deadline) {
        ibv_wc wc[16];
        const int got = ibv_poll_cq(cq, 16, wc);
        if (got < 0)
            break;
        completions.insert(completions.end(), wc, wc + got);
        if (got == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return completions;
}

kernel_udp_receiver::kernel_udp_receiver(uint16_t port, const char* address)
    : m_fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0))
{
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_port = htons(port);
    inet_pton(AF_INET, address, &local.sin_addr);
    EXPECT_EQ(bind(m_fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)), 0)
        << strerror(errno);
}

kernel_udp_receiver::~kernel_udp_receiver() { close(m_fd); }

bool kernel_udp_receiver::receive(std::string& payload, std::chrono::milliseconds limit)
{
    pollfd readable{ m_fd, POLLIN, 0 };
    if (poll(&readable, 1, static_cast<int>(limit.count())) != 1)
        return false;
    char buffer[65536];
    const ssize_t length = recv(m_fd, buffer, sizeof(buffer), 0);
    if (length < 0)
        return false;
    payload.assign(buffer, static_cast<size_t>(length));
    return true;
}

} // namespace verbs_test

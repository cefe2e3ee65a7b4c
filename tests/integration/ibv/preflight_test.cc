/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// ibv::preflight over the emulated NIC, in host 2 of a two-host topology (eth0 has the
// emulated device, lo has none). Conditions this process cannot have (no CAP_NET_RAW,
// a low memlock limit, other emulator switches, the real rdma-core) run in a child
// process that prints its report; combinations no machine here has (a device without
// flow steering) go through diagnose() directly.

#include "ibv_test_support.h"
#include "transport/ibv/preflight.h"
#include <gtest/gtest.h>
#include <unistd.h>
#include <iostream>
#include <string>

namespace {

using namespace gr::spead;
using namespace ibv_test;

std::string joined(const std::vector<std::string>& lines)
{
    std::string out;
    for (const auto& line : lines)
        out += line + "\n";
    return out;
}

/*! A report of a healthy ConnectX-like device, for diagnose(). */
ibv::preflight_report healthy_facts()
{
    ibv::preflight_report r;
    r.interface_query = "ens1f0";
    r.interface_name = "ens1f0";
    r.interface_address = "10.0.0.2";
    r.mtu = 9000;
    r.device_found = true;
    r.device_name = "mlx5_0";
    r.port_num = 1;
    r.port_active = true;
    r.comp_vectors = 8;
    r.flow_steering = true;
    r.ip_csum_offload = true;
    r.cap_net_raw = true;
    r.memlock_soft = RLIM_INFINITY;
    r.memlock_hard = RLIM_INFINITY;
    r.buffer_bytes = 16 << 20;
    return r;
}

// ---- this process: root in host 2, the emulator on eth0 ----

TEST(Preflight, DeviceOwningTheInterfaceGivenByNameIsReported)
{
    REQUIRE_TOPOLOGY();
    const auto r = ibv::preflight(host(2).netdev, 0);
    EXPECT_EQ(r.interface_query, "eth0");
    EXPECT_EQ(r.interface_name, "eth0");
    EXPECT_EQ(r.interface_address, host(2).ip);
    EXPECT_EQ(r.mtu, 9000);
    EXPECT_TRUE(r.device_found) << r.device_error;
    EXPECT_EQ(r.device_name, "emu_eth0");
    EXPECT_EQ(r.port_num, 1);
    EXPECT_TRUE(r.port_active);
    EXPECT_EQ(r.comp_vectors, int(sysconf(_SC_NPROCESSORS_ONLN)));
    EXPECT_TRUE(r.flow_steering);
    EXPECT_TRUE(r.ip_csum_offload);
    EXPECT_TRUE(r.cap_net_raw);
    EXPECT_EQ(r.buffer_bytes, 16u << 20);
    EXPECT_TRUE(r.usable()) << joined(r.problems);
    EXPECT_EQ(r.summary(),
              "ibverbs can be used on eth0 (" + host(2).ip +
                  "): device emu_eth0 port 1, " +
                  std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
                  " completion vectors, MTU 9000");
    EXPECT_TRUE(contains(joined(r.notes), "IPv4 header checksums: computed by the NIC"));
}

TEST(Preflight, InterfaceGivenByAddressResolvesToItsNetdev)
{
    REQUIRE_TOPOLOGY();
    const auto r = ibv::preflight(host(2).ip, 1 << 20);
    EXPECT_EQ(r.interface_query, host(2).ip);
    EXPECT_EQ(r.interface_name, "eth0");
    EXPECT_EQ(r.interface_address, host(2).ip);
    EXPECT_EQ(r.device_name, "emu_eth0");
    EXPECT_EQ(r.buffer_bytes, 1u << 20);
    EXPECT_TRUE(r.usable()) << joined(r.problems);
}

TEST(Preflight, InterfaceWithoutAnRdmaDeviceIsAProblemNamingIt)
{
    REQUIRE_TOPOLOGY();
    // SPEAD_EMU_NETDEVS=eth0: loopback has no device.
    const auto r = ibv::preflight("lo", 0);
    EXPECT_EQ(r.interface_name, "lo");
    EXPECT_EQ(r.interface_address, "127.0.0.1");
    EXPECT_FALSE(r.device_found);
    EXPECT_FALSE(r.usable());
    ASSERT_EQ(r.problems.size(), 1u) << joined(r.problems);
    EXPECT_TRUE(contains(r.problems[0], "no RDMA device owns interface 127.0.0.1 (lo)"))
        << r.problems[0];
    EXPECT_TRUE(contains(r.problems[0], "ibv_devices")) << r.problems[0];
    EXPECT_TRUE(contains(r.problems[0], "transport udp")) << r.problems[0];
    EXPECT_TRUE(contains(r.summary(), "ibverbs cannot be used on lo (127.0.0.1): "))
        << r.summary();
    EXPECT_TRUE(contains(r.summary(), "no RDMA device owns interface")) << r.summary();
}

TEST(Preflight, UnknownInterfaceIsAProblemListingTheInterfaces)
{
    REQUIRE_TOPOLOGY();
    const auto r = ibv::preflight("nosuch0", 0);
    EXPECT_EQ(r.interface_query, "nosuch0");
    EXPECT_EQ(r.interface_name, "");
    EXPECT_EQ(r.interface_address, "");
    EXPECT_EQ(r.mtu, 0);
    EXPECT_FALSE(r.device_found);
    ASSERT_EQ(r.problems.size(), 1u) << joined(r.problems);
    EXPECT_TRUE(contains(r.problems[0], "\"nosuch0\" is not a local interface"))
        << r.problems[0];
    EXPECT_TRUE(contains(r.problems[0], "Interfaces here:")) << r.problems[0];
    EXPECT_TRUE(contains(r.problems[0], "eth0")) << r.problems[0];
    EXPECT_TRUE(contains(r.summary(), "ibverbs cannot be used on \"nosuch0\": "))
        << r.summary();
}

TEST(Preflight, AnAddressOfNoLocalInterfaceIsAProblem)
{
    REQUIRE_TOPOLOGY();
    const auto r = ibv::preflight(host(1).ip, 0);
    EXPECT_EQ(r.interface_name, "");
    ASSERT_EQ(r.problems.size(), 1u) << joined(r.problems);
    EXPECT_TRUE(contains(r.problems[0], "is not the address of a local interface"))
        << r.problems[0];
}

// ---- other conditions, in a child process ----

/*! Child side: prints the report of eth0 line by line. */
TEST(PreflightChild, Report)
{
    if (!is_child())
        GTEST_SKIP() << "runs only as a child of another test";
    const auto r = ibv::preflight("eth0", 0);
    std::cout << "DEVICE " << r.device_found << " " << r.device_name << "\n"
              << "COMP_VECTORS " << r.comp_vectors << "\n"
              << "IP_CSUM " << r.ip_csum_offload << "\n"
              << "CAP_NET_RAW " << r.cap_net_raw << "\n"
              << "CAP_IPC_LOCK " << r.cap_ipc_lock << "\n"
              << "MEMLOCK " << r.memlock_soft << " " << r.memlock_hard << "\n"
              << "USABLE " << r.usable() << "\n";
    for (const auto& p : r.problems)
        std::cout << "PROBLEM: " << p << "\n";
    for (const auto& n : r.notes)
        std::cout << "NOTE: " << n << "\n";
    std::cout << "SUMMARY: " << r.summary() << std::endl;
}

TEST(Preflight, WithoutCapNetRawTheFixGrantsTheCapabilityNotRoot)
{
    REQUIRE_TOPOLOGY();
    const auto child = run_child(without_cap_net_raw(), "PreflightChild.Report", {});
    ASSERT_EQ(child.exit_code, 0) << child.output;
    const auto& out = child.output;
    EXPECT_TRUE(contains(out, "DEVICE 1 emu_eth0")) << out;
    EXPECT_TRUE(contains(out, "CAP_NET_RAW 0")) << out;
    EXPECT_TRUE(contains(out, "USABLE 0")) << out;
    EXPECT_TRUE(contains(out,
                         "PROBLEM: CAP_NET_RAW is missing: the ibverbs transport "
                         "creates raw-packet queue pairs, which need it."))
        << out;
    EXPECT_TRUE(contains(out, "setcap cap_net_raw+ep /usr/local/bin/spead_recv")) << out;
    EXPECT_TRUE(contains(out, "--ambient-caps=+net_raw")) << out;
    EXPECT_FALSE(contains(out, "setcap cap_net_raw+ep /usr/bin/python")) << out;
    EXPECT_TRUE(contains(out,
                         "SUMMARY: ibverbs cannot be used on eth0 (" + host(2).ip +
                             "): CAP_NET_RAW is missing"))
        << out;
}

TEST(Preflight, MemlockBelowTheBufferWithoutIpcLockPrintsTheLimitAndTheFix)
{
    REQUIRE_TOPOLOGY();
    const auto child = run_child(with_64k_memlock(), "PreflightChild.Report", {});
    ASSERT_EQ(child.exit_code, 0) << child.output;
    const auto& out = child.output;
    EXPECT_TRUE(contains(out, "CAP_IPC_LOCK 0")) << out;
    EXPECT_TRUE(contains(out, "MEMLOCK 65536 65536")) << out;
    EXPECT_TRUE(contains(out, "USABLE 0")) << out;
    EXPECT_TRUE(contains(out,
                         "PROBLEM: memlock limit too low: the NIC must pin 16 MiB of "
                         "memory but RLIMIT_MEMLOCK is 64 KiB (hard limit 64 KiB)"))
        << out;
    EXPECT_TRUE(contains(out, "ulimit -l unlimited")) << out;
}

TEST(Preflight, MemlockBelowTheBufferWithIpcLockIsOnlyANote)
{
    REQUIRE_TOPOLOGY();
    const auto child = run_child(
        { "prlimit", "--memlock=65536:65536", "--" }, "PreflightChild.Report", {});
    ASSERT_EQ(child.exit_code, 0) << child.output;
    const auto& out = child.output;
    EXPECT_TRUE(contains(out, "CAP_IPC_LOCK 1")) << out;
    EXPECT_TRUE(contains(out, "USABLE 1")) << out;
    EXPECT_TRUE(contains(out,
                         "NOTE: RLIMIT_MEMLOCK is 64 KiB, below the 16 MiB to pin, but "
                         "CAP_IPC_LOCK lifts the limit"))
        << out;
}

TEST(Preflight, CompVectorsAreTheDevicesNumber)
{
    REQUIRE_TOPOLOGY();
    const auto child =
        run_child({}, "PreflightChild.Report", { "SPEAD_EMU_COMP_VECTORS=4" });
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_TRUE(contains(child.output, "COMP_VECTORS 4")) << child.output;
    EXPECT_TRUE(contains(child.output, "4 completion vectors")) << child.output;
}

TEST(Preflight, WithoutChecksumOffloadItIsUsableAndSaysSoftwareChecksums)
{
    REQUIRE_TOPOLOGY();
    const auto child = run_child({}, "PreflightChild.Report", { "SPEAD_EMU_IP_CSUM=0" });
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_TRUE(contains(child.output, "IP_CSUM 0")) << child.output;
    EXPECT_TRUE(contains(child.output, "USABLE 1")) << child.output;
    EXPECT_TRUE(
        contains(child.output, "NOTE: IPv4 header checksums: computed in software"))
        << child.output;
}

TEST(Preflight, SaysWhichReceiveQueueTheReaderWillUse)
{
    REQUIRE_TOPOLOGY();
    const auto plain =
        run_child({}, "PreflightChild.Report", { "SPEAD_EMU_MODEL=plain" });
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    EXPECT_TRUE(contains(plain.output,
                         "NOTE: receive queue: fixed slots of max_size + 42 bytes (no "
                         "multi-packet receive queue: device emu_eth0 is not an mlx5 "
                         "device"))
        << plain.output;

    const auto cx5 = run_child({}, "PreflightChild.Report", { "SPEAD_EMU_MODEL=cx5" });
    ASSERT_EQ(cx5.exit_code, 0) << cx5.output;
    EXPECT_TRUE(contains(cx5.output,
                         "NOTE: receive queue: multi-packet (mlx5 striding RQ, strides "
                         "of 64 to 8192 bytes, 512 to 65536 per WQE)"))
        << cx5.output;

    const auto forced = run_child(
        {}, "PreflightChild.Report", { "SPEAD_EMU_MODEL=cx5", "GR_SPEAD_IBV_MPRQ=0" });
    ASSERT_EQ(forced.exit_code, 0) << forced.output;
    EXPECT_TRUE(contains(forced.output, "GR_SPEAD_IBV_MPRQ=0 forces fixed slots"))
        << forced.output;
}

TEST(Preflight, RealRdmaCoreWithoutHardwareFindsNoDevice)
{
    REQUIRE_TOPOLOGY();
    const auto child = run_child({}, "PreflightChild.Report", { "LD_LIBRARY_PATH=" });
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_FALSE(contains(child.output, "spead-emu")) << "the emulator was loaded";
    EXPECT_TRUE(contains(child.output, "DEVICE 0")) << child.output;
    // rdma-core lists no device on these machines, whose kernel has no InfiniBand:
    // the report says that, not only that this interface has none.
    EXPECT_TRUE(contains(child.output,
                         "PROBLEM: this machine has no RDMA device at all (ibverbs "
                         "lists none), and the kernel has no RDMA support loaded"))
        << child.output;
    EXPECT_TRUE(contains(child.output, "NOTE: finding the device said: rdma_"))
        << child.output;
    EXPECT_TRUE(contains(child.output, "no RDMA device owns interface " + host(2).ip))
        << child.output;
}

// ---- diagnose(): combinations no machine here has ----

TEST(Diagnose, AHealthyDeviceHasNoProblems)
{
    auto r = healthy_facts();
    ibv::diagnose(r);
    EXPECT_TRUE(r.usable()) << joined(r.problems);
    EXPECT_EQ(r.summary(),
              "ibverbs can be used on ens1f0 (10.0.0.2): device mlx5_0 port 1, 8 "
              "completion vectors, MTU 9000");
}

TEST(Diagnose, NoRdmaDeviceAtAllSaysWhatTheKernelLacksAndTheFix)
{
    auto r = healthy_facts();
    r.device_found = false;
    r.device_error = "rdma_create_id: No such device";
    r.rdma_devices = 0;
    r.kernel_rdma = false;
    r.kernel_uverbs = false;
    ibv::diagnose(r);
    ASSERT_EQ(r.problems.size(), 1u) << joined(r.problems);
    EXPECT_TRUE(contains(r.problems[0],
                         "this machine has no RDMA device at all (ibverbs lists none), "
                         "and the kernel has no RDMA support loaded (no "
                         "/sys/class/infiniband): load the NIC's RDMA driver (`modprobe "
                         "mlx5_ib`"))
        << r.problems[0];
    EXPECT_TRUE(contains(r.problems[0], "or use transport udp")) << r.problems[0];
    EXPECT_TRUE(contains(joined(r.notes), "finding the device said: rdma_create_id"))
        << joined(r.notes);

    r.kernel_rdma = true; // the core is there, user-space verbs are not
    ibv::diagnose(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_TRUE(contains(r.problems[0], "not ib_uverbs") &&
                contains(r.problems[0], "`modprobe ib_uverbs`"))
        << r.problems[0];

    r.kernel_uverbs = true; // support, but no NIC offers it
    ibv::diagnose(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_TRUE(contains(r.problems[0], "no NIC driver offers it")) << r.problems[0];

    r.rdma_devices = 1; // a device, but not on this interface: the binding's message
    ibv::diagnose(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0], "rdma_create_id: No such device");
}

TEST(Diagnose, TheMtuNoteStopsAtTheLargestUdpPayload)
{
    auto r = healthy_facts();
    r.mtu = 65536; // loopback: IPv4 still caps a datagram at 65535 bytes
    ibv::diagnose(r);
    EXPECT_TRUE(contains(joined(r.notes), "MTU 65536: UDP payloads up to 65507 bytes"))
        << joined(r.notes);
    r.mtu = 9000;
    ibv::diagnose(r);
    EXPECT_TRUE(contains(joined(r.notes), "MTU 9000: UDP payloads up to 8972 bytes"))
        << joined(r.notes);
}

TEST(Diagnose, ADeviceWithoutFlowSteeringIsAProblemWithTheMlx4Fix)
{
    auto r = healthy_facts();
    r.flow_steering = false;
    ibv::diagnose(r);
    ASSERT_EQ(r.problems.size(), 1u) << joined(r.problems);
    EXPECT_TRUE(contains(r.problems[0],
                         "device mlx5_0 does not offer managed flow "
                         "steering"))
        << r.problems[0];
    EXPECT_TRUE(contains(r.problems[0], "log_num_mgm_entry_size=-1")) << r.problems[0];
    EXPECT_TRUE(contains(r.summary(),
                         "ibverbs cannot be used on ens1f0 (10.0.0.2): "
                         "device mlx5_0 does not offer"))
        << r.summary();
}

TEST(Diagnose, EveryProblemIsInTheOneLineSummary)
{
    auto r = healthy_facts();
    r.flow_steering = false;
    r.cap_net_raw = false;
    r.memlock_soft = 8 << 20;
    r.memlock_hard = 8 << 20;
    ibv::diagnose(r);
    ASSERT_EQ(r.problems.size(), 3u) << joined(r.problems);
    const std::string line = r.summary();
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_TRUE(contains(line, "flow steering")) << line;
    EXPECT_TRUE(contains(line, "CAP_NET_RAW is missing")) << line;
    EXPECT_TRUE(contains(line, "RLIMIT_MEMLOCK is 8 MiB (hard limit")) << line;
}

TEST(Diagnose, ALinkDownIsANoteNotAProblem)
{
    auto r = healthy_facts();
    r.port_active = false;
    ibv::diagnose(r);
    EXPECT_TRUE(r.usable()) << joined(r.problems);
    EXPECT_TRUE(contains(joined(r.notes), "port 1 of mlx5_0 is not active (link down)"))
        << joined(r.notes);
}

TEST(Diagnose, AMemlockLimitAtTheBufferSizeIsEnough)
{
    auto r = healthy_facts();
    r.memlock_soft = r.buffer_bytes;
    ibv::diagnose(r);
    EXPECT_TRUE(r.usable()) << joined(r.problems);
    r.memlock_soft = r.buffer_bytes - 1;
    ibv::diagnose(r);
    EXPECT_FALSE(r.usable());
}

} // namespace

int main(int argc, char** argv) { return ibv_test::run_all_tests_in_host(argc, argv, 2); }

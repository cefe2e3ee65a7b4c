/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the kernel checks before it lets a process near the NIC.
#include "verbs_test_support.h"

#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace verbs_test;

namespace {

// Drops a capability from the calling thread's effective set (it stays permitted, so it
// comes back at the end of the scope). The kernel checks the calling thread.
class without_capability
{
public:
    explicit without_capability(int capability) : m_capability(capability) { set(false); }
    ~without_capability() { set(true); }

private:
    void set(bool effective)
    {
        __user_cap_header_struct header{ _LINUX_CAPABILITY_VERSION_3, 0 };
        __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
        ASSERT_EQ(syscall(SYS_capget, &header, data), 0);
        const unsigned bit = 1u << (m_capability % 32);
        if (effective)
            data[m_capability / 32].effective |= bit;
        else
            data[m_capability / 32].effective &= ~bit;
        ASSERT_EQ(syscall(SYS_capset, &header, data), 0);
    }
    int m_capability;
};

} // namespace

TEST(Permissions, RawPacketQpWithoutCapNetRawFailsWithEperm)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    cq_ptr cq(ibv_create_cq(context.get(), 8, nullptr, nullptr, 0));
    ibv_qp_init_attr attr = qp_init_attr(cq.get());
    attr.cap.max_recv_wr = 1;
    attr.cap.max_recv_sge = 1;
    {
        without_capability no_raw(CAP_NET_RAW);
        errno = 0;
        qp_ptr qp(ibv_create_qp(pd.get(), &attr));
        EXPECT_EQ(qp, nullptr);
        EXPECT_EQ(errno, EPERM);
    }
    qp_ptr qp(ibv_create_qp(pd.get(), &attr));
    EXPECT_NE(qp, nullptr) << "with CAP_NET_RAW back";
}

TEST(Permissions, RegisteringMoreThanTheMemlockLimitFailsWithoutCapIpcLock)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    rlimit saved{};
    ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &saved), 0);
    rlimit small = saved;
    small.rlim_cur = 64 * 1024;
    ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &small), 0);
    std::vector<uint8_t> memory(1 << 20);
    {
        without_capability no_ipc_lock(CAP_IPC_LOCK);
        errno = 0;
        mr_ptr mr(
            ibv_reg_mr(pd.get(), memory.data(), memory.size(), IBV_ACCESS_LOCAL_WRITE));
        EXPECT_EQ(mr, nullptr);
        EXPECT_EQ(errno, ENOMEM);
    }
    mr_ptr mr(ibv_reg_mr(pd.get(), memory.data(), memory.size(), IBV_ACCESS_LOCAL_WRITE));
    EXPECT_NE(mr, nullptr) << "CAP_IPC_LOCK lifts the limit";
    mr.reset();
    ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &saved), 0);
}

TEST(Permissions, RegisteringUnmappedMemoryFailsWithEfault)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    const size_t size = 4 * 4096;
    void* mapping =
        mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapping, MAP_FAILED);
    ASSERT_EQ(munmap(static_cast<uint8_t*>(mapping) + 2 * 4096, 4096), 0);
    errno = 0;
    mr_ptr mr(ibv_reg_mr(pd.get(), mapping, size, IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(mr, nullptr);
    EXPECT_EQ(errno, EFAULT);
    munmap(mapping, size);
}

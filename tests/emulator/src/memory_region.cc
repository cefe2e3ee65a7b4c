/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "memory_region.h"

#include "capabilities.h"
#include "device.h"
#include "device_context.h"
#include "log.h"
#include "protection_domain.h"

#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

// verbs.h routes ibv_reg_mr/ibv_reg_mr_iova through inline helpers; the exported
// functions behind them are what the emulator defines.
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

namespace spead_emu {
namespace {

// Bytes of pages pinned by all registrations of the process: the kernel's pinned_vm,
// which RLIMIT_MEMLOCK bounds unless the process has CAP_IPC_LOCK.
std::atomic<uint64_t> process_pinned_bytes{ 0 };

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// The kernel pins whole pages.
size_t pinned_span(const void* address, size_t length)
{
    const uintptr_t start = reinterpret_cast<uintptr_t>(address) & ~(page_size() - 1);
    const uintptr_t end =
        (reinterpret_cast<uintptr_t>(address) + length + page_size() - 1) &
        ~(page_size() - 1);
    return end - start;
}

// Every page of the range must be mapped, or get_user_pages fails with EFAULT.
bool range_is_mapped(const void* address, size_t length)
{
    const uintptr_t start = reinterpret_cast<uintptr_t>(address) & ~(page_size() - 1);
    const size_t span = pinned_span(address, length);
    std::vector<unsigned char> residency(span / page_size());
    return mincore(reinterpret_cast<void*>(start), span, residency.data()) == 0;
}

int reserve_pinned(size_t bytes)
{
    rlimit limit{};
    getrlimit(RLIMIT_MEMLOCK, &limit);
    const uint64_t after = process_pinned_bytes.fetch_add(bytes) + bytes;
    if (limit.rlim_cur != RLIM_INFINITY && after > limit.rlim_cur &&
        !has_effective_capability(CAP_IPC_LOCK)) {
        process_pinned_bytes -= bytes;
        trace("ibv_reg_mr: %zu bytes would exceed RLIMIT_MEMLOCK (%llu bytes)",
              bytes,
              static_cast<unsigned long long>(limit.rlim_cur));
        return ENOMEM;
    }
    return 0;
}

ibv_mr*
register_memory(ibv_pd* pd, void* address, size_t length, uint64_t iova, unsigned access)
{
    protection_domain* domain = protection_domain::from(pd);
    if (domain == nullptr || length == 0) {
        errno = EINVAL;
        return nullptr;
    }
    // Remote write/atomic access require local write (IB spec; the kernel enforces it).
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
        !(access & IBV_ACCESS_LOCAL_WRITE)) {
        errno = EINVAL;
        return nullptr;
    }
    if (!range_is_mapped(address, length)) {
        errno = EFAULT;
        return nullptr;
    }
    const size_t pinned = pinned_span(address, length);
    if (const int error = reserve_pinned(pinned)) {
        errno = error;
        return nullptr;
    }
    device_context& context = domain->context();
    std::lock_guard<std::mutex> lock(context.control_mutex());
    auto* region = new memory_region(*domain, address, length, iova, access);
    context.memory_regions().add(*region);
    domain->live_memory_regions++;
    context.live_memory_regions++;
    trace(
        "registered %zu bytes at %p, lkey 0x%x", length, address, region->verbs()->lkey);
    return region->verbs();
}

} // namespace

memory_region::memory_region(
    protection_domain& pd, void* address, size_t length, uint64_t iova, unsigned access)
    : m_pd(pd),
      m_iova(iova),
      m_access(access),
      m_pinned_bytes(pinned_span(address, length))
{
    ibv_mr& mr = m_shell.verbs;
    pd.adopt(mr.context, mr.pd, mr.handle);
    mr.addr = address;
    mr.length = length;
    mr.lkey = pd.context().allocate_memory_key();
    mr.rkey = mr.lkey;
}

memory_region* memory_region::from(ibv_mr* mr)
{
    return object_shell<ibv_mr, memory_region>::owner_of(mr);
}

uint8_t* memory_region::translate(uint64_t iova, uint32_t length, bool for_write) const
{
    if (for_write && !(m_access & IBV_ACCESS_LOCAL_WRITE))
        return nullptr;
    const uint64_t region_length = m_shell.verbs.length;
    if (iova < m_iova || iova - m_iova > region_length ||
        length > region_length - (iova - m_iova))
        return nullptr;
    return static_cast<uint8_t*>(m_shell.verbs.addr) + (iova - m_iova);
}

void memory_region_table::add(memory_region& region)
{
    std::unique_lock<std::shared_mutex> lock(m_mutex);
    m_by_lkey[region.verbs()->lkey] = &region;
}

void memory_region_table::remove(memory_region& region)
{
    std::unique_lock<std::shared_mutex> lock(m_mutex);
    m_by_lkey.erase(region.verbs()->lkey);
}

const memory_region* memory_region_table::find(const protection_domain& pd,
                                               uint32_t lkey) const
{
    const auto found = m_by_lkey.find(lkey);
    if (found == m_by_lkey.end() || &found->second->pd() != &pd)
        return nullptr;
    return found->second;
}

ibv_wc_status memory_region_table::gather(const protection_domain& pd,
                                          const ibv_sge* sges,
                                          size_t count,
                                          uint8_t* frame,
                                          size_t capacity,
                                          size_t& length) const
{
    std::shared_lock<std::shared_mutex> lock(m_mutex);
    length = 0;
    for (size_t i = 0; i < count; i++) {
        if (sges[i].length == 0)
            continue; // hardware skips empty SGEs without translating them
        const memory_region* region = find(pd, sges[i].lkey);
        const uint8_t* source =
            region == nullptr ? nullptr
                              : region->translate(sges[i].addr, sges[i].length, false);
        if (source == nullptr)
            return IBV_WC_LOC_PROT_ERR;
        if (sges[i].length > capacity - length)
            return IBV_WC_LOC_LEN_ERR;
        memcpy(frame + length, source, sges[i].length);
        length += sges[i].length;
    }
    return IBV_WC_SUCCESS;
}

ibv_wc_status memory_region_table::scatter(const protection_domain& pd,
                                           const ibv_sge* sges,
                                           size_t count,
                                           const uint8_t* frame,
                                           size_t length) const
{
    std::shared_lock<std::shared_mutex> lock(m_mutex);
    uint8_t* destinations[device_limits::max_sge];
    if (count > device_limits::max_sge)
        return IBV_WC_LOC_LEN_ERR; // cannot happen: post_recv enforces max_recv_sge
    uint64_t room = 0;
    for (size_t i = 0; i < count; i++) {
        const memory_region* region = find(pd, sges[i].lkey);
        destinations[i] = region == nullptr
                              ? nullptr
                              : region->translate(sges[i].addr, sges[i].length, true);
        if (destinations[i] == nullptr)
            return IBV_WC_LOC_PROT_ERR;
        room += sges[i].length;
    }
    if (room < length)
        return IBV_WC_LOC_LEN_ERR;
    size_t copied = 0;
    for (size_t i = 0; i < count && copied < length; i++) {
        const size_t piece = std::min<size_t>(sges[i].length, length - copied);
        memcpy(destinations[i], frame + copied, piece);
        copied += piece;
    }
    return IBV_WC_SUCCESS;
}

bool memory_region_table::remote_access(const protection_domain& pd,
                                        uint32_t rkey,
                                        uint64_t address,
                                        uint8_t* bytes,
                                        uint32_t length,
                                        bool write) const
{
    std::shared_lock<std::shared_mutex> lock(m_mutex);
    const memory_region* region = find(pd, rkey); // rkeys are the lkeys
    if (region == nullptr ||
        !region->allows(write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ))
        return false;
    uint8_t* memory = region->translate(address, length, write);
    if (memory == nullptr)
        return false;
    if (write)
        memcpy(memory, bytes, length);
    else
        memcpy(bytes, memory, length);
    return true;
}

ibv_wc_status memory_region_table::with_ranges(
    const protection_domain& pd,
    const ibv_sge* sges,
    size_t count,
    bool for_write,
    const std::function<void(const iovec*, size_t)>& use) const
{
    std::shared_lock<std::shared_mutex> lock(m_mutex);
    iovec ranges[device_limits::max_sge];
    size_t used = 0;
    for (size_t i = 0; i < count && i < device_limits::max_sge; i++) {
        if (sges[i].length == 0)
            continue;
        const memory_region* region = find(pd, sges[i].lkey);
        uint8_t* memory =
            region == nullptr
                ? nullptr
                : region->translate(sges[i].addr, sges[i].length, for_write);
        if (memory == nullptr)
            return IBV_WC_LOC_PROT_ERR;
        ranges[used++] = { memory, sges[i].length };
    }
    use(ranges, used);
    return IBV_WC_SUCCESS;
}

bool memory_region_table::with_remote_target(
    const protection_domain& pd,
    uint32_t rkey,
    uint64_t address,
    uint32_t length,
    const std::function<void(uint8_t*)>& use) const
{
    std::shared_lock<std::shared_mutex> lock(m_mutex);
    const memory_region* region = find(pd, rkey);
    uint8_t* memory = region == nullptr || !region->allows(IBV_ACCESS_REMOTE_WRITE)
                          ? nullptr
                          : region->translate(address, length, true);
    if (memory == nullptr)
        return false;
    use(memory);
    return true;
}

} // namespace spead_emu

using spead_emu::memory_region;

extern "C" {

ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access)
{
    return spead_emu::register_memory(pd,
                                      addr,
                                      length,
                                      reinterpret_cast<uintptr_t>(addr),
                                      static_cast<unsigned>(access));
}

ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access)
{
    return spead_emu::register_memory(
        pd, addr, length, iova, static_cast<unsigned>(access));
}

ibv_mr*
ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access)
{
    return spead_emu::register_memory(pd, addr, length, iova, access);
}

int ibv_dereg_mr(ibv_mr* mr)
{
    memory_region* region = memory_region::from(mr);
    if (region == nullptr)
        return EINVAL;
    spead_emu::device_context& context = region->pd().context();
    std::lock_guard<std::mutex> lock(context.control_mutex());
    // Waits for any NIC copy in progress; afterwards the lkey is dead, and WRs still
    // naming it complete with a protection error, as on hardware.
    context.memory_regions().remove(*region);
    region->pd().live_memory_regions--;
    context.live_memory_regions--;
    spead_emu::process_pinned_bytes -= region->pinned_bytes();
    delete region;
    return 0;
}

} // extern "C"

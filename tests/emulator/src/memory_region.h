/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Registered memory, looked up by lkey when the NIC reads or writes it ("DMA").
#ifndef SPEAD_EMU_MEMORY_REGION_H
#define SPEAD_EMU_MEMORY_REGION_H

#include "object_shell.h"

#include <infiniband/verbs.h>

#include <sys/uio.h>

#include <shared_mutex>
#include <unordered_map>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace spead_emu {

class device_context;
class protection_domain;

class memory_region
{
public:
    // Takes a memory key and a handle of the PD's context; the pinned bytes are those
    // of the pages the range touches.
    memory_region(protection_domain& pd,
                  void* address,
                  size_t length,
                  uint64_t iova,
                  unsigned access);

    static memory_region* from(ibv_mr* mr);
    ibv_mr* verbs() { return &m_shell.verbs; }
    protection_domain& pd() { return m_pd; }
    size_t pinned_bytes() const { return m_pinned_bytes; }

    // The host address of [iova, iova + length) if it lies inside the region and the
    // access is allowed, else nullptr: what the NIC's memory translation checks.
    uint8_t* translate(uint64_t iova, uint32_t length, bool for_write) const;
    // Whether the region was registered with every flag of \p access.
    bool allows(unsigned access) const { return (m_access & access) == access; }

private:
    object_shell<ibv_mr, memory_region> m_shell{ this };
    protection_domain& m_pd;
    uint64_t m_iova;
    unsigned m_access;
    size_t m_pinned_bytes;
};

// The memory keys of one device context. Holding the shared lock while copying is what
// makes ibv_dereg_mr wait until the NIC no longer touches the region.
class memory_region_table
{
public:
    void add(memory_region& region);
    void remove(memory_region& region);

    // Gather a send WR's SGEs into `frame`. IBV_WC_LOC_PROT_ERR for a bad lkey, a range
    // outside its region or a region of another PD; IBV_WC_LOC_LEN_ERR if it exceeds
    // `capacity`.
    ibv_wc_status gather(const protection_domain& pd,
                         const ibv_sge* sges,
                         size_t count,
                         uint8_t* frame,
                         size_t capacity,
                         size_t& length) const;

    // Scatter a received frame into a receive WR's SGEs (which need LOCAL_WRITE).
    // IBV_WC_LOC_LEN_ERR when the SGEs are too small for the frame.
    ibv_wc_status scatter(const protection_domain& pd,
                          const ibv_sge* sges,
                          size_t count,
                          const uint8_t* frame,
                          size_t length) const;

    // An RC responder's RDMA write (\p bytes into memory) or read (memory into
    // \p bytes) of \p length bytes at \p address through \p rkey: false, copying
    // nothing, unless the rkey names a region of \p pd registered with
    // IBV_ACCESS_REMOTE_WRITE (or REMOTE_READ) that holds the whole range.
    bool remote_access(const protection_domain& pd,
                       uint32_t rkey,
                       uint64_t address,
                       uint8_t* bytes,
                       uint32_t length,
                       bool write) const;

    // For an RC QP moving bytes between a socket and registered memory without a copy
    // of its own: \p use gets the SGEs' host ranges (checked as gather/scatter check
    // them, \p for_write needing LOCAL_WRITE) while the lock keeps the regions
    // registered. IBV_WC_LOC_PROT_ERR, without calling it, when one is not valid.
    ibv_wc_status with_ranges(const protection_domain& pd,
                              const ibv_sge* sges,
                              size_t count,
                              bool for_write,
                              const std::function<void(const iovec*, size_t)>& use) const;
    // The same for an RDMA write's target: false, without calling \p use, unless
    // remote_access would allow the write.
    bool with_remote_target(const protection_domain& pd,
                            uint32_t rkey,
                            uint64_t address,
                            uint32_t length,
                            const std::function<void(uint8_t*)>& use) const;

private:
    const memory_region* find(const protection_domain& pd, uint32_t lkey) const;

    mutable std::shared_mutex m_mutex;
    std::unordered_map<uint32_t, memory_region*> m_by_lkey;
};

} // namespace spead_emu

#endif

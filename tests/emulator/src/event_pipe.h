/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A queue of fixed-size event records behind a real fd, with the semantics of the
// kernel's uverbs event files: the read end is readable while records are queued, each
// read returns one record, and reads block unless the application set O_NONBLOCK.
// Records are shorter than PIPE_BUF, so writes and reads of one record are atomic.
#ifndef SPEAD_EMU_EVENT_PIPE_H
#define SPEAD_EMU_EVENT_PIPE_H

#include "unique_fd.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <vector>

namespace spead_emu {

template <typename Record>
class event_pipe
{
public:
    event_pipe()
    {
        int ends[2];
        if (pipe2(ends, O_CLOEXEC) == 0) {
            m_read_end.reset(ends[0]);
            m_write_end.reset(ends[1]);
            // The NIC must never block on a full queue; it reports the loss instead.
            fcntl(ends[1], F_SETFL, O_NONBLOCK);
        }
    }

    bool valid() const { return m_read_end && m_write_end; }
    int fd() const { return m_read_end.get(); }

    // False when the queue is full (the pipe holds thousands of records).
    bool post(const Record& record)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return write(m_write_end.get(), &record, sizeof(record)) ==
               static_cast<ssize_t>(sizeof(record));
    }

    // 0, or -1 with errno as read(2) left it (EAGAIN, EINTR).
    int next(Record& record)
    {
        const ssize_t length = read(m_read_end.get(), &record, sizeof(record));
        if (length == static_cast<ssize_t>(sizeof(record)))
            return 0;
        if (length >= 0)
            errno = EIO;
        return -1;
    }

    // Removes the queued records `unwanted` selects, keeping the order of the others;
    // returns how many it removed.
    template <typename Predicate>
    int discard_if(Predicate unwanted)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        int queued_bytes = 0;
        if (ioctl(m_read_end.get(), FIONREAD, &queued_bytes) != 0 || queued_bytes <= 0)
            return 0;
        std::vector<Record> queued(static_cast<size_t>(queued_bytes) / sizeof(Record));
        // Exactly the queued bytes: this read cannot block even on a blocking fd.
        const ssize_t length =
            read(m_read_end.get(), queued.data(), queued.size() * sizeof(Record));
        if (length <= 0)
            return 0;
        queued.resize(static_cast<size_t>(length) / sizeof(Record));
        int removed = 0;
        for (const Record& record : queued) {
            if (unwanted(record))
                removed++;
            else if (write(m_write_end.get(), &record, sizeof(record)) < 0)
                break;
        }
        return removed;
    }

private:
    unique_fd m_read_end;
    unique_fd m_write_end;
    std::mutex m_mutex;
};

} // namespace spead_emu

#endif

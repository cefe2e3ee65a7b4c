/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "port_hw_counters.h"

#include "log.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spead_emu {
namespace {

constexpr const char* directory_prefix = "spead-emu-";

std::string temporary_directory()
{
    const char* tmpdir = getenv("TMPDIR");
    return tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*)
{
    remove(path);
    return 0;
}

void remove_tree(const std::string& path)
{
    nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

// Directories whose process is gone (killed before its exit handler ran).
void sweep_stale_directories(const std::string& parent)
{
    DIR* directory = opendir(parent.c_str());
    if (directory == nullptr)
        return;
    while (dirent* entry = readdir(directory)) {
        const std::string name = entry->d_name;
        if (name.rfind(directory_prefix, 0) != 0)
            continue;
        const std::string pid = name.substr(strlen(directory_prefix));
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos)
            continue;
        if (access(("/proc/" + pid).c_str(), F_OK) != 0 && errno == ENOENT)
            remove_tree(parent + "/" + name);
    }
    closedir(directory);
}

std::string& process_root()
{
    static std::string root;
    return root;
}

pid_t root_owner = 0;

// Only in the process that made it: a forked child that exits must not remove it.
void remove_process_root()
{
    if (getpid() == root_owner)
        remove_tree(process_root());
}

// The directory of this process, made (and its removal at exit arranged) once.
const std::string& ensure_process_root()
{
    static std::once_flag once;
    std::call_once(once, [] {
        const std::string parent = temporary_directory();
        sweep_stale_directories(parent);
        const std::string root =
            parent + "/" + directory_prefix + std::to_string(getpid());
        if (mkdir(root.c_str(), 0755) != 0 && errno != EEXIST)
            return;
        process_root() = root;
        root_owner = getpid();
        atexit(remove_process_root);
    });
    return process_root();
}

bool make_directories(const std::string& path)
{
    for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
        const std::string prefix = path.substr(0, slash);
        if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
            return false;
        if (slash == std::string::npos)
            return true;
    }
}

bool write_counter(const std::string& directory, const char* name, uint64_t value)
{
    // Written beside and renamed over: a reader opens the old file or the new one.
    const std::string path = directory + "/" + name;
    const std::string temporary = path + ".new";
    const int fd =
        open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    char text[32];
    const int length = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)value);
    const bool written = write(fd, text, length) == length;
    close(fd);
    return written && rename(temporary.c_str(), path.c_str()) == 0;
}

} // namespace

port_hw_counters::port_hw_counters(const std::string& device_name)
{
    const std::string& root = ensure_process_root();
    if (root.empty()) {
        warn("no directory for the port counters of %s (%s); it has none",
             device_name.c_str(),
             strerror(errno));
        return;
    }
    const std::string device_path = root + "/" + device_name;
    const std::string counters = device_path + "/ports/1/hw_counters";
    if (!make_directories(counters) || !write_counter(counters, "out_of_buffer", 0)) {
        warn("cannot write the port counters of %s under %s (%s); it has none",
             device_name.c_str(),
             root.c_str(),
             strerror(errno));
        return;
    }
    m_counter_directory = counters;
    m_ibdev_path = device_path;
}

void port_hw_counters::publish_out_of_buffer(uint64_t value)
{
    if (m_counter_directory.empty() || m_published_out_of_buffer.load() == value)
        return;
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_published_out_of_buffer.load() >= value)
        return; // another NIC thread published as much already
    if (write_counter(m_counter_directory, "out_of_buffer", value))
        m_published_out_of_buffer = value;
}

} // namespace spead_emu

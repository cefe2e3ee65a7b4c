/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ibv_test_support.h"
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sched.h>
#include <signal.h>
#include <spead_emu/extensions.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace ibv_test {

namespace {

std::string env(const std::string& name)
{
    const char* value = std::getenv(name.c_str());
    return value ? value : "";
}

int open_namespace(int i)
{
    const std::string path = "/var/run/netns/" + host(i).ns;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw std::system_error(errno, std::generic_category(), "open " + path);
    return fd;
}

void join_namespace(int fd, const std::string& what)
{
    if (setns(fd, CLONE_NEWNET) != 0)
        throw std::system_error(errno, std::generic_category(), "setns " + what);
}

} // namespace

bool have_topology(int hosts)
{
    const std::string n = env("TOPO_HOSTS");
    return !n.empty() && std::atoi(n.c_str()) >= hosts && !env("TOPO_NS_1").empty();
}

topology_host host(int i)
{
    const std::string n = std::to_string(i);
    topology_host h{ env("TOPO_NS_" + n),
                     env("TOPO_IF_" + n),
                     env("TOPO_IP_" + n),
                     env("TOPO_MAC_" + n) };
    if (h.ns.empty())
        throw std::runtime_error("TOPO_NS_" + n +
                                 " is not set: run under tests/netns/netns-topology");
    return h;
}

in_host::in_host(int i)
{
    d_previous = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (d_previous < 0)
        throw std::system_error(errno, std::generic_category(), "open own namespace");
    const int target = open_namespace(i);
    join_namespace(target, host(i).ns);
    close(target);
}

in_host::~in_host()
{
    setns(d_previous, CLONE_NEWNET);
    close(d_previous);
}

std::string endpoint_in(int i, unsigned short port)
{
    return host(i).ip + ":" + std::to_string(port);
}

void enter_host(int i)
{
    const int target = open_namespace(i);
    struct stat wanted {
    }, current{};
    // A child started by run_child() is there already.
    if (fstat(target, &wanted) != 0 || stat("/proc/self/ns/net", &current) != 0 ||
        wanted.st_ino != current.st_ino || wanted.st_dev != current.st_dev)
        join_namespace(target, host(i).ns);
    close(target);
}

int run_all_tests_in_host(int argc, char** argv, int i)
{
    ::testing::InitGoogleTest(&argc, argv);
    if (have_topology(i))
        enter_host(i);
    return RUN_ALL_TESTS();
}

bool is_child() { return env("IBV_TEST_CHILD") == "1"; }

child_result run_child(const std::vector<std::string>& prefix,
                       const std::string& gtest_filter,
                       const std::vector<std::string>& environment,
                       std::chrono::seconds timeout)
{
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0)
        throw std::system_error(errno, std::generic_category(), "readlink");
    self[len] = '\0';

    std::vector<std::string> args = prefix;
    args.push_back(self);
    args.push_back("--gtest_filter=" + gtest_filter);
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe");
    const pid_t pid = fork();
    if (pid < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
    if (pid == 0) {
        dup2(pipe_fds[1], 1);
        dup2(pipe_fds[1], 2);
        setenv("IBV_TEST_CHILD", "1", 1);
        for (const auto& e : environment) {
            const auto eq = e.find('=');
            setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
        }
        execvp(argv[0], argv.data());
        _exit(127);
    }
    close(pipe_fds[1]);
    child_result result;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buffer[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            kill(pid, SIGKILL);
            result.output += "\n[killed after the timeout]";
            break;
        }
        pollfd pfd{ pipe_fds[0], POLLIN, 0 };
        if (poll(&pfd, 1, int(left.count())) <= 0)
            continue;
        const ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
        if (n <= 0)
            break;
        result.output.append(buffer, std::size_t(n));
    }
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status))
        result.exit_code = WEXITSTATUS(status);
    return result;
}

void fill_pattern(std::uint8_t* out, std::size_t size, std::uint64_t cnt)
{
    for (std::size_t i = 0; i < size; i++)
        out[i] = pattern_byte(cnt, i);
}

std::vector<std::uint8_t> patterned(std::size_t size, std::uint64_t cnt)
{
    std::vector<std::uint8_t> out(size);
    fill_pattern(out.data(), out.size(), cnt);
    return out;
}

std::size_t pattern_mismatches(const gr::spead::recv::heap& h,
                               std::uint64_t id,
                               std::size_t size,
                               std::uint64_t cnt)
{
    const gr::spead::recv::item* it = h.find(id);
    if (!it || it->length != size)
        return SIZE_MAX;
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < size; i++)
        mismatches += it->data[i] != pattern_byte(cnt, i);
    return mismatches;
}

bound_cm_id::bound_cm_id(const std::string& interface_ip)
{
    if (rdma_create_id(nullptr, &d_id, nullptr, RDMA_PS_UDP) != 0)
        throw std::system_error(errno, std::generic_category(), "rdma_create_id");
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    inet_pton(AF_INET, interface_ip.c_str(), &sin.sin_addr);
    if (rdma_bind_addr(d_id, reinterpret_cast<sockaddr*>(&sin)) != 0 || !d_id->verbs) {
        const int error = errno ? errno : ENODEV;
        rdma_destroy_id(d_id);
        throw std::system_error(error, std::generic_category(), "rdma_bind_addr");
    }
}

bound_cm_id::~bound_cm_id() { rdma_destroy_id(d_id); }

ibv_context* bound_cm_id::context() const { return d_id->verbs; }

int live_verbs_objects(const std::string& interface_ip)
{
    spead_emu_api emu;
    if (!emu.find())
        throw std::runtime_error("not running on the emulated NIC: cannot count verbs "
                                 "objects");
    const bound_cm_id id(interface_ip);
    spead_emu_live_objects live{};
    if (const int status = emu.query_live_objects(id.context(), &live))
        throw std::system_error(status, std::generic_category(), "query_live_objects");
    return live.protection_domains + live.completion_channels + live.completion_queues +
           live.queue_pairs + live.memory_regions + live.flows + live.counters;
}

namespace {
std::size_t count_entries(const char* path)
{
    DIR* dir = opendir(path);
    if (!dir)
        return 0;
    std::size_t n = 0;
    while (const dirent* entry = readdir(dir))
        n += entry->d_name[0] != '.';
    closedir(dir);
    return n;
}
} // namespace

// The directory stream holds an fd of its own while /proc/self/fd is listed.
std::size_t count_open_fds() { return count_entries("/proc/self/fd") - 1; }

std::size_t count_threads() { return count_entries("/proc/self/task"); }

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit)
{
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

std::vector<std::string> without_cap_net_raw()
{
    return { "setpriv", "--inh-caps=-net_raw", "--bounding-set=-net_raw", "--" };
}

std::vector<std::string> with_64k_memlock()
{
    return { "prlimit",
             "--memlock=65536:65536",
             "setpriv",
             "--inh-caps=-ipc_lock",
             "--bounding-set=-ipc_lock",
             "--" };
}

void print_build_outcome(const std::function<void()>& build)
{
    try {
        build();
        std::cout << "BUILT" << std::endl;
    } catch (const std::system_error& e) {
        std::cout << "SYSTEM_ERROR " << e.code().value() << ": " << e.what() << std::endl;
    } catch (const std::exception& e) {
        std::cout << "OTHER_ERROR: " << e.what() << std::endl;
    }
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

gr::spead::recv::udp_ibv_config reader_config(const std::string& endpoints,
                                              int comp_vector)
{
    gr::spead::recv::udp_ibv_config config;
    config.set_endpoints(endpoints)
        .set_interface(host(2).ip)
        .set_comp_vector(comp_vector);
    return config;
}

gr::spead::send::udp_ibv_config
sender_config(const std::string& destination, int comp_vector, unsigned short port)
{
    gr::spead::send::udp_ibv_config config;
    config.set_interface(host(1).ip)
        .add_endpoint(boost::asio::ip::udp::endpoint(
            boost::asio::ip::make_address_v4(destination), port))
        .set_comp_vector(comp_vector);
    return config;
}

} // namespace ibv_test

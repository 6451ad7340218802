// The system layer's readers on synthetic /proc and /sys trees: cgroup limits set on ancestors
// (v1 and v2), cpufreq present and absent, caches shared between CPUs, virtualization evidence.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "system/cgroup_limits.hpp"
#include "system/cpu_facts.hpp"
#include "system/memory_facts.hpp"
#include "system/virtualization.hpp"

using namespace clprobe;
namespace fs = std::filesystem;

namespace {

// A temporary root folder; SystemFiles(root) reads "/proc/..." as root + "/proc/...".
class FakeRoot {
  public:
    FakeRoot() {
        std::random_device rd;
        root_ = fs::temp_directory_path() / ("clprobe-sysroot-" + std::to_string(rd()) + std::to_string(rd()));
        fs::create_directories(root_);
    }
    ~FakeRoot() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    FakeRoot(const FakeRoot&) = delete;
    FakeRoot& operator=(const FakeRoot&) = delete;

    void write(const std::string& path, const std::string& text) {
        const fs::path p = root_ / path.substr(1);
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }
    SystemFiles files() const { return SystemFiles(root_.string()); }

  private:
    fs::path root_;
};

}  // namespace

TEST_CASE("SystemFiles: missing files and folders are nullopt and empty", "[system][files]") {
    FakeRoot root;
    root.write("/proc/loadavg", "0.5 0.4 0.3 1/80 99\n");
    const auto files = root.files();
    CHECK(files.read("/proc/loadavg") == "0.5 0.4 0.3 1/80 99\n");
    CHECK_FALSE(files.read("/proc/nothing").has_value());
    CHECK(files.list("/proc") == std::vector<std::string>{"loadavg"});
    CHECK(files.list("/sys").empty());
    CHECK(files.exists("/proc/loadavg"));
    CHECK_FALSE(files.exists("/.dockerenv"));
}

TEST_CASE("read_cgroup_limits: v2, quota and memory limit set on the parent slice", "[system][files]") {
    FakeRoot root;
    root.write("/proc/self/cgroup", "0::/pod.slice/job.scope\n");
    root.write("/proc/self/mountinfo", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    const std::string leaf = "/sys/fs/cgroup/pod.slice/job.scope", parent = "/sys/fs/cgroup/pod.slice";
    root.write(leaf + "/cpu.max", "max 100000\n");
    root.write(parent + "/cpu.max", "150000 100000\n");
    root.write(leaf + "/cpuset.cpus.effective", "0-3\n");
    root.write(leaf + "/cpuset.cpus", "\n");  // empty: inherits
    root.write(parent + "/cpuset.cpus", "0-3\n");
    root.write("/sys/fs/cgroup/cpuset.cpus", "0-7\n");
    root.write(leaf + "/memory.max", "max\n");
    root.write(parent + "/memory.max", "4294967296\n");
    root.write(parent + "/memory.current", "3221225472\n");
    root.write(parent + "/memory.stat", "anon 100\ninactive_file 1073741824\n");

    const CgroupLimits l = read_cgroup_limits(root.files());
    REQUIRE(l.cpu);
    CHECK(l.cpu->version == 2);
    REQUIRE(l.cpu_quota);
    CHECK(*l.cpu_quota->cpus() == Approx(1.5));
    CHECK(l.cpu_quota_file == parent + "/cpu.max");
    CHECK(l.cpuset_cpus == std::vector<int>{0, 1, 2, 3});
    CHECK(l.cpuset_file == parent + "/cpuset.cpus");
    CHECK(l.memory_limit_bytes == 4294967296ull);
    CHECK(l.memory_limit_file == parent + "/memory.max");
    CHECK(l.memory_working_set_bytes == 2147483648ull);  // usage less inactive file cache
}

TEST_CASE("read_cgroup_limits: v1 with no limits", "[system][files]") {
    FakeRoot root;
    root.write("/proc/self/cgroup", "4:memory:/process_api/50d8\n3:cpuset:/\n1:cpu,cpuacct:/\n");
    root.write("/proc/self/mountinfo",
               "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
               "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
               "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    root.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    root.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    root.write("/sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-1\n");
    root.write("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-1\n");
    root.write("/sys/fs/cgroup/memory/process_api/50d8/memory.limit_in_bytes", "9223372036854771712\n");
    root.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");

    const CgroupLimits l = read_cgroup_limits(root.files());
    REQUIRE(l.cpu);
    CHECK(l.cpu->version == 1);
    CHECK_FALSE(l.cpu_quota.has_value());
    CHECK(l.cpuset_cpus == std::vector<int>{0, 1});
    CHECK(l.cpuset_file == "/sys/fs/cgroup/cpuset/cpuset.cpus");
    REQUIRE(l.memory);
    CHECK(l.memory->directory == "/sys/fs/cgroup/memory/process_api/50d8");
    CHECK_FALSE(l.memory_limit_bytes.has_value());
}

TEST_CASE("read_cgroup_limits: v1 quota and a memory limit with the hierarchy's inactive cache", "[system][files]") {
    FakeRoot root;
    root.write("/proc/self/cgroup", "5:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n");
    root.write("/proc/self/mountinfo",
               "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n"
               "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n");
    root.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n");
    root.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    root.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "1073741824\n");
    root.write("/sys/fs/cgroup/memory/memory.usage_in_bytes", "536870912\n");
    root.write("/sys/fs/cgroup/memory/memory.stat", "inactive_file 1\ntotal_inactive_file 268435456\n");

    const CgroupLimits l = read_cgroup_limits(root.files());
    REQUIRE(l.cpu_quota);
    CHECK(*l.cpu_quota->cpus() == Approx(0.5));
    CHECK(l.cpu_quota_file == "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us");
    CHECK_FALSE(l.cpuset_cpus.has_value());  // no cpuset hierarchy visible
    CHECK(l.memory_limit_bytes == 1073741824ull);
    CHECK(l.memory_working_set_bytes == 268435456ull);
}

TEST_CASE("read_cgroup_limits: no cgroup files at all", "[system][files]") {
    FakeRoot root;
    const CgroupLimits l = read_cgroup_limits(root.files());
    CHECK_FALSE(l.cpu.has_value());
    CHECK_FALSE(l.cpu_quota.has_value());
    CHECK_FALSE(l.cpuset_cpus.has_value());
    CHECK_FALSE(l.memory_limit_bytes.has_value());
}

TEST_CASE("read_cpu_frequency: cpufreq present", "[system][files]") {
    FakeRoot root;
    for (int cpu : {0, 1}) {
        const std::string d = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/";
        root.write(d + "scaling_cur_freq", cpu == 0 ? "1200000\n" : "3000000\n");
        root.write(d + "scaling_min_freq", "800000\n");
        root.write(d + "scaling_max_freq", "3000000\n");
        root.write(d + "cpuinfo_min_freq", "800000\n");
        root.write(d + "cpuinfo_max_freq", "3500000\n");
        root.write(d + "scaling_governor", cpu == 0 ? "powersave\n" : "performance\n");
        root.write(d + "scaling_driver", "acpi-cpufreq\n");
    }
    const CpuFrequency f = read_cpu_frequency(root.files(), {0, 1});
    CHECK(f.known());
    CHECK(*f.current_min == Approx(1200));
    CHECK(*f.current_max == Approx(3000));
    CHECK(*f.current_mean == Approx(2100));
    CHECK(*f.policy_max == Approx(3000));
    CHECK(*f.hardware_max == Approx(3500));
    CHECK(*f.hardware_min == Approx(800));
    CHECK_FALSE(f.base.has_value());
    CHECK(f.governors == std::vector<std::string>{"performance", "powersave"});
    CHECK(f.driver == "acpi-cpufreq");
    CHECK(read_current_mhz(root.files(), {0, 1, 2}) == std::vector<double>{1200, 3000});
}

TEST_CASE("read_cpu_frequency: no cpufreq (a VM) is unknown, not an error", "[system][files]") {
    FakeRoot root;
    const CpuFrequency f = read_cpu_frequency(root.files(), {0, 1});
    CHECK_FALSE(f.known());
    CHECK(f.governors.empty());
    CHECK(read_current_mhz(root.files(), {0, 1}).empty());
}

TEST_CASE("read_cpu_topology: sysfs ids, SMT, and the cpuinfo fallback", "[system][files]") {
    FakeRoot root;
    root.write("/sys/devices/system/cpu/online", "0-3\n");
    root.write("/sys/devices/system/cpu/smt/control", "on\n");
    root.write("/sys/devices/system/cpu/smt/active", "1\n");
    for (int cpu = 0; cpu < 4; ++cpu) {
        const std::string d = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        root.write(d + "physical_package_id", "0\n");
        root.write(d + "core_id", std::to_string(cpu % 2) + "\n");  // two threads per core
    }
    const CpuTopology t = read_cpu_topology(root.files(), CpuInfo{});
    CHECK(t.online == std::vector<int>{0, 1, 2, 3});
    CHECK(t.sockets == 1);
    CHECK(t.cores == 2);
    CHECK(t.threads_per_core() == 2);
    CHECK(t.smt_control == "on");
    CHECK(t.smt_active == true);

    FakeRoot bare;
    bare.write("/sys/devices/system/cpu/online", "0-1\n");
    CpuInfo info;
    info.sockets = 1;
    info.cores = 2;
    const CpuTopology fallback = read_cpu_topology(bare.files(), info);
    CHECK(fallback.cores == 2);
    CHECK(fallback.smt_control.empty());
    CHECK_FALSE(fallback.smt_active.has_value());
}

TEST_CASE("read_last_level_cache: one instance per shared set, instruction caches ignored", "[system][files]") {
    FakeRoot root;
    for (int cpu = 0; cpu < 4; ++cpu) {
        const std::string d = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/";
        auto cache = [&](const char* index, const char* level, const char* type, const char* size,
                         const std::string& shared) {
            root.write(d + index + "/level", std::string(level) + "\n");
            root.write(d + index + "/type", std::string(type) + "\n");
            root.write(d + index + "/size", std::string(size) + "\n");
            root.write(d + index + "/shared_cpu_list", shared + "\n");
        };
        cache("index0", "1", "Data", "32K", std::to_string(cpu));
        cache("index1", "1", "Instruction", "32K", std::to_string(cpu));
        cache("index2", "2", "Unified", "1024K", std::to_string(cpu));
        cache("index3", "3", "Unified", "32768K", cpu < 2 ? "0-1" : "2-3");  // two L3 instances
    }
    const auto all = read_last_level_cache(root.files(), {0, 1, 2, 3});
    REQUIRE(all);
    CHECK(all->level == 3);
    CHECK(all->instances == 2);
    CHECK(all->bytes_per_instance == 32ull << 20);
    CHECK(all->total_bytes == 64ull << 20);
    const auto half = read_last_level_cache(root.files(), {0, 1});
    REQUIRE(half);
    CHECK(half->instances == 1);
    FakeRoot none;
    CHECK_FALSE(read_last_level_cache(none.files(), {0}).has_value());
}

TEST_CASE("read_memory_facts: meminfo and THP; missing files are unknown", "[system][files]") {
    FakeRoot root;
    root.write("/proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 400 kB\nSwapTotal: 300 kB\nSwapFree: 100 kB\n");
    root.write("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    const MemoryFacts m = read_memory_facts(root.files());
    CHECK(m.total_bytes == 1024000u);
    CHECK(m.available_bytes == 409600u);
    CHECK(m.swap_used_bytes == 204800u);
    CHECK(m.thp_enabled == "madvise");
    CHECK(m.thp_defrag.empty());
    FakeRoot none;
    const MemoryFacts unknown = read_memory_facts(none.files());
    CHECK_FALSE(unknown.total_bytes.has_value());
    CHECK(unknown.thp_enabled.empty());
}

TEST_CASE("detect_virtualization: each source of evidence", "[system][files]") {
    FakeRoot bare;
    const Virtualization none = detect_virtualization(bare.files(), {});
    CHECK_FALSE(none.hypervisor);
    CHECK_FALSE(none.container);

    const Virtualization kvm = detect_virtualization(bare.files(), {"KVMKVMKVM", true, ""});
    CHECK(kvm.hypervisor);
    CHECK(kvm.hypervisor_vendor == "KVM");
    CHECK(kvm.hypervisor_evidence.size() == 2);

    FakeRoot xen;
    xen.write("/sys/hypervisor/type", "xen\n");
    CHECK(detect_virtualization(xen.files(), {}).hypervisor_vendor == "Xen");

    FakeRoot dmi;
    dmi.write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
    dmi.write("/sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
    const Virtualization q = detect_virtualization(dmi.files(), {});
    CHECK(q.hypervisor);
    CHECK(q.hypervisor_vendor == "KVM");

    FakeRoot metal;  // a physical server's DMI names no hypervisor
    metal.write("/sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
    metal.write("/sys/class/dmi/id/product_name", "PowerEdge R750\n");
    CHECK_FALSE(detect_virtualization(metal.files(), {}).hypervisor);

    FakeRoot docker;
    docker.write("/.dockerenv", "");
    CHECK(detect_virtualization(docker.files(), {}).container_runtime == "docker");

    FakeRoot k8s;
    k8s.write("/proc/self/cgroup", "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-1.scope\n");
    const Virtualization pod = detect_virtualization(k8s.files(), {});
    CHECK(pod.container);
    CHECK(pod.container_runtime == "kubernetes");

    const Virtualization nspawn = detect_virtualization(bare.files(), {"", false, "systemd-nspawn"});
    CHECK(nspawn.container);
    CHECK(nspawn.container_runtime == "systemd-nspawn");
    CHECK(hypervisor_name_from_signature("Microsoft Hv") == "Hyper-V");
    CHECK(hypervisor_name_from_signature("NewVisor") == "NewVisor");
}

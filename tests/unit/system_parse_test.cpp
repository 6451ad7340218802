// The system layer's parsers on synthetic /proc, /sys and cgroup text: well-formed files from
// several kernels and set-ups, and malformed ones (which must give "unknown", never throw).
#include <catch2/catch.hpp>

#include "system/cgroup_parse.hpp"
#include "system/cpu_features.hpp"
#include "system/cpu_list.hpp"
#include "system/memory_facts.hpp"
#include "system/proc_parse.hpp"
#include "system/sysfs_parse.hpp"

using namespace clprobe;

namespace {
std::vector<int> range(int first, int last) {
    std::vector<int> v;
    for (int i = first; i <= last; ++i)
        v.push_back(i);
    return v;
}
}  // namespace

// ---------------------------------------------------------------- CPU lists

TEST_CASE("parse_cpu_list: ranges, singles and their mix", "[system][parse]") {
    CHECK(parse_cpu_list("0-3,8-11") == std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11});
    CHECK(parse_cpu_list("5") == std::vector<int>{5});
    CHECK(parse_cpu_list("0,2,4-5\n") == std::vector<int>{0, 2, 4, 5});
    CHECK(parse_cpu_list("0-127") == range(0, 127));
    CHECK(parse_cpu_list("3,1,1-2") == std::vector<int>{1, 2, 3});  // sorted, duplicates merged
}

TEST_CASE("parse_cpu_list: an empty list is an empty set", "[system][parse]") {
    CHECK(parse_cpu_list("") == std::vector<int>{});
    CHECK(parse_cpu_list("\n") == std::vector<int>{});
}

TEST_CASE("parse_cpu_list: malformed lists are unknown", "[system][parse]") {
    for (const char* bad : {"0-", "-3", "3-1", "a", "0,,1", "0,", "1-2-3", "0-99999999", "0x3"}) {
        INFO(bad);
        CHECK_FALSE(parse_cpu_list(bad).has_value());
    }
}

TEST_CASE("format_cpu_list: merges ranges and round-trips", "[system][parse]") {
    CHECK(format_cpu_list({0, 1, 2, 3, 8, 9, 10, 11}) == "0-3,8-11");
    CHECK(format_cpu_list({5}) == "5");
    CHECK(format_cpu_list({0, 2, 3}) == "0,2-3");
    CHECK(format_cpu_list({}) == "");
    CHECK(format_cpu_list(*parse_cpu_list("0-3,8-11")) == "0-3,8-11");
}

// ---------------------------------------------------------------- /proc/stat

TEST_CASE("parse_proc_stat: aggregate and per-CPU lines", "[system][parse]") {
    const auto s = parse_proc_stat(
        "cpu  552980 10 45362 445181 2544 7 454 2390 100 5\n"
        "cpu0 265717 4 20654 236226 455 3 128 1157 50 2\n"
        "cpu1 287263 6 24707 208955 2088 4 325 1232 50 3\n"
        "intr 123 4 5\nctxt 999\nbtime 1700000000\nprocesses 24189\n");
    REQUIRE(s);
    CHECK(s->all.user == 552980);
    CHECK(s->all.nice == 10);
    CHECK(s->all.system == 45362);
    CHECK(s->all.idle == 445181);
    CHECK(s->all.iowait == 2544);
    CHECK(s->all.irq == 7);
    CHECK(s->all.softirq == 454);
    CHECK(s->all.steal == 2390);
    CHECK(s->all.guest == 100);
    // guest time is inside user already: busy does not add it again.
    CHECK(s->all.busy() == 552980 + 10 + 45362 + 7 + 454);
    CHECK(s->all.elapsed() == s->all.busy() + 445181 + 2544 + 2390);
    REQUIRE(s->per_cpu.size() == 2);
    CHECK(s->per_cpu.at(1).steal == 1232);
}

TEST_CASE("parse_proc_stat: old kernels without steal and guest columns", "[system][parse]") {
    const auto s = parse_proc_stat("cpu 10 0 5 100\ncpu0 10 0 5 100\n");
    REQUIRE(s);
    CHECK(s->all.steal == 0);
    CHECK(s->all.busy() == 15);
}

TEST_CASE("parse_proc_stat: offline CPUs simply have no line", "[system][parse]") {
    const auto s = parse_proc_stat("cpu 1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu3 1 2 3 4 5 6 7 8 0 0\n");
    REQUIRE(s);
    CHECK(s->per_cpu.count(0) == 1);
    CHECK(s->per_cpu.count(3) == 1);
    CHECK(s->per_cpu.count(1) == 0);
}

TEST_CASE("parse_proc_stat: no aggregate line, or a malformed one, is unknown", "[system][parse]") {
    CHECK_FALSE(parse_proc_stat("").has_value());
    CHECK_FALSE(parse_proc_stat("cpu0 1 2 3 4\n").has_value());
    CHECK_FALSE(parse_proc_stat("cpu 1 2 x 4\n").has_value());
    CHECK_FALSE(parse_proc_stat("cpu 1 2\n").has_value());
}

// ---------------------------------------------------------------- /proc/[pid]/stat

namespace {
// A /proc/[pid]/stat line with the given comm and times; fields after comm as the kernel writes them.
std::string pid_stat(int pid, const std::string& comm, int ppid, unsigned long utime, unsigned long stime,
                     unsigned long start, int processor = 1, unsigned long flags = 4194304) {
    return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) + " 100 100 0 -1 " +
           std::to_string(flags) + " 98 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
           " 7 8 20 0 1 0 " + std::to_string(start) + " 3133440 356 18446744073709551615 1 1 1 0 0 0 0 0 0 0 0 0 17 " +
           std::to_string(processor) + " 0 0 0 0 0\n";
}
}  // namespace

TEST_CASE("parse_pid_stat: the fields clprobe uses", "[system][parse]") {
    const auto s = parse_pid_stat(pid_stat(4242, "stress-ng-cpu", 4241, 150, 25, 525528, 1));
    REQUIRE(s);
    CHECK(s->pid == 4242);
    CHECK(s->comm == "stress-ng-cpu");
    CHECK(s->state == 'S');
    CHECK(s->ppid == 4241);
    CHECK(s->utime == 150);
    CHECK(s->stime == 25);
    CHECK(s->cpu_ticks() == 175);
    CHECK(s->cutime == 7);
    CHECK(s->cstime == 8);
    CHECK(s->start_ticks == 525528);
    CHECK(s->processor == 1);
    CHECK_FALSE(s->kernel_thread());
}

TEST_CASE("parse_pid_stat: comm with spaces and parentheses", "[system][parse]") {
    for (const std::string comm : {"tmux: server", "a) b (c", "(sd-pam)", ") ) 1 2 3", ""}) {
        INFO(comm);
        const auto s = parse_pid_stat(pid_stat(7, comm, 1, 11, 22, 33));
        REQUIRE(s);
        CHECK(s->comm == comm);
        CHECK(s->utime == 11);
        CHECK(s->stime == 22);
        CHECK(s->start_ticks == 33);
    }
}

TEST_CASE("parse_pid_stat: kernel threads carry PF_KTHREAD", "[system][parse]") {
    const auto s = parse_pid_stat(pid_stat(70, "kdamond.0", 2, 3200, 0, 5, 0, 0x00208040));
    REQUIRE(s);
    CHECK(s->kernel_thread());
}

TEST_CASE("parse_pid_stat: truncated or malformed lines are unknown", "[system][parse]") {
    CHECK_FALSE(parse_pid_stat("").has_value());
    CHECK_FALSE(parse_pid_stat("12 (bash) S 1 2 3").has_value());
    CHECK_FALSE(parse_pid_stat("12 bash S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22").has_value());
    CHECK_FALSE(parse_pid_stat("x (bash) S 1 100 100 0 -1 0 98 0 0 0 a b 7 8 20 0 1 0 5 1 1").has_value());
}

// ---------------------------------------------------------------- meminfo, vmstat, loadavg, uptime

TEST_CASE("parse_meminfo: kB values become bytes, counts stay counts", "[system][parse]") {
    const auto m = parse_meminfo(
        "MemTotal:       24683656 kB\nMemAvailable:   24315548 kB\nSwapTotal:             0 kB\n"
        "HugePages_Total:       4\nbroken line\nDirectMap4k: x kB\n");
    CHECK(m.at("MemTotal") == 24683656ull * 1024);
    CHECK(m.at("MemAvailable") == 24315548ull * 1024);
    CHECK(m.at("SwapTotal") == 0);
    CHECK(m.at("HugePages_Total") == 4);
    CHECK(m.count("DirectMap4k") == 0);
}

TEST_CASE("parse_key_values: vmstat and memory.stat", "[system][parse]") {
    const auto kv = parse_key_values("pswpin 12\npswpout 34\nnr_free_pages 99\nbad\nhierarchical_memory_limit x\n");
    CHECK(kv.at("pswpin") == 12);
    CHECK(kv.at("pswpout") == 34);
    CHECK(kv.count("bad") == 0);
    CHECK(kv.count("hierarchical_memory_limit") == 0);
}

TEST_CASE("parse_loadavg and parse_uptime", "[system][parse]") {
    const auto l = parse_loadavg("0.41 1.17 1.40 1/81 24189\n");
    REQUIRE(l);
    CHECK(l->one == Approx(0.41));
    CHECK(l->five == Approx(1.17));
    CHECK(l->fifteen == Approx(1.40));
    CHECK(l->running == 1);
    CHECK(l->tasks == 81);
    CHECK_FALSE(parse_loadavg("0.41 1.17").has_value());
    CHECK_FALSE(parse_loadavg("a b c 1/2 3").has_value());
    CHECK(parse_uptime("7466.12 14000.50\n") == Approx(7466.12));
    CHECK_FALSE(parse_uptime("").has_value());
}

// ---------------------------------------------------------------- cpuinfo and ISA flags

TEST_CASE("parse_cpuinfo: x86 model, flags, sockets and cores", "[system][parse]") {
    std::string text;
    for (int p = 0; p < 4; ++p)
        text += "processor\t: " + std::to_string(p) +
                "\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
                "physical id\t: " +
                std::to_string(p / 2) + "\ncore id\t\t: " + std::to_string(p % 2) +
                "\ncpu MHz\t\t: 2000.000\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512_bf16 amx_tile "
                "hypervisor\n\n";
    const CpuInfo info = parse_cpuinfo(text);
    CHECK(info.model == "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
    CHECK(info.vendor == "GenuineIntel");
    CHECK(info.processors == 4);
    CHECK(info.sockets == 2);
    CHECK(info.cores == 4);
    REQUIRE(info.mhz);
    CHECK(*info.mhz == Approx(2000));
    CHECK(has_hypervisor_flag(info.flags));

    const auto isa = isa_features(info.flags, "x86_64");
    auto present = [&](const std::string& name) {
        for (const auto& f : isa)
            if (f.name == name) return f.present;
        FAIL("no ISA entry " << name);
        return false;
    };
    CHECK(present("sse4_2"));
    CHECK(present("avx2"));
    CHECK(present("fma"));
    CHECK(present("avx512f"));
    CHECK(present("avx512_bf16"));
    CHECK(present("amx_tile"));
    CHECK_FALSE(present("amx_int8"));
    CHECK_FALSE(present("avx512_vnni"));
}

TEST_CASE("parse_cpuinfo: ARM names the core by implementer and part; neon from asimd", "[system][parse]") {
    const CpuInfo info = parse_cpuinfo(
        "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes sve\nCPU implementer\t: 0x41\n"
        "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nFeatures\t: fp\n");
    CHECK(info.model == "ARM implementer 0x41 part 0xd0c");
    CHECK(info.processors == 2);
    CHECK(info.sockets == 0);  // the file does not say
    CHECK_FALSE(has_hypervisor_flag(info.flags));
    const auto isa = isa_features(info.flags, "aarch64");
    REQUIRE_FALSE(isa.empty());
    CHECK(isa[0].name == "neon");
    CHECK(isa[0].present);
    bool sve = false, sve2 = true;
    for (const auto& f : isa) {
        if (f.name == "sve") sve = f.present;
        if (f.name == "sve2") sve2 = f.present;
    }
    CHECK(sve);
    CHECK_FALSE(sve2);
    CHECK(isa_features({"neon"}, "armv7l")[0].present);
}

TEST_CASE("isa_features: other architectures list nothing", "[system][parse]") {
    CHECK(isa_features({"avx2"}, "riscv64").empty());
    CHECK(parse_cpuinfo("").processors == 0);
}

// ---------------------------------------------------------------- sysfs values

TEST_CASE("bracketed_choice, parse_cache_size, khz_text_to_mhz", "[system][parse]") {
    CHECK(bracketed_choice("always [madvise] never\n") == "madvise");
    CHECK(bracketed_choice("[always] madvise never") == "always");
    CHECK_FALSE(bracketed_choice("always madvise never").has_value());
    CHECK_FALSE(bracketed_choice("[]").has_value());
    CHECK(parse_cache_size("32K\n") == 32u << 10);
    CHECK(parse_cache_size("32768K") == 32u << 20);
    CHECK(parse_cache_size("1M") == 1u << 20);
    CHECK(parse_cache_size("512") == 512u);
    CHECK_FALSE(parse_cache_size("K").has_value());
    CHECK_FALSE(parse_cache_size("0K").has_value());
    CHECK(khz_text_to_mhz("2445406\n") == Approx(2445.406));
    CHECK_FALSE(khz_text_to_mhz("<unknown>").has_value());
}

TEST_CASE("memory_headroom_bytes: the tighter of host memory and the cgroup's room", "[system][parse]") {
    CHECK(memory_headroom_bytes(100, std::nullopt, std::nullopt) == 100u);
    CHECK(memory_headroom_bytes(100, 60, 20) == 40u);
    CHECK(memory_headroom_bytes(30, 60, 20) == 30u);
    CHECK(memory_headroom_bytes(100, 60, 80) == 0u);  // over the limit already
    CHECK(memory_headroom_bytes(std::nullopt, 60, std::nullopt) == 60u);
    CHECK_FALSE(memory_headroom_bytes(std::nullopt, std::nullopt, 5).has_value());
}

// ---------------------------------------------------------------- cgroups

TEST_CASE("parse_proc_cgroup: v1 hierarchies, v2 and hybrid", "[system][cgroup]") {
    const auto groups = parse_proc_cgroup(
        "12:cpu,cpuacct:/docker/3f2a\n4:memory:/process_api/50d8\n1:name=systemd:/init.scope\n0::/user.slice/a:b\n"
        "garbage\n3:cpuset:relative\n");
    REQUIRE(groups.size() == 4);
    CHECK(groups[0].hierarchy == 12);
    CHECK(groups[0].controllers == std::vector<std::string>{"cpu", "cpuacct"});
    CHECK(groups[0].path == "/docker/3f2a");
    CHECK(groups[2].controllers == std::vector<std::string>{"name=systemd"});
    CHECK(groups[3].hierarchy == 0);
    CHECK(groups[3].controllers.empty());
    CHECK(groups[3].path == "/user.slice/a:b");  // a ':' inside the path stays in the path
    CHECK(parse_proc_cgroup("0::/gone (deleted)\n")[0].path == "/gone");
}

TEST_CASE("parse_mountinfo: cgroup mounts with optional fields and escapes", "[system][cgroup]") {
    const auto mounts = parse_mountinfo(
        "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
        "35 31 0:32 /docker/3f2a /sys/fs/cgroup/memory rw master:4 - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/my\\040tree rw - cgroup2 cgroup2 rw,nsdelegate\n");
    REQUIRE(mounts.size() == 3);
    CHECK(mounts[0].mount_point == "/sys/fs/cgroup/cpu,cpuacct");
    CHECK(mounts[0].fs_type == "cgroup");
    CHECK(mounts[0].super_options == std::vector<std::string>{"rw", "cpu", "cpuacct"});
    CHECK(mounts[1].root == "/docker/3f2a");
    CHECK(mounts[2].mount_point == "/sys/fs/cgroup/my tree");
    CHECK(mounts[2].fs_type == "cgroup2");
}

TEST_CASE("locate_cgroup: v2 unified tree", "[system][cgroup]") {
    const auto groups = parse_proc_cgroup("0::/system.slice/job.service\n");
    const auto mounts = parse_mountinfo("30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    const auto cpu = locate_cgroup("cpu", groups, mounts);
    REQUIRE(cpu);
    CHECK(cpu->version == 2);
    CHECK(cpu->directory == "/sys/fs/cgroup/system.slice/job.service");
    CHECK(cgroup_ancestors(*cpu) == std::vector<std::string>{"/sys/fs/cgroup/system.slice/job.service",
                                                             "/sys/fs/cgroup/system.slice", "/sys/fs/cgroup"});
}

TEST_CASE("locate_cgroup: hybrid set-up prefers the v1 controller", "[system][cgroup]") {
    const auto groups = parse_proc_cgroup("4:memory:/process_api/50d8\n1:cpu:/\n0::/\n");
    const auto mounts = parse_mountinfo(
        "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
    const auto memory = locate_cgroup("memory", groups, mounts);
    REQUIRE(memory);
    CHECK(memory->version == 1);
    CHECK(memory->directory == "/sys/fs/cgroup/memory/process_api/50d8");
    const auto cpu = locate_cgroup("cpu", groups, mounts);
    REQUIRE(cpu);
    CHECK(cpu->directory == "/sys/fs/cgroup/cpu");
    CHECK(cgroup_ancestors(*cpu) == std::vector<std::string>{"/sys/fs/cgroup/cpu"});
    // No v1 cpuset hierarchy: the v2 tree is where cpuset files would be.
    const auto cpuset = locate_cgroup("cpuset", groups, mounts);
    REQUIRE(cpuset);
    CHECK(cpuset->version == 2);
    CHECK(cpuset->directory == "/sys/fs/cgroup/unified");
}

TEST_CASE("locate_cgroup: a container's mount root is stripped from its host path", "[system][cgroup]") {
    const auto groups = parse_proc_cgroup("5:cpu,cpuacct:/docker/3f2a\n");
    const auto mounts =
        parse_mountinfo("32 31 0:29 /docker/3f2a /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n");
    const auto cpu = locate_cgroup("cpu", groups, mounts);
    REQUIRE(cpu);
    CHECK(cpu->directory == "/sys/fs/cgroup/cpu,cpuacct");
    // A path outside the mounted subtree falls back to the mount point.
    const auto outside = locate_cgroup("cpu", parse_proc_cgroup("5:cpu,cpuacct:/elsewhere\n"), mounts);
    REQUIRE(outside);
    CHECK(outside->directory == "/sys/fs/cgroup/cpu,cpuacct");
    // Nothing mounted: unknown.
    CHECK_FALSE(locate_cgroup("cpu", groups, {}).has_value());
    CHECK_FALSE(locate_cgroup("memory", groups, mounts).has_value());
}

TEST_CASE("parse_cpu_max: v2 quotas", "[system][cgroup]") {
    const auto unlimited = parse_cpu_max("max 100000\n");
    REQUIRE(unlimited);
    CHECK_FALSE(unlimited->cpus().has_value());
    const auto two = parse_cpu_max("200000 100000\n");
    REQUIRE(two);
    CHECK(*two->cpus() == Approx(2.0));
    const auto half = parse_cpu_max("50000 100000");
    REQUIRE(half);
    CHECK(*half->cpus() == Approx(0.5));
    CHECK(parse_cpu_max("150000")->cpus() == Approx(1.5));  // default period
    for (const char* bad : {"", "max 0", "a 100000", "1 2 3", "-5 100000"}) {
        INFO(bad);
        CHECK_FALSE(parse_cpu_max(bad).has_value());
    }
}

TEST_CASE("parse_cfs_quota: v1 quotas, -1 unlimited", "[system][cgroup]") {
    const auto unlimited = parse_cfs_quota("-1\n", "100000\n");
    REQUIRE(unlimited);
    CHECK_FALSE(unlimited->cpus().has_value());
    CHECK(*parse_cfs_quota("150000", "100000")->cpus() == Approx(1.5));
    CHECK_FALSE(parse_cfs_quota("x", "100000").has_value());
    CHECK_FALSE(parse_cfs_quota("100", "0").has_value());
}

TEST_CASE("parse_memory_limit: v2 max, v1 page-rounded LONG_MAX, real limits", "[system][cgroup]") {
    CHECK_FALSE(parse_memory_limit("max\n")->bytes.has_value());
    CHECK_FALSE(parse_memory_limit("9223372036854771712\n")->bytes.has_value());
    CHECK(parse_memory_limit("4294967296\n")->bytes == 4294967296ull);
    CHECK_FALSE(parse_memory_limit("lots").has_value());
}

#include "network/network_support.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "network/mpi_call.hpp"

namespace clprobe::net {

namespace {
constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;
}

const MpiWorld& require_world() {
    const MpiWorld* world = MpiSession::world();
    if (world == nullptr) throw ProbeUnsupported(MpiSession::unavailable_reason());
    mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    return *world;
}

DeviceSession& require_device(ProbeContext& ctx) {
    on_all_ranks([&] {
        if (ctx.device != nullptr) return;
        if (!ctx.device_error.empty()) throw std::runtime_error(ctx.device_error);
        throw ProbeSkipped("no OpenCL device is open");
    });
    return *ctx.device;
}

std::vector<std::uint64_t> p2p_sizes(RunMode mode) {
    switch (mode) {
        case RunMode::quick:
            return {8, KiB, 64 * KiB, MiB, 4 * MiB};
        case RunMode::standard:
            return {8, 64, 512, 4 * KiB, 32 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB};
        case RunMode::full:
            break;
    }
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s = 1; s <= 64 * MiB; s *= 4)
        sizes.push_back(s);
    return sizes;
}

std::vector<std::uint64_t> allreduce_sizes(RunMode mode) {
    // Multiples of 4 bytes (floats); the smallest is latency-bound, the largest bandwidth-bound.
    switch (mode) {
        case RunMode::quick:
            return {KiB, 64 * KiB, MiB, 4 * MiB};
        case RunMode::standard:
            return {8, KiB, 16 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB};
        case RunMode::full:
            break;
    }
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s = 4; s <= 64 * MiB; s *= 4)
        sizes.push_back(s);
    return sizes;
}

std::uint64_t pair_scan_bytes(RunMode) {
    return MiB;  // bandwidth-bound on every interconnect, yet quick to send between many pairs
}

int samples_for(RunMode mode) {
    return sampler_for(mode).samples;
}

double sample_bytes(RunMode mode) {
    switch (mode) {
        case RunMode::quick:
            return 8.0 * MiB;
        case RunMode::standard:
            return 64.0 * MiB;
        case RunMode::full:
            break;
    }
    return 512.0 * MiB;
}

std::int64_t iterations_for(RunMode mode, double bytes_per_iteration, std::int64_t lo, std::int64_t hi) {
    const double n = std::floor(sample_bytes(mode) / std::max(1.0, bytes_per_iteration));
    return std::clamp(static_cast<std::int64_t>(n), lo, hi);
}

void share_from(int root, std::vector<double>& values) {
    mpi_check(MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

double max_over_ranks(double value) {
    double out = 0;
    mpi_check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce (max)");
    return out;
}

void verify_on_all_ranks(bool ok, const std::string& what) {
    if (!all_ranks_agree(ok)) throw VerificationError(what + (ok ? " (on another rank)" : " (on this rank)"));
}

void on_all_ranks(const std::function<void()>& setup) {
    std::exception_ptr failure;
    try {
        setup();
    } catch (...) {
        failure = std::current_exception();
    }
    if (all_ranks_agree(failure == nullptr)) return;
    if (failure) std::rethrow_exception(failure);
    throw ProbeSkipped("another rank failed to set up this probe (its report says why)");
}

unsigned char pattern_byte(int rank, std::uint64_t index) {
    return static_cast<unsigned char>((index * 131 + static_cast<std::uint64_t>(rank) * 29 + 7) & 0xff);
}

void fill_pattern(std::vector<unsigned char>& buffer, int rank) {
    for (std::uint64_t i = 0; i < buffer.size(); ++i)
        buffer[i] = pattern_byte(rank, i);
}

bool holds_pattern(const std::vector<unsigned char>& buffer, std::uint64_t offset, std::uint64_t bytes, int rank) {
    if (offset + bytes > buffer.size()) return false;
    for (std::uint64_t i = 0; i < bytes; ++i)
        if (buffer[offset + i] != pattern_byte(rank, i)) return false;
    return true;
}

std::string size_label(std::uint64_t bytes) {
    return std::to_string(bytes);
}

}  // namespace clprobe::net

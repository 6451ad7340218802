#pragma once
// What the MPI network probes share (built with MPI only). Every rank must make the same MPI
// calls in the same order, so nothing here calibrates on the clock the way the Sampler does
// (two ranks could pick different counts and wait on each other forever): iteration counts come
// from the run mode and the message size alone.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "network/mpi_session.hpp"
#include "network/network_probes.hpp"

namespace clprobe::net {

// The MPI build's base. The runner never skips it for want of a device: a rank that skipped a
// probe alone would leave the others in its collectives, so probes that need the device ask for
// it with require_device, agreed over all ranks, after the world (an unlaunched run then says
// "not started by mpirun..." rather than asking for a device it would not use).
class MpiProbe : public NetworkProbe {
  public:
    using NetworkProbe::NetworkProbe;
    bool needs_device() const override { return false; }
    double expected_seconds(RunMode mode) const override {
        return MpiSession::world() ? NetworkProbe::expected_seconds(mode) : 0.0;
    }
};

// The world, or ProbeUnsupported with the session's reason. Ends with a barrier: ranks arrive at
// the network layer at different times (the node-local layers take turns), and no timing may
// start before every rank is there.
const MpiWorld& require_world();

// The open device, or, when any rank has none, ProbeSkipped on every rank (with this rank's
// device error when it has one).
DeviceSession& require_device(ProbeContext& ctx);

// Message sizes in bytes of the point-to-point and all-reduce sweeps.
std::vector<std::uint64_t> p2p_sizes(RunMode mode);
std::vector<std::uint64_t> allreduce_sizes(RunMode mode);
// The size every rank pair is measured at to find a slow link.
std::uint64_t pair_scan_bytes(RunMode mode);

// Samples per figure (the mode's sampler count) and bytes one sample should move.
int samples_for(RunMode mode);
double sample_bytes(RunMode mode);
// Iterations for a sample moving `bytes_per_iteration`: sample_bytes / bytes, within [lo, hi].
std::int64_t iterations_for(RunMode mode, double bytes_per_iteration, std::int64_t lo, std::int64_t hi);

// Replaces `values` on every rank with rank `root`'s (same length everywhere).
void share_from(int root, std::vector<double>& values);
// The largest of each rank's value, on every rank.
double max_over_ranks(double value);
// Throws VerificationError on every rank when `ok` is false on any: a rank that failed alone
// would leave the others waiting in the next collective.
void verify_on_all_ranks(bool ok, const std::string& what);

// Runs `setup` (local work: buffers, uploads, kernels) on every rank, then agrees: when it threw
// on any rank, every rank throws (its own exception, or ProbeSkipped naming the other rank's
// failure), so none goes on into a collective the failed rank will never join.
void on_all_ranks(const std::function<void()>& setup);

// Bytes a rank writes into a message, a function of (rank, index) alone so the receiver can check.
unsigned char pattern_byte(int rank, std::uint64_t index);
void fill_pattern(std::vector<unsigned char>& buffer, int rank);
// True when buffer[offset, offset + bytes) holds rank's pattern for a message of `bytes`.
bool holds_pattern(const std::vector<unsigned char>& buffer, std::uint64_t offset, std::uint64_t bytes, int rank);

std::string size_label(std::uint64_t bytes);  // the "size" label's value: bytes in decimal

}  // namespace clprobe::net

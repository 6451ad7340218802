#pragma once
// Checked MPI calls for code built with MPI (CLPROBE_HAVE_MPI). MPI_COMM_WORLD returns errors
// (MPI_ERRORS_RETURN, set by MpiSession::start) instead of aborting, so a failed call becomes an
// exception naming the call and MPI's error string, and the probe ends in error with it.
#include <mpi.h>

#include <stdexcept>
#include <string>

namespace clprobe {

class MpiError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// "MPI_Send failed: MPI_ERR_RANK: invalid rank"
std::string mpi_error_text(const char* call, int code);

// Throws MpiError when `code` is not MPI_SUCCESS.
inline void mpi_check(int code, const char* call) {
    if (code != MPI_SUCCESS) throw MpiError(mpi_error_text(call, code));
}

// True on every rank when `ok` is true on every rank. A check that fails on one rank must end
// the probe on all of them together: a rank that went on alone would wait forever for the others.
bool all_ranks_agree(bool ok);

}  // namespace clprobe

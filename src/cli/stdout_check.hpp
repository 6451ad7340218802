#pragma once
// Stdout is the report: a report that did not reach it (a full device, a closed pipe) is a failed
// command, not a success. Writes through stdio only set an error flag, so every command's exit goes
// through finish_stdout.
#include <string>

namespace clprobe {

// Flushes stdout. When stdout refused a write, prints one line on stderr and returns
// exit_code::output if `code` was ok (another failure's own code is kept); otherwise `code`.
int finish_stdout(int code);

// True once a write to stdout has failed (a std::system_error from fmt::print is one).
bool stdout_failed();

// The reason of a failed stdout write that was reported by an exception (fmt::print throws when
// fwrite comes back short): stdio may have dropped the buffer, so the final flush cannot tell.
void note_stdout_error(int err);

}  // namespace clprobe

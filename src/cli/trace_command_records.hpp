#pragma once
// The records folder of `clprobe trace`: where every process of the job writes its own stream
// (--records DIR, or a temporary folder removed after the report). Checked and made before the
// program starts, like the report paths, so a trace never runs only to lose its records.
#include <string>

namespace clprobe {

struct RecordsFolder {
    std::string path;  // absolute
    bool temporary = false;
};

// `option` empty: a new folder under $TMPDIR (or /tmp). Otherwise the folder is made when missing
// (its parent must exist) and must be a writable folder; streams of an earlier trace in it
// (*.rec) are removed. Throws OutputError with one line when the folder cannot take records.
// Records hold what the program computed on (captured buffers, kernel sources), so the folder is
// private, as perf keeps perf.data: made 0700 whatever the umask, and an existing folder owned by
// another user, or one other users may read or write, is refused unless `shared` (--records-shared).
RecordsFolder prepare_records_folder(const std::string& option, bool shared = false);

// Removes a temporary folder and the streams in it; leaves a --records folder alone.
void remove_temporary(const RecordsFolder& folder);

}  // namespace clprobe

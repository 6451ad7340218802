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
RecordsFolder prepare_records_folder(const std::string& option);

// Removes a temporary folder and the streams in it; leaves a --records folder alone.
void remove_temporary(const RecordsFolder& folder);

}  // namespace clprobe

#pragma once
// One trace record (a line of trace_format.hpp) formatted on the stack: the layer builds one per
// OpenCL call, so no allocation and std::to_chars rather than a stream.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace clprobe::layer {

class RecordLine {
  public:
    explicit RecordLine(char type) {
        buf_[0] = type;
        size_ = 1;
    }

    RecordLine& num(uint64_t v) {
        return field([&](char* p, char* e) { return std::to_chars(p, e, v).ptr; });
    }
    RecordLine& snum(int64_t v) {
        return field([&](char* p, char* e) { return std::to_chars(p, e, v).ptr; });
    }
    RecordLine& hex(uint64_t v) {
        return field([&](char* p, char* e) { return std::to_chars(p, e, v, 16).ptr; });
    }
    RecordLine& handle(const void* p) { return hex(reinterpret_cast<uintptr_t>(p)); }
    // A token the layer chose (command names, kinds): written as is.
    RecordLine& word(std::string_view w) {
        return field([&](char* p, char* e) {
            const size_t n = w.size() < static_cast<size_t>(e - p) ? w.size() : static_cast<size_t>(e - p);
            std::memcpy(p, w.data(), n);
            return p + n;
        });
    }
    // A name from the driver or the program: TAB, CR and LF would split the record, so they become
    // spaces; long names are cut so the record always fits.
    RecordLine& text(std::string_view s) {
        if (s.size() > max_text) s = s.substr(0, max_text);
        return field([&](char* p, char* e) {
            for (char c : s) {
                if (p == e) break;
                *p++ = (c == '\t' || c == '\r' || c == '\n') ? ' ' : c;
            }
            return p;
        });
    }
    // "a,b,c": work sizes, padded to three dimensions with 1.
    RecordLine& sizes(const size_t* v, unsigned dims) {
        return field([&](char* p, char* e) {
            for (unsigned i = 0; i < 3; ++i) {
                if (i) *p++ = ',';
                p = std::to_chars(p, e - 1, static_cast<uint64_t>(i < dims ? v[i] : 1)).ptr;
            }
            return p;
        });
    }

    // The finished line, newline included.
    std::string_view line() {
        buf_[size_] = '\n';
        return {buf_, size_ + 1};
    }

  private:
    static constexpr size_t capacity = 1024;
    static constexpr size_t max_text = 400;  // leaves room for every numeric field of any record

    template <typename Write>
    RecordLine& field(Write write) {
        // Reserve one byte for the newline and a margin for a number: a record is never cut mid-field.
        if (size_ + 64 > capacity) return *this;
        buf_[size_++] = '\t';
        size_ = static_cast<size_t>(write(buf_ + size_, buf_ + capacity - 1) - buf_);
        return *this;
    }

    char buf_[capacity];
    size_t size_;
};

}  // namespace clprobe::layer

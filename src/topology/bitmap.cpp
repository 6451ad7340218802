#include "topology/bitmap.hpp"

#include <cstdlib>
#include <new>
#include <regex>
#include <stdexcept>
#include <utility>

namespace clprobe {

namespace {

hwloc_bitmap_t allocated(hwloc_bitmap_t b) {
    if (!b) throw std::bad_alloc();
    return b;
}

}  // namespace

Bitmap::Bitmap() : bitmap_(allocated(hwloc_bitmap_alloc())) {}

Bitmap::Bitmap(hwloc_const_bitmap_t copy_of)
    : bitmap_(allocated(copy_of ? hwloc_bitmap_dup(copy_of) : hwloc_bitmap_alloc())) {}

Bitmap Bitmap::from_list(const std::string& list) {
    // hwloc also reads "0-" (to infinity) and is lenient with junk; only plain finite lists are wanted.
    static const std::regex finite_list(R"((\d+(-\d+)?)(,\d+(-\d+)?)*)");
    Bitmap b;
    if (list.empty()) return b;
    if (!std::regex_match(list, finite_list) || hwloc_bitmap_list_sscanf(b.bitmap_, list.c_str()) != 0)
        throw std::invalid_argument("not a CPU or node list: '" + list + "'");
    return b;
}

Bitmap::Bitmap(const Bitmap& other) : Bitmap(static_cast<hwloc_const_bitmap_t>(other.bitmap_)) {}

Bitmap& Bitmap::operator=(const Bitmap& other) {
    if (this != &other) hwloc_bitmap_copy(bitmap_, other.bitmap_);
    return *this;
}

Bitmap::Bitmap(Bitmap&& other) noexcept : bitmap_(std::exchange(other.bitmap_, nullptr)) {}

Bitmap& Bitmap::operator=(Bitmap&& other) noexcept {
    std::swap(bitmap_, other.bitmap_);
    return *this;
}

Bitmap::~Bitmap() {
    hwloc_bitmap_free(bitmap_);  // accepts null (a moved-from bitmap)
}

std::string Bitmap::list() const {
    if (empty()) return {};
    char* text = nullptr;
    if (hwloc_bitmap_list_asprintf(&text, bitmap_) < 0 || !text) throw std::bad_alloc();
    std::string out(text);
    std::free(text);
    return out;
}

std::vector<unsigned> Bitmap::indexes() const {
    std::vector<unsigned> out;
    for (int i = hwloc_bitmap_first(bitmap_); i >= 0; i = hwloc_bitmap_next(bitmap_, i))
        out.push_back(static_cast<unsigned>(i));
    return out;
}

Bitmap Bitmap::operator&(const Bitmap& other) const {
    Bitmap out;
    hwloc_bitmap_and(out.bitmap_, bitmap_, other.bitmap_);
    return out;
}

Bitmap& Bitmap::operator|=(const Bitmap& other) {
    hwloc_bitmap_or(bitmap_, bitmap_, other.bitmap_);
    return *this;
}

}  // namespace clprobe

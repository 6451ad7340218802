#pragma once
// An owned hwloc bitmap (CPU set or NUMA node set), with the few operations the topology layer
// needs; lists use the Linux form ("0-3,8").
#include <hwloc.h>

#include <string>
#include <vector>

namespace clprobe {

class Bitmap {
  public:
    Bitmap();
    explicit Bitmap(hwloc_const_bitmap_t copy_of);
    // Parses "0-3,8"; throws std::invalid_argument for anything else.
    static Bitmap from_list(const std::string& list);

    Bitmap(const Bitmap& other);
    Bitmap& operator=(const Bitmap& other);
    Bitmap(Bitmap&& other) noexcept;
    Bitmap& operator=(Bitmap&& other) noexcept;
    ~Bitmap();

    hwloc_bitmap_t get() const { return bitmap_; }

    std::string list() const;  // "" when empty
    std::vector<unsigned> indexes() const;
    bool empty() const { return hwloc_bitmap_iszero(bitmap_) != 0; }
    int weight() const { return hwloc_bitmap_weight(bitmap_); }
    bool includes(const Bitmap& sub) const { return hwloc_bitmap_isincluded(sub.bitmap_, bitmap_) != 0; }
    bool intersects(const Bitmap& other) const { return hwloc_bitmap_intersects(bitmap_, other.bitmap_) != 0; }
    bool operator==(const Bitmap& other) const { return hwloc_bitmap_isequal(bitmap_, other.bitmap_) != 0; }

    Bitmap operator&(const Bitmap& other) const;
    Bitmap& operator|=(const Bitmap& other);

  private:
    hwloc_bitmap_t bitmap_ = nullptr;
};

}  // namespace clprobe

// RevList: a key's writes, ascending. Most keys have exactly one write, so
// the first lives inline and only a key with history allocates: 24 bytes
// either way (as a std::vector's header), but no heap block (16 bytes of
// record and 16 of malloc overhead) for the common key.
#pragma once

#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace natcd {

// One write of a key. (main, sub) locates its row in SQLite.
struct RevRecord {
  int64_t main = 0;
  int32_t sub = 0;
  bool tombstone = false;
};
static_assert(std::is_trivially_copyable_v<RevRecord>);

class RevList {
 public:
  RevList() : inline_() {}
  ~RevList() {
    if (capacity_ > 1) free(heap_);
  }
  RevList(RevList&& other) noexcept : inline_() { MoveFrom(other); }
  RevList& operator=(RevList&& other) noexcept {
    if (this != &other) {
      if (capacity_ > 1) free(heap_);
      MoveFrom(other);
    }
    return *this;
  }
  RevList(const RevList&) = delete;
  RevList& operator=(const RevList&) = delete;

  RevRecord* begin() { return data(); }
  RevRecord* end() { return data() + size_; }
  const RevRecord* begin() const { return data(); }
  const RevRecord* end() const { return data() + size_; }
  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }
  const RevRecord& back() const {
    assert(size_ > 0);
    return data()[size_ - 1];
  }

  void push_back(const RevRecord& record) {
    if (size_ == capacity_) Grow();
    data()[size_++] = record;
  }
  // Removes [begin(), until).
  void erase_front(const RevRecord* until) {
    uint32_t n = static_cast<uint32_t>(until - begin());
    assert(n <= size_);
    RevRecord* d = data();
    memmove(d, d + n, (size_ - n) * sizeof(RevRecord));
    size_ -= n;
  }

 private:
  RevRecord* data() { return capacity_ > 1 ? heap_ : &inline_; }
  const RevRecord* data() const { return capacity_ > 1 ? heap_ : &inline_; }
  void Grow() {
    uint32_t capacity = capacity_ * 2;
    auto* heap = static_cast<RevRecord*>(malloc(capacity * sizeof(RevRecord)));
    if (heap == nullptr) throw std::bad_alloc();
    memcpy(heap, data(), size_ * sizeof(RevRecord));
    if (capacity_ > 1) free(heap_);
    heap_ = heap;
    capacity_ = capacity;
  }
  void MoveFrom(RevList& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (capacity_ > 1) {
      heap_ = other.heap_;
    } else {
      inline_ = other.inline_;
    }
    other.size_ = 0;
    other.capacity_ = 1;
  }

  union {
    RevRecord inline_;  // capacity_ == 1
    RevRecord* heap_;   // capacity_ > 1
  };
  uint32_t size_ = 0;
  uint32_t capacity_ = 1;
};

}  // namespace natcd

// SortByKey: puts KeyEntry pointers in key order (bytewise, as std::string
// compares) for the KeyIndex's bulk build after a load.
//
// A comparison sort of a million pointers compares about 20 million pairs
// of keys, and each comparison reads two entries scattered over the heap:
// that cache-miss-bound sort took about a third of a random-order reopen.
// This sort reads each entry once per 8 key bytes it needs instead:
// it skips the bytes every key shares (a common "/registry/" prefix), then
// sorts compact items holding the next 8 key bytes as a number, and sorts
// again, 8 bytes further on, only the runs of items those bytes left tied
// (most significant digit first, as a radix sort). Input already in order
// (keys created in ascending order) costs one pass.
#pragma once

#include <span>

#include "mvcc/key_entry.h"

namespace natcd {

// Sorts entries by key. Equal keys end up in no particular order (the
// index never holds two).
void SortByKey(std::span<KeyEntry*> entries);

}  // namespace natcd

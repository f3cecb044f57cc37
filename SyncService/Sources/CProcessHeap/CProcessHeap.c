#include "CProcessHeap.h"

// <stdlib.h> first: it defines __GLIBC__ where the C library is glibc.
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

CProcessHeapTotals c_process_heap_totals(void) {
    CProcessHeapTotals totals = {0, 0};
#if defined(__GLIBC__)
    struct mallinfo2 info = mallinfo2();
    // hblkhd: blocks large enough to be mapped on their own, outside the arenas.
    totals.inUse = info.uordblks + info.hblkhd;
    totals.held = info.arena + info.hblkhd;
#endif
    return totals;
}

#include "CProcessHeap.h"

// <stdlib.h> first: it defines __GLIBC__ where the C library is glibc. mallinfo2 came with 2.33.
#include <stdlib.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define C_PROCESS_HEAP_MALLINFO2 1
#include <malloc.h>
#endif

CProcessHeapTotals c_process_heap_totals(void) {
    CProcessHeapTotals totals = {0, 0};
#if defined(C_PROCESS_HEAP_MALLINFO2)
    struct mallinfo2 info = mallinfo2();
    // hblkhd: blocks large enough to be mapped on their own, outside the arenas.
    totals.inUse = info.uordblks + info.hblkhd;
    totals.held = info.arena + info.hblkhd;
#endif
    return totals;
}

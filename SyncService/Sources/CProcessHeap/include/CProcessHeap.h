// The allocator's totals, for the server's heap metrics: glibc's mallinfo2, which Swift's Glibc
// module does not bring (it is in <malloc.h>). Zero where the C library is not glibc 2.33 or later.
#ifndef C_PROCESS_HEAP_H
#define C_PROCESS_HEAP_H

#include <stddef.h>

typedef struct {
    /// Bytes handed out by malloc and not yet freed.
    size_t inUse;
    /// Bytes the allocator holds from the system, in use or free for reuse.
    size_t held;
} CProcessHeapTotals;

CProcessHeapTotals c_process_heap_totals(void);

#endif

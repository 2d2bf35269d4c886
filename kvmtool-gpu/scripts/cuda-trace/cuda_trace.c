// A tracing libcuda.so.1: logs what a program (NVIDIA's cudart, its
// libraries, PyTorch) asks of the CUDA driver, so the guest's libcuda can
// answer the same. Loaded ahead of the driver (LD_PRELOAD; its SONAME is
// libcuda.so.1, so the program's own dlopen("libcuda.so.1") finds it), it
// opens the real driver by path and
//   * answers cuGetProcAddress / cuGetProcAddress_v2 from the driver, logging
//     each name, CUDA version, flags and outcome (and hands out itself for
//     cuGetProcAddress* and cuGetExportTable, so later look-ups are seen);
//   * answers cuGetExportTable from the driver, logging each table's UUID,
//     its first qword (the table's size in bytes, where it has one), and
//     every entry with the driver offset it points at;
//   * with CUDA_TRACE_CALLS=1, patches each sized table's entries in place
//     with thunks (thunks.S) that log every call: index, argument registers
//     as raw qwords, return value. The table keeps its address (the
//     integrity check hashes table addresses); the integrity-check table
//     itself is left alone, as its function's address is hashed too.
// Every other exported name is a jump to the driver's (forwarders.S, made by
// cuda-trace.sh from the stub's export list).
//
// Environment: CUDA_TRACE_REAL (the driver's path; default: the usual
// places), CUDA_TRACE_LOG (a file to append to; default stderr),
// CUDA_TRACE_CALLS=1 (log table calls), CUDA_TRACE_MAX_CALLS (calls logged
// per entry, default 50), CUDA_TRACE_ENTRIES=1 (cuGetProcAddress hands out
// a logging thunk for every entry point, so every Driver API call through
// it is logged as "call NAME[0]", its return value the CUresult),
// CUDA_TRACE_EXPORTS=1 (the same for every call to an exported name, which
// is how a library that dlsym()s the driver's functions calls them),
// CUDA_TRACE_DUMP=PREFIX[,PREFIX...] (for calls into
// tables whose UUID starts with a PREFIX: 64 bytes at each argument that
// points at readable memory, before and after the call, and at a returned
// pointer; how an unknown entry's in and out parameters are told apart).
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

// cuda.h maps the name to its _v2; both are defined here.
#undef cuGetProcAddress

#define kThunks 2048  // thunks.S's TRACE_THUNKS
#define kThunkBytes 16
#define kMaxEntries 256 // entries of one table shown or wrapped

typedef CUresult (*GetProcAddressFn)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*GetExportTableFn)(const void**, const CUuuid*);

extern char trace_thunk_base[];

// Filled by the constructor; forwarders.S jumps through cuda_trace_real_<name>.
static void* g_driver;
static FILE* g_log;
static GetProcAddressFn g_real_gpa, g_real_gpa_v2;
static GetExportTableFn g_real_get_export_table;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_wrap_calls;
static unsigned g_max_calls = 50;
static int g_wrap_entries; // CUDA_TRACE_ENTRIES
static char g_dump_prefixes[256]; // CUDA_TRACE_DUMP, commas kept

// Argument registers of the calls in flight on this thread, for the dumps
// after them (entries may nest: a table call that calls another).
enum { kDumpDepth = 16 };
static __thread uint64_t t_args[kDumpDepth][6];
static __thread unsigned t_depth;

struct Slot {
    char table[40]; // UUID text
    unsigned index;
    void* original;
    unsigned calls;
};
static struct Slot g_slots[kThunks];
static unsigned g_slot_count;

// Tables already shown (and wrapped): a table is asked for many times.
static const void* g_seen_tables[64];
static unsigned g_seen_count;

static void trace_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace_log(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    flockfile(g_log);
    fprintf(g_log, "[cuda-trace %d] ", (int)getpid());
    vfprintf(g_log, fmt, ap);
    fputc('\n', g_log);
    funlockfile(g_log);
    fflush(g_log);
    va_end(ap);
}

static void uuid_text(const CUuuid* id, char out[40])
{
    const unsigned char* b = (const unsigned char*)id->bytes;
    snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

// "libcuda.so.1+0x1234" for a pointer into a loaded object, else "?".
static void where(const void* p, char* out, size_t n)
{
    Dl_info info;
    if (p != NULL && dladdr(p, &info) != 0 && info.dli_fname != NULL) {
        const char* base = strrchr(info.dli_fname, '/');
        snprintf(out, n, "%s+0x%" PRIxPTR, base ? base + 1 : info.dli_fname,
                 (uintptr_t)p - (uintptr_t)info.dli_fbase);
    } else {
        snprintf(out, n, "?");
    }
}

// True for a pointer into the driver's own image (its code, for a table entry).
static int points_into_driver(const void* p)
{
    Dl_info info, driver;
    return p != NULL && dladdr(p, &info) != 0 && dladdr((void*)g_real_get_export_table, &driver) != 0 &&
           info.dli_fbase == driver.dli_fbase;
}

static const char* default_paths[] = {
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/lib/libcuda.so.1",
    "/usr/local/nvidia/lib64/libcuda.so.1",   "/usr/lib/wsl/lib/libcuda.so.1",
};

#define FORWARD(name) extern void* cuda_trace_real_##name __attribute__((visibility("hidden")));
#include "forwarders.h"
#undef FORWARD

static void* entry_thunk(const char* symbol, void* fn);

__attribute__((constructor)) static void cuda_trace_init(void)
{
    const char* log_path = getenv("CUDA_TRACE_LOG");
    const char* real = getenv("CUDA_TRACE_REAL");
    const char* calls = getenv("CUDA_TRACE_CALLS");
    const char* max_calls = getenv("CUDA_TRACE_MAX_CALLS");
    const char* dump = getenv("CUDA_TRACE_DUMP");
    if (dump)
        snprintf(g_dump_prefixes, sizeof g_dump_prefixes, "%s", dump);
    g_log = stderr;
    if (log_path != NULL && *log_path != '\0') {
        FILE* f = fopen(log_path, "a");
        if (f != NULL)
            g_log = f;
    }
    g_wrap_calls = calls != NULL && strcmp(calls, "1") == 0;
    const char* entries = getenv("CUDA_TRACE_ENTRIES");
    g_wrap_entries = entries != NULL && strcmp(entries, "1") == 0;
    const char* exports = getenv("CUDA_TRACE_EXPORTS");
    const int wrap_exports = exports != NULL && strcmp(exports, "1") == 0;
    if (max_calls != NULL)
        g_max_calls = (unsigned)strtoul(max_calls, NULL, 10);
    if (real != NULL) {
        g_driver = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    } else {
        for (size_t i = 0; i < sizeof default_paths / sizeof default_paths[0] && g_driver == NULL; ++i) {
            real = default_paths[i];
            g_driver = dlopen(real, RTLD_NOW | RTLD_LOCAL);
        }
    }
    if (g_driver == NULL) {
        trace_log("cannot open the real driver (%s): set CUDA_TRACE_REAL", dlerror());
        abort();
    }
    trace_log("tracing the driver at %s; table calls %s", real, g_wrap_calls ? "logged" : "not logged");
    g_real_gpa = (GetProcAddressFn)dlsym(g_driver, "cuGetProcAddress");
    g_real_gpa_v2 = (GetProcAddressFn)dlsym(g_driver, "cuGetProcAddress_v2");
    g_real_get_export_table = (GetExportTableFn)dlsym(g_driver, "cuGetExportTable");
    unsigned lacking = 0;
    const char* first_lacking = NULL;
#define FORWARD(name)                                                                  \
    cuda_trace_real_##name = dlsym(g_driver, #name);                                   \
    if (cuda_trace_real_##name == NULL && lacking++ == 0)                              \
        first_lacking = #name;                                                         \
    else if (cuda_trace_real_##name != NULL && wrap_exports)                           \
        cuda_trace_real_##name = entry_thunk(#name, cuda_trace_real_##name);
#include "forwarders.h"
#undef FORWARD
    if (lacking != 0)
        trace_log("the driver lacks %u of the names the stub exports (the first: %s): calling one crashes", lacking,
                  first_lacking);
}

// ---- cuGetProcAddress -------------------------------------------------------

CUresult cuGetExportTable(const void** table, const CUuuid* id);
CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status);
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status);

static CUresult traced_gpa(const char* which, GetProcAddressFn real, const char* symbol, void** pfn, int version,
                           cuuint64_t flags, CUdriverProcAddressQueryResult* status)
{
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r;
    if (real == NULL)
        return CUDA_ERROR_NOT_FOUND;
    r = real(symbol, pfn, version, flags, &st);
    if (status != NULL)
        *status = st;
    if (r == CUDA_SUCCESS && pfn != NULL && symbol != NULL) {
        if (strcmp(symbol, "cuGetProcAddress") == 0)
            *pfn = version >= 12000 ? (void*)cuGetProcAddress_v2 : (void*)cuGetProcAddress;
        else if (strcmp(symbol, "cuGetExportTable") == 0)
            *pfn = (void*)cuGetExportTable;
        else if (g_wrap_entries && *pfn != NULL)
            *pfn = entry_thunk(symbol, *pfn);
    }
    trace_log("%s %s version=%d flags=0x%llx -> result=%d status=%d", which, symbol ? symbol : "(null)", version,
         (unsigned long long)flags, (int)r, (int)st);
    return r;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status)
{
    return traced_gpa("cuGetProcAddress", g_real_gpa, symbol, pfn, version, flags, status);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status)
{
    return traced_gpa("cuGetProcAddress_v2", g_real_gpa_v2, symbol, pfn, version, flags, status);
}

// ---- cuGetExportTable -------------------------------------------------------

// A table's first qword is its size in bytes where it has one (a small
// multiple of 8); 0 entries where it does not (its first entry a pointer).
static unsigned sized_entries(const uint64_t* t)
{
    return t[0] >= 16 && t[0] % 8 == 0 && t[0] / 8 <= kMaxEntries ? (unsigned)(t[0] / 8) : 0;
}

static int make_writable(void* p, size_t bytes)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t start = (uintptr_t)p & ~(page - 1);
    const uintptr_t end = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);
    return mprotect((void*)start, end - start, PROT_READ | PROT_WRITE) == 0;
}

static void wrap_entries(const char* name, uint64_t* t, unsigned entries)
{
    if (!make_writable(t, entries * sizeof(uint64_t))) {
        trace_log("  table %s: mprotect failed, its calls are not logged", name);
        return;
    }
    for (unsigned i = 1; i < entries; ++i) {
        void* fn = (void*)(uintptr_t)t[i];
        if (!points_into_driver(fn))
            continue; // null or data: left alone
        if (g_slot_count == kThunks) {
            trace_log("  out of thunks: %s[%u] and later are not logged", name, i);
            return;
        }
        struct Slot* s = &g_slots[g_slot_count];
        snprintf(s->table, sizeof s->table, "%s", name);
        s->index = i;
        s->original = fn;
        t[i] = (uint64_t)(uintptr_t)(trace_thunk_base + kThunkBytes * g_slot_count);
        ++g_slot_count;
    }
}

// A logging thunk for an entry point cuGetProcAddress hands out: one slot
// per function (asked again, the same thunk), the name as its "table".
static void* entry_thunk(const char* symbol, void* fn)
{
    void* thunk = fn;
    pthread_mutex_lock(&g_mu);
    unsigned i = 0;
    while (i < g_slot_count && g_slots[i].original != fn)
        ++i;
    if (i == g_slot_count && g_slot_count < kThunks) {
        snprintf(g_slots[i].table, sizeof g_slots[i].table, "%s", symbol);
        g_slots[i].index = 0;
        g_slots[i].original = fn;
        ++g_slot_count;
    }
    if (i < g_slot_count)
        thunk = trace_thunk_base + kThunkBytes * i;
    pthread_mutex_unlock(&g_mu);
    return thunk;
}

static void show_table(const CUuuid* id, const void* table)
{
    char name[40], at[128];
    uuid_text(id, name);
    for (unsigned i = 0; i < g_seen_count; ++i)
        if (g_seen_tables[i] == table)
            return;
    if (g_seen_count < sizeof g_seen_tables / sizeof g_seen_tables[0])
        g_seen_tables[g_seen_count++] = table;
    if ((uintptr_t)table < 4096) {
        trace_log("table %s is the value %p, not a pointer", name, table);
        return;
    }
    const uint64_t* t = (const uint64_t*)table;
    const unsigned entries = sized_entries(t);
    where(table, at, sizeof at);
    if (entries != 0)
        trace_log("table %s at %s: size word %" PRIu64 " bytes = %u entries", name, at, t[0], entries);
    else
        trace_log("table %s at %s: no size word (first qword 0x%" PRIx64 "); showing 16 qwords", name, at, t[0]);
    const unsigned shown = entries != 0 ? entries : 16;
    for (unsigned i = entries != 0 ? 1 : 0; i < shown; ++i) {
        where((const void*)(uintptr_t)t[i], at, sizeof at);
        trace_log("  %s[%u] = 0x%" PRIx64 " %s", name, i, t[i], at);
    }
    if (g_wrap_calls && entries != 0) {
        if (strcmp(name, "d4082055-bde6-704b-8d34-ba123c66e1f2") == 0)
            trace_log("  table %s: the integrity check, not wrapped (its function's address is hashed)", name);
        else
            wrap_entries(name, (uint64_t*)table, entries);
    }
}

CUresult cuGetExportTable(const void** table, const CUuuid* id)
{
    char name[40] = "(null)";
    CUresult r;
    if (g_real_get_export_table == NULL)
        return CUDA_ERROR_NOT_FOUND;
    r = g_real_get_export_table(table, id);
    if (id != NULL)
        uuid_text(id, name);
    trace_log("cuGetExportTable %s -> result=%d table=%p", name, (int)r, r == CUDA_SUCCESS && table ? *table : NULL);
    if (r == CUDA_SUCCESS && table != NULL && *table != NULL && id != NULL) {
        pthread_mutex_lock(&g_mu);
        show_table(id, *table);
        pthread_mutex_unlock(&g_mu);
    }
    return r;
}

// ---- table calls (thunks.S) -------------------------------------------------

void* cuda_trace_enter(uint64_t slot, const uint64_t* regs, uint64_t caller);
void cuda_trace_leave(uint64_t slot, uint64_t result);

// Whether calls into `table` get their memory dumped (CUDA_TRACE_DUMP).
static int dumped_table(const char* table)
{
    for (const char* p = g_dump_prefixes; *p;) {
        const char* end = strchr(p, ',');
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n && strncmp(table, p, n) == 0)
            return 1;
        p += n + (end ? 1 : 0);
    }
    return 0;
}

// 64 bytes at `addr` as qwords, when all of them are readable (read through
// process_vm_readv, so a bad address is an error, not a fault).
static void dump_at(const char* what, unsigned i, uint64_t addr)
{
    uint64_t q[8];
    struct iovec local = {q, sizeof q}, remote = {(void*)addr, sizeof q};
    if (addr < 4096 || process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof q)
        return;
    trace_log("    %s arg%u *0x%" PRIx64 ": %016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64
              " %016" PRIx64 " %016" PRIx64 " %016" PRIx64,
              what, i, addr, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
}

void* cuda_trace_enter(uint64_t slot, const uint64_t* regs, uint64_t caller)
{
    struct Slot* s = &g_slots[slot];
    const unsigned n = __atomic_add_fetch(&s->calls, 1, __ATOMIC_RELAXED);
    if (n <= g_max_calls) {
        Dl_info where;
        const int known = dladdr((void*)caller, &where) && where.dli_fname;
        const char* lib = known ? strrchr(where.dli_fname, '/') : NULL;
        trace_log("call %s[%u] #%u args 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64
                  " 0x%" PRIx64 " from %s+0x%" PRIx64,
                  s->table, s->index, n, regs[0], regs[1], regs[2], regs[3], regs[4], regs[5],
                  known ? (lib ? lib + 1 : where.dli_fname) : "?",
                  known ? caller - (uint64_t)where.dli_fbase : caller);
    }
    if (t_depth < kDumpDepth)
        memcpy(t_args[t_depth], regs, sizeof t_args[0]);
    ++t_depth;
    if (n <= g_max_calls && dumped_table(s->table))
        for (unsigned i = 0; i < 6; ++i)
            dump_at("before", i, regs[i]);
    return s->original;
}

void cuda_trace_leave(uint64_t slot, uint64_t result)
{
    struct Slot* s = &g_slots[slot];
    const int logged = __atomic_load_n(&s->calls, __ATOMIC_RELAXED) <= g_max_calls;
    if (logged)
        trace_log("  ret %s[%u] = 0x%" PRIx64, s->table, s->index, result);
    --t_depth;
    if (logged && dumped_table(s->table) && t_depth < kDumpDepth) {
        for (unsigned i = 0; i < 6; ++i)
            dump_at("after", i, t_args[t_depth][i]);
        dump_at("result", 0, result);
    }
}

__attribute__((destructor)) static void cuda_trace_summary(void)
{
    for (unsigned i = 0; i < g_slot_count; ++i)
        if (g_slots[i].calls != 0)
            trace_log("calls %s[%u]: %u", g_slots[i].table, g_slots[i].index, g_slots[i].calls);
}

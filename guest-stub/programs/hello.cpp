// hello: the smallest guest that checks itself. Prints a greeting with the
// RAM size and cmdline, then exercises memory, the pinned and pageable
// allocators and the page tables. On success it leaves
// KVMGPU_HELLO_MEMORY_MAGIC in boot_info.guest_result and
// KVMGPU_HELLO_RBX_MAGIC in rbx at the exit-port write (the host test
// asserts both) and exits 0; each failed check has its own exit code.
#include "guest-stub/runtime/runtime.h"

using namespace guest;

namespace {

enum HelloExit : uint32_t {
    kBootInfo = 1,       // boot info fields inconsistent
    kIdentityMemory = 2, // write/read-back through the identity map failed
    kPinned = 3,         // pinned_alloc not identity-mapped or not contiguous
    kPageableData = 4,   // write/read-back through the heap mapping failed
    kPageableMap = 5,    // heap page translation inconsistent
    kAlias = 6,          // heap page and its identity alias disagree
    kScatterList = 7,    // SG list does not cover the range / wrong merging
    kMarkRelease = 8,    // heap_release did not give the memory back
};

int fail(uint32_t code, const char* what)
{
    printf("hello: FAIL (%u): %s\n", code, what);
    return (int)code;
}

// Fills words with a pattern derived from seed and each word's index.
void fill(uint64_t* p, uint64_t words, uint64_t seed)
{
    for (uint64_t i = 0; i < words; ++i)
        p[i] = (seed ^ (i * 0x9E3779B97F4A7C15ull)) + i;
}

bool verify(const uint64_t* p, uint64_t words, uint64_t seed)
{
    for (uint64_t i = 0; i < words; ++i)
        if (p[i] != (seed ^ (i * 0x9E3779B97F4A7C15ull)) + i)
            return false;
    return true;
}

int check_pinned()
{
    const uint64_t bytes = 3ull << 20;
    auto* p = static_cast<uint64_t*>(pinned_alloc(bytes));
    uint64_t gpa;
    if (!virt_to_phys(p, &gpa) || gpa != reinterpret_cast<uintptr_t>(p))
        return fail(kPinned, "pinned buffer is not identity-mapped");
    if (!phys_contiguous(p, bytes, &gpa) || gpa != reinterpret_cast<uintptr_t>(p))
        return fail(kPinned, "pinned buffer is not physically contiguous");
    if ((gpa & ((2u << 20) - 1)) != 0)
        return fail(kPinned, "pinned buffer of >= 2 MiB is not 2 MiB aligned");
    if (gpa < boot_info().image_end || gpa + bytes > ram_size())
        return fail(kPinned, "pinned buffer outside [image_end, ram_size)");
    fill(p, bytes / 8, 0x1234);
    if (!verify(p, bytes / 8, 0x1234))
        return fail(kIdentityMemory, "pinned buffer read-back mismatch");
    return 0;
}

int check_pageable()
{
    const uint64_t ps = guest_page_size();
    const uint64_t bytes = ps == 4096 ? (1ull << 20) + 123 : (6ull << 20) + 123;
    const uint64_t pages = (bytes + ps - 1) / ps;
    auto* p = static_cast<uint8_t*>(pageable_alloc(bytes));
    auto* words = reinterpret_cast<uint64_t*>(p);
    const uint64_t nwords = bytes / 8;
    fill(words, nwords, 0xABCD);
    if (!verify(words, nwords, 0xABCD))
        return fail(kPageableData, "pageable buffer read-back mismatch");

    // Every page: mapped, inside the frame range, its identity alias sees
    // the same data, and no frame is used twice (frames are one block).
    HeapStats hs = heap_stats();
    uint64_t lowest = UINT64_MAX, highest = 0, in_order = 0, prev = 0;
    for (uint64_t i = 0; i < pages; ++i) {
        uint64_t gpa;
        if (!virt_to_phys(p + i * ps, &gpa))
            return fail(kPageableMap, "pageable page not mapped");
        if ((gpa & (ps - 1)) != 0 || gpa < hs.frames_base || gpa + ps > ram_size())
            return fail(kPageableMap, "pageable frame misaligned or outside RAM");
        uint64_t mid;
        if (!virt_to_phys(p + i * ps + ps / 2, &mid) || mid != gpa + ps / 2)
            return fail(kPageableMap, "translation inside a page is not linear");
        auto* alias = reinterpret_cast<const uint64_t*>(static_cast<uintptr_t>(gpa));
        if (*alias != *reinterpret_cast<const uint64_t*>(p + i * ps))
            return fail(kAlias, "identity alias of a heap page differs");
        lowest = gpa < lowest ? gpa : lowest;
        highest = gpa > highest ? gpa : highest;
        if (i > 0 && gpa == prev + ps)
            ++in_order;
        prev = gpa;
    }
    if (highest - lowest != (pages - 1) * ps)
        return fail(kPageableMap, "frames are not a permutation of one block");
    // Writing through the alias must show through the heap mapping.
    uint64_t gpa0;
    virt_to_phys(p, &gpa0);
    *reinterpret_cast<volatile uint64_t*>(static_cast<uintptr_t>(gpa0)) = 0x5A5A5A5A5A5A5A5Aull;
    if (*reinterpret_cast<volatile uint64_t*>(p) != 0x5A5A5A5A5A5A5A5Aull)
        return fail(kAlias, "write through the identity alias not seen in the heap");

    // Scatter-gather list: covers the range, entries never adjacent-mergeable.
    static vgpu_sg_entry sg[600];
    uint64_t count = 0;
    SgResult r = build_sg(p, bytes, sg, 600, &count);
    if (r != SgResult::kOk)
        return fail(kScatterList, sg_result_name(r));
    uint64_t total = 0;
    for (uint64_t i = 0; i < count; ++i) {
        total += sg[i].len;
        if (i > 0 && sg[i - 1].gpa + sg[i - 1].len == sg[i].gpa)
            return fail(kScatterList, "SG list has unmerged contiguous neighbours");
    }
    if (total != bytes || sg[0].gpa != gpa0)
        return fail(kScatterList, "SG list does not cover the buffer");
    if (hs.shuffle && pages > 8 && count < 2)
        return fail(kScatterList, "shuffled heap gave one SG entry");
    if (!hs.shuffle && count != 1)
        return fail(kScatterList, "unshuffled heap gave more than one SG entry");
    printf("hello: pageable %lu bytes in %lu pages of %lu KiB: %lu SG entries, %lu pages in order\n",
           bytes, pages, ps >> 10, count, in_order);
    return 0;
}

int check_mark_release()
{
    HeapMark m = heap_mark();
    uint64_t before = heap_stats().frames_free;
    void* a = pageable_alloc(64 * 1024);
    void* b = pinned_alloc(64 * 1024);
    if (a == nullptr || b == nullptr || heap_stats().frames_free >= before)
        return fail(kMarkRelease, "allocation did not take frames");
    heap_release(m);
    if (heap_stats().frames_free != before)
        return fail(kMarkRelease, "heap_release did not return the frames");
    uint64_t gpa;
    if (virt_to_phys(a, &gpa))
        return fail(kMarkRelease, "released heap page is still mapped");
    return 0;
}

} // namespace

int guest_main(const kvmgpu_boot_info* info)
{
    printf("Hello from the kvmtool-gpu guest: %lu MiB RAM, image ends at 0x%lx, cmdline \"%.*s\"\n",
           info->ram_size >> 20, info->image_end, (int)cmdline().length(), cmdline().text());
    printf("hello: tsc %lu kHz (%s), host pages %lu KiB, guest pages %lu KiB, nested=%u\n", tsc_khz(),
           tsc_source(), info->host_page_size >> 10, guest_page_size() >> 10,
           info->flags & KVMGPU_BOOT_FLAG_NESTED);
    if (info != &boot_info() || info->ram_size < (16ull << 20) || info->image_end >= info->ram_size)
        return fail(kBootInfo, "boot info inconsistent (need >= 16 MiB RAM)");

    if (int rc = check_pinned())
        return rc;
    if (int rc = check_pageable())
        return rc;
    if (int rc = check_mark_release())
        return rc;

    uint64_t t0 = tsc_begin();
    uint64_t t1 = tsc_end();
    printf("hello: all checks passed (tsc delta %lu ticks, %lu console writes so far)\n", t1 - t0,
           console_mmio_writes() + 1);
    set_guest_result(KVMGPU_HELLO_MEMORY_MAGIC);
    exit_with_rbx(KVMGPU_EXIT_PASS, KVMGPU_HELLO_RBX_MAGIC);
}

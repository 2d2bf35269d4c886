// The guest libcuda.so.1 (guest-stub/libcuda.cmake) loaded with dlopen in a
// host process, as NVIDIA's cudart loads it in a guest: what it exports, what
// cuGetProcAddress and cuGetExportTable answer, and that without kvmtool-gpu
// (no boot info in the auxiliary vector) cuInit fails cleanly.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdint.h>
#include <string.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace {

using GetProcAddress = int (*)(const char*, void**, int, uint64_t, int*);
using GetExportTable = int (*)(const void**, const unsigned char*);
constexpr int kSuccess = 0, kInvalidValue = 1, kNoDevice = 100, kInvalidImage = 200, kNotFound = 500,
              kNotSupported = 801;
constexpr int kSymbolNotFound = 1;

std::vector<std::string> read_names(const char* file)
{
    std::ifstream in(std::string(KVMGPU_TEST_DATA_DIR) + "/" + file);
    EXPECT_TRUE(in.good()) << file;
    std::vector<std::string> names;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#')
            names.push_back(line);
    return names;
}

class Libcuda : public ::testing::Test {
protected:
    void SetUp() override
    {
        lib_ = dlopen(KVMGPU_LIBCUDA_PATH, RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(lib_, nullptr) << dlerror();
        gpa_ = reinterpret_cast<GetProcAddress>(dlsym(lib_, "cuGetProcAddress_v2"));
        get_table_ = reinterpret_cast<GetExportTable>(dlsym(lib_, "cuGetExportTable"));
        ASSERT_NE(gpa_, nullptr);
        ASSERT_NE(get_table_, nullptr);
    }
    // No dlclose: the library stays loaded, as libcuda does in a process.
    // Unloading it would orphan the exception-handling pool of the
    // libstdc++ linked into it, which LeakSanitizer then reports.
    void* proc(const char* name, int version = 13000)
    {
        void* fn = nullptr;
        int status = -1;
        return gpa_(name, &fn, version, 0, &status) == kSuccess && status == 0 ? fn : nullptr;
    }
    const void* const* table(const unsigned char (&uuid)[16])
    {
        const void* t = nullptr;
        EXPECT_EQ(get_table_(&t, uuid), kSuccess);
        return static_cast<const void* const*>(t);
    }

    void* lib_ = nullptr;
    GetProcAddress gpa_ = nullptr;
    GetExportTable get_table_ = nullptr;
};

constexpr unsigned char kCudart[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                       0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
constexpr unsigned char kIntegrity[16] = {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                                          0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2};
constexpr unsigned char kLocalStorage[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                             0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};

TEST_F(Libcuda, ExportsOnlyNamesTheDriverExports)
{
    const std::vector<std::string> driver = read_names("libcuda_driver_exports.txt");
    const std::set<std::string> known(driver.begin(), driver.end());
    // Every driver name we define is exported (dlsym finds it) ...
    int exported = 0;
    for (const std::string& name : driver)
        exported += dlsym(lib_, name.c_str()) != nullptr;
    EXPECT_GT(exported, 150);
    // ... and nothing else is: the guest's own helpers stay inside.
    for (const char* hidden : {"vgpuFlush", "vgpuGetInfo", "vgpuSetDeferredSubmission", "_ZN5guest8platform6printfEPKcz"})
        EXPECT_EQ(dlsym(lib_, hidden), nullptr) << hidden;
}

TEST_F(Libcuda, EveryNameCudartMayAskForIsProvidedOrListedAsNot)
{
    const std::vector<std::string> missing = read_names("libcuda_not_provided.txt");
    const std::set<std::string> not_provided(missing.begin(), missing.end());
    for (const std::string& name : read_names("libcuda_cudart13_names.txt")) {
        const bool found = proc(name.c_str()) != nullptr;
        if (not_provided.count(name) != 0)
            EXPECT_FALSE(found) << name << " is provided now: take it off libcuda_not_provided.txt";
        else
            EXPECT_TRUE(found) << name << ": not in cuGetProcAddress's table nor in libcuda_not_provided.txt";
    }
}

TEST_F(Libcuda, GetProcAddressAnswersItselfTheTablesAndRefusesLaterVersions)
{
    EXPECT_EQ(proc("cuGetProcAddress"), dlsym(lib_, "cuGetProcAddress_v2")) << "the _v2 signature at 12.0 and later";
    EXPECT_EQ(proc("cuGetProcAddress", 11030), dlsym(lib_, "cuGetProcAddress")) << "11.3's form, without a status";
    EXPECT_EQ(proc("cuGetExportTable"), reinterpret_cast<void*>(get_table_));
    EXPECT_NE(proc("cuMemAlloc", 12080), nullptr) << "a cu12 runtime";
    EXPECT_EQ(proc("cuMemAlloc", 13010), nullptr) << "a version past the driver's, refused as the driver refuses it";
    void* fn = reinterpret_cast<void*>(1);
    int status = -1;
    EXPECT_EQ(gpa_("cuNoSuchFunction", &fn, 13000, 0, &status), kNotFound);
    EXPECT_EQ(status, kSymbolNotFound);
    EXPECT_EQ(fn, nullptr);
    EXPECT_EQ(gpa_(nullptr, &fn, 13000, 0, &status), kInvalidValue);
}

// Where cuda.h renames a call to a versioned symbol, the plain symbol is the
// call's first form (as the driver exports it, for dlsym) and is what
// cuGetProcAddress gives at that form's version; the versioned symbol is
// what it gives at 13.0.
TEST_F(Libcuda, PlainNamesAreTheFirstFormsAndVersionedNamesTheNewest)
{
    struct Renamed {
        const char* name;
        int first_version;
        const char* newest;
    };
    for (const Renamed& r : {Renamed{"cuCtxCreate", 3020, "cuCtxCreate_v4"},
                             Renamed{"cuGetProcAddress", 11030, "cuGetProcAddress_v2"},
                             Renamed{"cuStreamBeginCapture", 10000, "cuStreamBeginCapture_v2"},
                             Renamed{"cuStreamGetCaptureInfo", 10010, "cuStreamGetCaptureInfo_v3"},
                             Renamed{"cuGraphExecUpdate", 10020, "cuGraphExecUpdate_v2"},
                             Renamed{"cuGraphAddKernelNode", 10000, "cuGraphAddKernelNode_v2"},
                             Renamed{"cuGraphKernelNodeGetParams", 10000, "cuGraphKernelNodeGetParams_v2"},
                             Renamed{"cuGraphKernelNodeSetParams", 10000, "cuGraphKernelNodeSetParams_v2"},
                             Renamed{"cuGraphExecKernelNodeSetParams", 10010, "cuGraphExecKernelNodeSetParams_v2"},
                             Renamed{"cuGraphAddDependencies", 10000, "cuGraphAddDependencies_v2"},
                             Renamed{"cuGraphRemoveDependencies", 10000, "cuGraphRemoveDependencies_v2"},
                             Renamed{"cuGraphGetEdges", 10000, "cuGraphGetEdges_v2"},
                             Renamed{"cuGraphNodeGetDependencies", 10000, "cuGraphNodeGetDependencies_v2"},
                             Renamed{"cuGraphNodeGetDependentNodes", 10000, "cuGraphNodeGetDependentNodes_v2"},
                             Renamed{"cuGraphAddNode", 12020, "cuGraphAddNode_v2"}}) {
        void* plain = dlsym(lib_, r.name);
        void* newest = dlsym(lib_, r.newest);
        ASSERT_NE(plain, nullptr) << r.name;
        ASSERT_NE(newest, nullptr) << r.newest;
        EXPECT_NE(plain, newest) << r.name << ": the plain symbol must keep its first signature";
        if (r.first_version >= 3020) // cuCtxCreate's first form is cuCtxCreate_v2 in the table
            EXPECT_TRUE(proc(r.name, r.first_version) == plain ||
                        proc(r.name, r.first_version) == dlsym(lib_, (std::string(r.name) + "_v2").c_str()))
                << r.name << " at " << r.first_version;
        EXPECT_EQ(proc(r.name), newest) << r.name << " at 13.0";
    }
    EXPECT_NE(proc("cuMemAdvise", 8000), proc("cuMemAdvise")) << "CUDA 8.0's form takes a device, 12.2's a location";
}

TEST_F(Libcuda, DriverVersionIs13000)
{
    auto get = reinterpret_cast<int (*)(int*)>(proc("cuDriverGetVersion"));
    ASSERT_NE(get, nullptr);
    int version = 0;
    EXPECT_EQ(get(&version), kSuccess);
    EXPECT_EQ(version, 13000);
}

TEST_F(Libcuda, OutsideKvmtoolGpuCuInitFindsNoDevice)
{
    auto init = reinterpret_cast<int (*)(unsigned)>(proc("cuInit"));
    ASSERT_NE(init, nullptr);
    EXPECT_EQ(init(0), kNoDevice);
    EXPECT_EQ(init(0), kNoDevice) << "a failed probe is not retried";
    auto count = reinterpret_cast<int (*)(int*)>(proc("cuDeviceGetCount"));
    int n = -1;
    EXPECT_NE(count(&n), kSuccess);
}

TEST_F(Libcuda, ExportTablesHaveTheirSizeWords)
{
    const struct {
        unsigned char uuid[16];
        uintptr_t entries;
    } sized[] = {
        {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9}, 13},
        {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc}, 4},
        {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66}, 7},
        {{0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a, 0x89, 0xa7, 0xd0, 0xdf, 0x10, 0xe7, 0x72, 0x86}, 2},
        {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2}, 3},
        {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e}, 4},
        {{0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9}, 3},
        {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2}, 93},
        {{0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e}, 99},
        {{0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca}, 17},
    };
    for (const auto& t : sized) {
        const void* p = nullptr;
        ASSERT_EQ(get_table_(&p, t.uuid), kSuccess);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(static_cast<const void* const*>(p)[0]), t.entries * 8);
        for (uintptr_t i = 1; i < t.entries; ++i)
            EXPECT_NE(static_cast<const void* const*>(p)[i], nullptr) << "entry " << i;
    }
    const void* const* cls = table(kLocalStorage); // no size word: three functions first
    for (int i = 0; i < 3; ++i)
        EXPECT_NE(cls[i], nullptr);
}

TEST_F(Libcuda, UnknownTablesAndArgumentsAreRefused)
{
    const unsigned char unknown[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                       0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10};
    const void* t = reinterpret_cast<const void*>(1);
    EXPECT_EQ(get_table_(&t, unknown), kNotSupported);
    EXPECT_EQ(t, nullptr);
    EXPECT_EQ(get_table_(nullptr, kCudart), kInvalidValue);
    EXPECT_EQ(get_table_(&t, nullptr), kInvalidValue);
}

// CONTEXT_IDENTITY[4] is cuCtxGetId: with no device (outside a VM) there
// is no context to name, and the id is left alone.
TEST_F(Libcuda, ContextIdentityNeedsAContext)
{
    const unsigned char identity[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
                                        0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
    auto context_id = reinterpret_cast<int (*)(void*, unsigned long long*)>(const_cast<void*>(table(identity)[4]));
    unsigned long long id = 77;
    EXPECT_NE(context_id(nullptr, &id), kSuccess);
    EXPECT_EQ(id, 77u);
}

// CONTEXT_IDENTITY[51] names a stream for [39] (cuStreamGetId): a default
// stream by its special handle (per-thread when the fourth argument says
// so), any other as itself; [39] needs a device.
TEST_F(Libcuda, ContextIdentityNamesStreamsForTheirIds)
{
    const unsigned char identity[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
                                        0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
    auto stream_of = reinterpret_cast<int (*)(void*, void*, void**, int)>(const_cast<void*>(table(identity)[51]));
    void* out = nullptr;
    EXPECT_EQ(stream_of(nullptr, nullptr, &out, 0), kSuccess);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(out), 0x1u); // CU_STREAM_LEGACY
    EXPECT_EQ(stream_of(nullptr, nullptr, &out, 1), kSuccess);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(out), 0x2u); // CU_STREAM_PER_THREAD
    void* const stream = reinterpret_cast<void*>(0x5000);
    EXPECT_EQ(stream_of(nullptr, stream, &out, 0), kSuccess);
    EXPECT_EQ(out, stream);
    EXPECT_EQ(stream_of(nullptr, stream, nullptr, 0), kInvalidValue);

    auto stream_id = reinterpret_cast<int (*)(void*, void*, unsigned long long*)>(const_cast<void*>(table(identity)[39]));
    unsigned long long id = 77;
    EXPECT_NE(stream_id(nullptr, reinterpret_cast<void*>(0x1), &id), kSuccess);
    EXPECT_EQ(id, 77u);
    EXPECT_EQ(stream_id(nullptr, stream, nullptr), kInvalidValue);
}

// TOOLS_RUNTIME_CALLBACK_HOOKS[2] and [6]: 32-bit flags per callback id
// and per domain, all clear (no tool listens); cuBLASLt wants more than
// 0x20a ids and reads id 0x111's flag before each call it would report.
TEST_F(Libcuda, CallbackFlagsCoverEveryIdTheLibrariesRead)
{
    const unsigned char hooks[16] = {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
                                     0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66};
    using Flags = void (*)(void**, size_t*);
    for (int index : {2, 6}) {
        void* flags = nullptr;
        size_t entries = 0;
        reinterpret_cast<Flags>(const_cast<void*>(table(hooks)[index]))(&flags, &entries);
        ASSERT_NE(flags, nullptr);
        EXPECT_GT(entries, index == 2 ? 0x20au : 0xdu);
        for (size_t i = 0; i < entries; ++i)
            EXPECT_EQ(static_cast<const uint32_t*>(flags)[i], 0u) << "table entry " << index << ", flag " << i;
    }
}

// TOOLS_MODULE[7] visits a module's kernels and returns how many: none
// where it cannot ask (no device outside a VM) or has nothing to call.
TEST_F(Libcuda, ModuleVisitReturnsHowManyItVisited)
{
    const unsigned char visit_table[16] = {0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
                                           0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e};
    using Visit = void (*)(void*, void*);
    auto visit = reinterpret_cast<unsigned (*)(void*, void*, Visit, void*)>(const_cast<void*>(table(visit_table)[7]));
    int calls = 0;
    const Visit count = [](void* cookie, void*) { ++*static_cast<int*>(cookie); };
    EXPECT_EQ(visit(nullptr, reinterpret_cast<void*>(0x5000), count, &calls), 0u);
    EXPECT_EQ(visit(nullptr, reinterpret_cast<void*>(0x5000), nullptr, &calls), 0u);
    EXPECT_EQ(calls, 0);
}

TEST_F(Libcuda, UnknownEntriesReturnAnErrorInsteadOfCrashing)
{
    auto entry3 = reinterpret_cast<int (*)()>(const_cast<void*>(table(kCudart)[3]));
    EXPECT_EQ(entry3(), kNotSupported);
    EXPECT_EQ(entry3(), kNotSupported);
}

TEST_F(Libcuda, ModuleFromAFatbinWrapperChecksTheWrapperThenNeedsADevice)
{
    auto from_wrapper = reinterpret_cast<int (*)(void**, const void*)>(const_cast<void*>(table(kCudart)[1]));
    struct {
        uint32_t magic, version;
        const void* data;
        const void* prelinked;
    } wrapper{0x12345678u, 1, nullptr, nullptr};
    void* module = nullptr;
    EXPECT_EQ(from_wrapper(&module, &wrapper), kInvalidImage);
    static const uint64_t fatbin[4] = {}; // not a fat binary, nor does it get that far
    wrapper = {0x466243b1u, 1, fatbin, nullptr};
    EXPECT_NE(from_wrapper(&module, &wrapper), kSuccess) << "no device outside kvmtool-gpu";
}

TEST_F(Libcuda, IntegrityCheckFixedAnswersAndNoDeviceOutsideAVm)
{
    auto check = reinterpret_cast<int (*)(uint32_t, uint64_t, uint64_t*)>(const_cast<void*>(table(kIntegrity)[1]));
    uint64_t result[2] = {};
    EXPECT_EQ(check(13000, 1, result), kSuccess);
    EXPECT_EQ(result[0], 0x3341181c03cb675cull);
    EXPECT_EQ(result[1], 0x8ed383aa1f4cd1e8ull);
    EXPECT_EQ(check(13001, 1, result), kSuccess);
    EXPECT_EQ(result[0], 0x1841181c03cb675cull);
    EXPECT_NE(check(13002, 1, result), kSuccess) << "the hash covers the devices, and there are none here";
    EXPECT_EQ(check(13002, 1, nullptr), kInvalidValue);
}

TEST_F(Libcuda, ContextLocalStorageWithoutAContextIsRefused)
{
    auto get = reinterpret_cast<int (*)(void**, void*, void*)>(const_cast<void*>(table(kLocalStorage)[2]));
    void* state = reinterpret_cast<void*>(1);
    int key = 0;
    EXPECT_EQ(get(&state, nullptr, &key), kInvalidValue);
    EXPECT_EQ(state, nullptr);
}

} // namespace

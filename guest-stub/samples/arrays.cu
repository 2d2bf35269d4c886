// arrays: CUDA arrays, 2-D/3-D and linear copies to and from them, texture
// and surface objects, driver entry points (cudaGetDriverEntryPointByVersion)
// and cuModuleLoad of a PTX file the program writes in its working
// directory (the guest: its --share). On a GPU it also samples the array
// through a texture object, writes one through a surface object and
// launches with cudaLaunchKernelEx; the host backend (compute capability
// 0.0) runs no GPU kernels, so those parts are skipped there.
// Run: `kvmtool-gpu run --share DIR --guest arrays.elf` (run-cuda-samples.sh).
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "check_cuda.h"

static const int kW = 64, kH = 32;
static int failures = 0;

static void check(bool ok, const char* what)
{
    if (!ok) {
        printf("arrays: FAILED: %s\n", what);
        ++failures;
    }
}

__global__ void fetch(cudaTextureObject_t tex, float* out)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < kW)
        out[y * kW + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

__global__ void write_surface(cudaSurfaceObject_t surf)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < kW)
        surf2Dwrite(2.0f * (y * 1000 + x), surf, x * (int)sizeof(float), y);
}

static float value(int x, int y) { return (float)(y * 1000 + x); }

static void copies(const float* host, float* back, cudaArray_t a)
{
    CHECK(cudaMemcpy2DToArray(a, 0, 0, host, kW * sizeof(float), kW * sizeof(float), kH, cudaMemcpyHostToDevice));
    memset(back, 0, kW * kH * sizeof(float));
    CHECK(cudaMemcpy2DFromArray(back, kW * sizeof(float), a, 0, 0, kW * sizeof(float), kH, cudaMemcpyDeviceToHost));
    check(memcmp(host, back, kW * kH * sizeof(float)) == 0, "host -> array -> host (2-D)");
    // Linear copies run on through the rows: 300 bytes from row 1, byte 8.
    memset(back, 0, kW * kH * sizeof(float));
    CHECK(cudaMemcpyFromArray(back, a, 8, 1, 300, cudaMemcpyDeviceToHost));
    check(memcmp(back, (const char*)host + kW * sizeof(float) + 8, 300) == 0, "cudaMemcpyFromArray across rows");
    // Through pitched device memory and back (device <-> array).
    float* dev = nullptr;
    size_t pitch = 0;
    CHECK(cudaMallocPitch((void**)&dev, &pitch, kW * sizeof(float), kH));
    CHECK(cudaMemcpy2DFromArray(dev, pitch, a, 0, 0, kW * sizeof(float), kH, cudaMemcpyDeviceToDevice));
    cudaArray_t b = nullptr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    CHECK(cudaMallocArray(&b, &desc, kW, kH));
    CHECK(cudaMemcpy2DToArray(b, 0, 0, dev, pitch, kW * sizeof(float), kH, cudaMemcpyDeviceToDevice));
    memset(back, 0, kW * kH * sizeof(float));
    CHECK(cudaMemcpyFromArray(back, b, 0, 0, kW * kH * sizeof(float), cudaMemcpyDeviceToHost));
    check(memcmp(host, back, kW * kH * sizeof(float)) == 0, "array -> pitched device -> array -> host");
    // Past the array: refused.
    check(cudaMemcpy2DToArray(b, 4, kH - 1, host, kW * sizeof(float), kW * sizeof(float), 1,
                              cudaMemcpyHostToDevice) != cudaSuccess,
          "a copy past the array's end is refused");
    cudaGetLastError();
    CHECK(cudaFreeArray(b));
    CHECK(cudaFree(dev));
}

static void layered(const float* host, float* back)
{
    cudaArray_t l = nullptr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    CHECK(cudaMalloc3DArray(&l, &desc, make_cudaExtent(8, 8, 3), cudaArrayLayered));
    cudaMemcpy3DParms in = {};
    in.srcPtr = make_cudaPitchedPtr((void*)host, 8 * sizeof(float), 8, 8);
    in.dstArray = l;
    in.extent = make_cudaExtent(8, 8, 3);
    in.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&in));
    cudaMemcpy3DParms out = {};
    out.srcArray = l;
    out.srcPos = make_cudaPos(0, 0, 1);
    out.dstPtr = make_cudaPitchedPtr(back, 8 * sizeof(float), 8, 8);
    out.extent = make_cudaExtent(8, 8, 2);
    out.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&out));
    check(memcmp(back, host + 64, 2 * 64 * sizeof(float)) == 0, "layers 1 and 2 back through cudaMemcpy3D");
    cudaExtent e;
    unsigned flags = 0;
    CHECK(cudaArrayGetInfo(&desc, &e, &flags, l));
    check(e.width == 8 && e.height == 8 && e.depth == 3 && (flags & cudaArrayLayered) && desc.x == 32 &&
              desc.f == cudaChannelFormatKindFloat,
          "cudaArrayGetInfo");
    CHECK(cudaFreeArray(l));
}

typedef int (*MemAlloc)(unsigned long long*, size_t);
typedef int (*MemFree)(unsigned long long);
typedef int (*ModuleLoad)(void**, const char*);
typedef int (*ModuleGetFunction)(void**, void*, const char*);
typedef int (*ModuleUnload)(void*);

static void* entry(const char* name)
{
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSymbolNotFound;
    CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &st));
    check(st == cudaDriverEntryPointSuccess && fn != nullptr, name);
    return fn;
}

static void entry_points_and_files()
{
    unsigned long long d = 0;
    check(((MemAlloc)entry("cuMemAlloc"))(&d, 256) == 0 && ((MemFree)entry("cuMemFree"))(d) == 0,
          "cuMemAlloc and cuMemFree through entry points");
    void* fn = &fn;
    cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSuccess;
    cudaGetDriverEntryPointByVersion("cuNoSuchCall", &fn, 12000, cudaEnableDefault, &st);
    check(st == cudaDriverEntryPointSymbolNotFound && fn == nullptr, "an unknown entry point");
    cudaGetLastError();
    // A PTX module in a file, loaded by name.
    static const char kPtx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry empty_kernel()\n{\n\tret;\n}\n";
    FILE* f = fopen("arrays_module.ptx", "w");
    check(f != nullptr && fwrite(kPtx, 1, sizeof kPtx - 1, f) == sizeof kPtx - 1 && fclose(f) == 0,
          "writing arrays_module.ptx");
    void* module = nullptr;
    void* function = nullptr;
    check(((ModuleLoad)entry("cuModuleLoad"))(&module, "arrays_module.ptx") == 0, "cuModuleLoad of a PTX file");
    check(((ModuleGetFunction)entry("cuModuleGetFunction"))(&function, module, "empty_kernel") == 0,
          "cuModuleGetFunction in the loaded file");
    check(((ModuleUnload)entry("cuModuleUnload"))(module) == 0, "cuModuleUnload");
    check(((ModuleLoad)entry("cuModuleLoad"))(&module, "no_such_module.fatbin") == 301,
          "cuModuleLoad of a missing file: CUDA_ERROR_FILE_NOT_FOUND");
    remove("arrays_module.ptx");
}

static void objects_and_kernels(const float* host, float* back, cudaArray_t a, bool gpu)
{
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc t = {};
    t.addressMode[0] = t.addressMode[1] = cudaAddressModeClamp;
    t.filterMode = cudaFilterModePoint;
    t.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &r, &t, nullptr));
    float* out = nullptr;
    CHECK(cudaMalloc((void**)&out, kW * kH * sizeof(float)));
    cudaTextureObject_t linear = 0;
    cudaResourceDesc lr = {};
    lr.resType = cudaResourceTypeLinear;
    lr.res.linear.devPtr = out;
    lr.res.linear.desc = cudaCreateChannelDesc<float>();
    lr.res.linear.sizeInBytes = kW * kH * sizeof(float);
    CHECK(cudaCreateTextureObject(&linear, &lr, &t, nullptr));
    CHECK(cudaDestroyTextureObject(linear));

    cudaArray_t s = nullptr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    CHECK(cudaMallocArray(&s, &desc, kW, kH, cudaArraySurfaceLoadStore));
    r.res.array.array = s;
    cudaSurfaceObject_t surf = 0;
    CHECK(cudaCreateSurfaceObject(&surf, &r));
    if (gpu) {
        // The texture's values through a kernel, launched with cudaLaunchKernelEx and a hint.
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(1, kH);
        config.blockDim = dim3(kW);
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        config.attrs = attr;
        config.numAttrs = 1;
        CHECK(cudaLaunchKernelEx(&config, fetch, tex, out));
        CHECK(cudaMemcpy(back, out, kW * kH * sizeof(float), cudaMemcpyDeviceToHost));
        check(memcmp(host, back, kW * kH * sizeof(float)) == 0, "tex2D through a texture object");
        write_surface<<<dim3(1, kH), kW>>>(surf);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy2DFromArray(back, kW * sizeof(float), s, 0, 0, kW * sizeof(float), kH,
                                    cudaMemcpyDeviceToHost));
        check(back[5 * kW + 7] == 2 * value(7, 5) && back[kW * kH - 1] == 2 * value(kW - 1, kH - 1),
              "surf2Dwrite through a surface object");
    } else {
        printf("arrays: texture fetches, surface writes and cudaLaunchKernelEx skipped (no GPU kernels on this "
               "backend)\n");
    }
    CHECK(cudaDestroySurfaceObject(surf));
    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(s));
    CHECK(cudaFree(out));
}

int main(void)
{
    int major = 0;
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    static float host[kW * kH], back[kW * kH];
    for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x)
            host[y * kW + x] = value(x, y);
    cudaArray_t a = nullptr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    CHECK(cudaMallocArray(&a, &desc, kW, kH));
    cudaChannelFormatDesc got;
    CHECK(cudaGetChannelDesc(&got, a));
    check(got.x == 32 && got.y == 0 && got.f == cudaChannelFormatKindFloat, "cudaGetChannelDesc");
    copies(host, back, a);
    layered(host, back);
    entry_points_and_files();
    objects_and_kernels(host, back, a, major > 0);
    CHECK(cudaFreeArray(a));
    CHECK(cudaDeviceSynchronize());
    printf("arrays: %s\n", failures == 0 ? "PASSED" : "FAILED");
    return failures == 0 ? 0 : 1;
}

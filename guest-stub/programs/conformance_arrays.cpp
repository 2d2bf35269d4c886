// conformance, continued: arrays, 2-D/3-D copies between host, device and
// array memory, texture and surface objects, with the statuses the CUDA
// driver gives (docs/driver-api.md). Host buffers are page-locked
// (cuMemAllocHost): a freestanding guest's heap is not contiguous.
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

constexpr unsigned kW = 64, kH = 32; // a 2-D float array

bool same(const float* a, const float* b, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (a[i] != b[i])
            return false;
    return true;
}

void two_dimensional_copies(float* host, float* back, CUstream stream)
{
    CUDA_ARRAY_DESCRIPTOR d{kW, kH, CU_AD_FORMAT_FLOAT, 1};
    CUarray a = nullptr;
    expect("cuArrayCreate", cuArrayCreate(&a, &d), CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR got{};
    expect("cuArray3DGetDescriptor", cuArray3DGetDescriptor(&got, a), CUDA_SUCCESS);
    expect_true("the descriptor as made",
                got.Width == kW && got.Height == kH && got.Depth == 0 && got.Format == CU_AD_FORMAT_FLOAT);
    for (unsigned i = 0; i < kW * kH; ++i)
        host[i] = static_cast<float>(i);
    // Host -> array, array -> pitched device memory (asynchronously), device -> host.
    CUDA_MEMCPY2D c{};
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = kW * 4;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = kW * 4;
    c.Height = kH;
    expect("cuMemcpy2D(host to array)", cuMemcpy2D(&c), CUDA_SUCCESS);
    CUdeviceptr dev = 0;
    CU_CHECK(cuMemAlloc(&dev, 512 * kH));
    CUDA_MEMCPY2D to_dev{};
    to_dev.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    to_dev.srcArray = a;
    to_dev.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    to_dev.dstDevice = dev;
    to_dev.dstPitch = 512;
    to_dev.WidthInBytes = kW * 4;
    to_dev.Height = kH;
    expect("cuMemcpy2DAsync(array to device)", cuMemcpy2DAsync(&to_dev, stream), CUDA_SUCCESS);
    CUDA_MEMCPY2D to_host{};
    to_host.srcMemoryType = CU_MEMORYTYPE_UNIFIED; // a device address: the guest library tells
    to_host.srcDevice = dev;
    to_host.srcPitch = 512;
    to_host.dstMemoryType = CU_MEMORYTYPE_HOST;
    to_host.dstHost = back;
    to_host.dstPitch = kW * 4;
    to_host.WidthInBytes = kW * 4;
    to_host.Height = kH;
    expect("cuMemcpy2DAsync(device to host)", cuMemcpy2DAsync(&to_host, stream), CUDA_SUCCESS);
    expect("cuStreamSynchronize", cuStreamSynchronize(stream), CUDA_SUCCESS);
    expect_true("host -> array -> device -> host", same(host, back, kW * kH));
    // A box: row 5 from column 10, 4 floats, back through cuMemcpyAtoH's 1-D form of a 1-D array.
    CUDA_ARRAY_DESCRIPTOR line{16, 0, CU_AD_FORMAT_FLOAT, 1};
    CUarray l = nullptr;
    expect("cuArrayCreate(1-D)", cuArrayCreate(&l, &line), CUDA_SUCCESS);
    CUDA_MEMCPY2D box{};
    box.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    box.srcArray = a;
    box.srcXInBytes = 10 * 4;
    box.srcY = 5;
    box.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    box.dstArray = l;
    box.WidthInBytes = 16;
    box.Height = 1;
    expect("cuMemcpy2D(array to array)", cuMemcpy2D(&box), CUDA_SUCCESS);
    float four[4] = {};
    expect("cuMemcpyAtoH", cuMemcpyAtoH(four, l, 0, sizeof four), CUDA_SUCCESS);
    expect_true("the box's values", four[0] == 5 * kW + 10 && four[3] == 5 * kW + 13);
    expect("cuMemcpyHtoA", cuMemcpyHtoA(l, 8, host, 32), CUDA_SUCCESS);
    expect("cuMemcpyHtoA(past the end)", cuMemcpyHtoA(l, 40, host, 32), CUDA_ERROR_INVALID_VALUE);
    // The other linear forms: l (host[0..7] from byte 8) to a second array, to device memory, back to the host.
    CUarray l2 = nullptr;
    CU_CHECK(cuArrayCreate(&l2, &line));
    expect("cuMemcpyAtoA", cuMemcpyAtoA(l2, 0, l, 8, 32), CUDA_SUCCESS);
    expect("cuMemcpyAtoD", cuMemcpyAtoD(dev, l2, 0, 32), CUDA_SUCCESS);
    expect("cuMemcpyDtoA", cuMemcpyDtoA(l2, 32, dev, 16), CUDA_SUCCESS);
    float eight[8] = {};
    expect("cuMemcpyAtoHAsync", cuMemcpyAtoHAsync(eight, l2, 16, 32, stream), CUDA_SUCCESS);
    CU_CHECK(cuStreamSynchronize(stream));
    expect_true("array -> array -> device -> array -> host",
                eight[0] == host[4] && eight[3] == host[7] && eight[4] == host[0] && eight[7] == host[3]);
    expect("cuMemcpyHtoAAsync", cuMemcpyHtoAAsync(l2, 0, host, 64, stream), CUDA_SUCCESS);
    CU_CHECK(cuStreamSynchronize(stream));
    expect("cuMemcpyAtoA(past the end)", cuMemcpyAtoA(l2, 40, l, 0, 32), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuArrayDestroy(l2));
    // Refused: a box past the array, a pitch narrower than the rows.
    box.srcY = kH;
    expect("cuMemcpy2D(box past the array)", cuMemcpy2D(&box), CUDA_ERROR_INVALID_VALUE);
    c.srcPitch = 8;
    expect("cuMemcpy2D(pitch < width)", cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
    expect("cuArrayDestroy", cuArrayDestroy(l), CUDA_SUCCESS);
    expect("cuArrayDestroy", cuArrayDestroy(a), CUDA_SUCCESS);
    expect("cuArrayDestroy(again)", cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
    expect("cuArrayGetDescriptor(destroyed)", cuArrayGetDescriptor(&d, a), CUDA_ERROR_INVALID_HANDLE);
    CU_CHECK(cuMemFree(dev));
}

void layered_copies(float* host, float* back)
{
    // Four layers of 8 x 8 floats; host slices of 10 rows, two of them read back packed.
    CUDA_ARRAY3D_DESCRIPTOR d{8, 8, 4, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED};
    CUarray a = nullptr;
    expect("cuArray3DCreate(layered)", cuArray3DCreate(&a, &d), CUDA_SUCCESS);
    for (unsigned i = 0; i < 8 * 10 * 4; ++i)
        host[i] = static_cast<float>(i);
    CUDA_MEMCPY3D in{};
    in.srcMemoryType = CU_MEMORYTYPE_HOST;
    in.srcHost = host;
    in.srcPitch = 32;
    in.srcHeight = 10;
    in.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    in.dstArray = a;
    in.WidthInBytes = 32;
    in.Height = 8;
    in.Depth = 4;
    expect("cuMemcpy3D(host to layered array)", cuMemcpy3D(&in), CUDA_SUCCESS);
    CUDA_MEMCPY3D out{};
    out.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    out.srcArray = a;
    out.srcZ = 1;
    out.dstMemoryType = CU_MEMORYTYPE_HOST;
    out.dstHost = back;
    out.dstPitch = 32;
    out.dstHeight = 8;
    out.WidthInBytes = 32;
    out.Height = 8;
    out.Depth = 2;
    expect("cuMemcpy3D(layers 1..2 to host)", cuMemcpy3D(&out), CUDA_SUCCESS);
    expect_true("layer 1 row 0, layer 2 row 7", back[0] == 80 && back[64 + 56 + 1] == 160 + 56 + 1);
    out.srcLOD = 1;
    expect("cuMemcpy3D(mipmap level)", cuMemcpy3D(&out), CUDA_ERROR_NOT_SUPPORTED);
    out.srcLOD = 0;
    out.Depth = 4;
    expect("cuMemcpy3D(layers past the array)", cuMemcpy3D(&out), CUDA_ERROR_INVALID_VALUE);
    expect("cuArrayDestroy(layered)", cuArrayDestroy(a), CUDA_SUCCESS);
}

void texture_and_surface_objects()
{
    CUarray plain = nullptr, surfaceable = nullptr;
    CUDA_ARRAY3D_DESCRIPTOR d{kW, kH, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CU_CHECK(cuArray3DCreate(&plain, &d));
    d.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    CU_CHECK(cuArray3DCreate(&surfaceable, &d));
    CUDA_RESOURCE_DESC r{};
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = plain;
    CUDA_TEXTURE_DESC t{};
    t.addressMode[0] = t.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    t.flags = CU_TRSF_NORMALIZED_COORDINATES;
    CUtexObject tex = 0;
    expect("cuTexObjectCreate(array)", cuTexObjectCreate(&tex, &r, &t, nullptr), CUDA_SUCCESS);
    CUDA_RESOURCE_DESC back{};
    expect("cuTexObjectGetResourceDesc", cuTexObjectGetResourceDesc(&back, tex), CUDA_SUCCESS);
    expect_true("the resource as given", back.resType == CU_RESOURCE_TYPE_ARRAY && back.res.array.hArray == plain);
    CUDA_RESOURCE_VIEW_DESC view{};
    CUtexObject other = 0;
    expect("cuTexObjectCreate(resource view)", cuTexObjectCreate(&other, &r, &t, &view), CUDA_ERROR_NOT_SUPPORTED);
    // Linear memory: inside the allocation, and past it.
    CUdeviceptr lin = 0;
    CU_CHECK(cuMemAlloc(&lin, 4096));
    CUDA_RESOURCE_DESC lr{};
    lr.resType = CU_RESOURCE_TYPE_LINEAR;
    lr.res.linear.devPtr = lin;
    lr.res.linear.format = CU_AD_FORMAT_FLOAT;
    lr.res.linear.numChannels = 1;
    lr.res.linear.sizeInBytes = 4096;
    t.flags = 0;
    t.filterMode = CU_TR_FILTER_MODE_POINT;
    expect("cuTexObjectCreate(linear)", cuTexObjectCreate(&other, &lr, &t, nullptr), CUDA_SUCCESS);
    expect("cuTexObjectDestroy(linear)", cuTexObjectDestroy(other), CUDA_SUCCESS);
    lr.res.linear.sizeInBytes = 8192;
    // Declared past the allocation: made, as the driver makes it (the vGPU cuts it at the end).
    expect("cuTexObjectCreate(linear past the allocation)", cuTexObjectCreate(&other, &lr, &t, nullptr),
           CUDA_SUCCESS);
    expect("cuTexObjectDestroy(linear past the allocation)", cuTexObjectDestroy(other), CUDA_SUCCESS);
    // Surfaces need an array made for load/store.
    CUsurfObject surf = 0;
    expect("cuSurfObjectCreate(plain array)", cuSurfObjectCreate(&surf, &r), CUDA_ERROR_INVALID_VALUE);
    r.res.array.hArray = surfaceable;
    expect("cuSurfObjectCreate", cuSurfObjectCreate(&surf, &r), CUDA_SUCCESS);
    expect("cuSurfObjectGetResourceDesc", cuSurfObjectGetResourceDesc(&back, surf), CUDA_SUCCESS);
    expect_true("the surface's array", back.res.array.hArray == surfaceable);
    expect("cuSurfObjectDestroy", cuSurfObjectDestroy(surf), CUDA_SUCCESS);
    expect("cuTexObjectDestroy", cuTexObjectDestroy(tex), CUDA_SUCCESS);
    expect("cuTexObjectDestroy(again)", cuTexObjectDestroy(tex), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuArrayDestroy(plain));
    CU_CHECK(cuArrayDestroy(surfaceable));
    CU_CHECK(cuMemFree(lin));
}

} // namespace

void array_and_texture_calls()
{
    CUstream stream = nullptr;
    CU_CHECK(cuStreamCreate(&stream, 0));
    float* host = nullptr;
    float* back = nullptr;
    CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&host), kW * kH * 4));
    CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&back), kW * kH * 4));
    two_dimensional_copies(host, back, stream);
    layered_copies(host, back);
    texture_and_surface_objects();
    // The quota: 16 GiB of float4 elements is more than the VM may hold (with a 4G quota).
    CUDA_ARRAY_DESCRIPTOR huge{32768, 32768, CU_AD_FORMAT_FLOAT, 4};
    CUarray a = nullptr;
    if (quota_below_device())
        expect("cuArrayCreate(past the quota)", cuArrayCreate(&a, &huge), CUDA_ERROR_OUT_OF_MEMORY);
    CUDA_ARRAY_DESCRIPTOR three{16, 16, CU_AD_FORMAT_FLOAT, 3};
    expect("cuArrayCreate(3 channels)", cuArrayCreate(&a, &three), CUDA_ERROR_INVALID_VALUE);
    expect("cuArrayCreate(nullptr)", cuArrayCreate(&a, nullptr), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuMemFreeHost(host));
    CU_CHECK(cuMemFreeHost(back));
    CU_CHECK(cuStreamDestroy(stream));
}

// cudaGraphs: CUDA graphs in the runtime API, both ways a program makes
// them. A capture: copy in (pinned host memory), a memset, saxpy,
// incrementBy, copy back and a host function that checks the result, all
// on a stream, captured once and launched many times with new input. An
// explicit graph: a 1D copy node, a memset node, a kernel node and a host
// node with their dependencies, its kernel's parameters changed in the
// executable graph and brought back by an update. Every result is checked
// on the CPU; the same source runs natively and as a guest.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "check_cuda.h"

__global__ void saxpy(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void incrementBy(int* data, int inc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += inc;
}

static int g_failures = 0;

static void expect(bool ok, const char* what)
{
    printf("  %-60s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok)
        ++g_failures;
}

constexpr int kN = 4096;

// What the captured graph's host function sees: the launch's input and output.
struct Round {
    const float* x;
    const float* y;
    const int* ints;
    int base;    // the integers went in as base + i
    int checked; // launches whose results the host function found right
};

static void check_round(void* p)
{
    Round* r = static_cast<Round*>(p);
    bool ok = true;
    for (int i = 0; i < kN; ++i)
        ok &= r->y[i] == 2.0f * r->x[i] && r->ints[i] == r->base + i + 3;
    r->checked += ok;
}

static void captured(void)
{
    printf("stream capture:\n");
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *x = nullptr, *y = nullptr;
    CHECK(cudaMallocHost(&x, kN * sizeof(float)));
    CHECK(cudaMallocHost(&y, kN * sizeof(float)));
    int* ints = nullptr;
    CHECK(cudaMallocHost(&ints, kN * sizeof(int)));
    float *dx, *dy;
    int* di;
    CHECK(cudaMalloc(&dx, kN * sizeof(float)));
    CHECK(cudaMalloc(&dy, kN * sizeof(float)));
    CHECK(cudaMalloc(&di, kN * sizeof(int)));
    Round round = {x, y, ints, 0, 0};

    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CHECK(cudaStreamIsCapturing(s, &status));
    expect(status == cudaStreamCaptureStatusActive, "cudaStreamIsCapturing: active");
    CHECK(cudaMemcpyAsync(dx, x, kN * sizeof(float), cudaMemcpyHostToDevice, s));
    CHECK(cudaMemsetAsync(dy, 0, kN * sizeof(float), s));
    CHECK(cudaMemcpyAsync(di, ints, kN * sizeof(int), cudaMemcpyHostToDevice, s));
    saxpy<<<(kN + 255) / 256, 256, 0, s>>>(kN, 2.0f, dx, dy);
    incrementBy<<<(kN + 255) / 256, 256, 0, s>>>(di, 3, kN);
    CHECK(cudaMemcpyAsync(ints, di, kN * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaMemcpyAsync(y, dy, kN * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaLaunchHostFunc(s, check_round, &round));
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaStreamIsCapturing(s, &status));
    expect(status == cudaStreamCaptureStatusNone, "cudaStreamIsCapturing after the end: none");
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    expect(nodes >= 7, "the captured graph has the copies, the memset and the kernels");

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const int launches = 10;
    bool all = true;
    for (int k = 0; k < launches; ++k) {
        round.base = 100 * k;
        for (int i = 0; i < kN; ++i) {
            x[i] = static_cast<float>(k + i % 7);
            ints[i] = round.base + i;
        }
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < kN; ++i)
            all &= y[i] == 2.0f * x[i] && ints[i] == round.base + i + 3;
    }
    expect(all, "each launch: y = 2x (memset first), ints + 3");
    expect(round.checked == launches, "the host function ran after each launch's copies");
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFree(di));
    CHECK(cudaFreeHost(x));
    CHECK(cudaFreeHost(y));
    CHECK(cudaFreeHost(ints));
    CHECK(cudaStreamDestroy(s));
}

static int g_host_node_runs = 0;
static void count_run(void*) { ++g_host_node_runs; }

static void built(void)
{
    printf("explicit graph:\n");
    float *x, *y, *dx, *dy;
    CHECK(cudaMallocHost(&x, kN * sizeof(float)));
    CHECK(cudaMallocHost(&y, kN * sizeof(float)));
    CHECK(cudaMalloc(&dx, kN * sizeof(float)));
    CHECK(cudaMalloc(&dy, kN * sizeof(float)));
    for (int i = 0; i < kN; ++i)
        x[i] = static_cast<float>(i);
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t in, set, kernel, out, host;
    CHECK(cudaGraphAddMemcpyNode1D(&in, g, nullptr, 0, dx, x, kN * sizeof(float), cudaMemcpyHostToDevice));
    cudaMemsetParams ms = {};
    ms.dst = dy;
    ms.value = 0x3f800000; // 1.0f
    ms.elementSize = 4;
    ms.width = kN;
    ms.height = 1;
    CHECK(cudaGraphAddMemsetNode(&set, g, nullptr, 0, &ms));
    int n = kN;
    float a = 3.0f;
    void* args[] = {&n, &a, &dx, &dy};
    cudaKernelNodeParams kp = {};
    kp.func = reinterpret_cast<void*>(saxpy);
    kp.gridDim = dim3((kN + 255) / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    cudaGraphNode_t before[] = {in, set};
    CHECK(cudaGraphAddKernelNode(&kernel, g, before, 2, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&out, g, &kernel, 1, y, dy, kN * sizeof(float), cudaMemcpyDeviceToHost));
    cudaHostNodeParams hp = {count_run, nullptr};
    CHECK(cudaGraphAddHostNode(&host, g, &out, 1, &hp));
    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    expect(count == 5, "five nodes");

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaStreamSynchronize(0));
    bool ok = true;
    for (int i = 0; i < kN; ++i)
        ok &= y[i] == 3.0f * x[i] + 1.0f;
    expect(ok, "y = 3x + 1");
    // The executable graph's kernel with a = 5; the graph keeps a = 3.
    a = 5.0f;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, kernel, &kp));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaStreamSynchronize(0));
    ok = true;
    for (int i = 0; i < kN; ++i)
        ok &= y[i] == 5.0f * x[i] + 1.0f;
    expect(ok, "cudaGraphExecKernelNodeSetParams: y = 5x + 1");
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(exec, g, &info));
    expect(info.result == cudaGraphExecUpdateSuccess, "cudaGraphExecUpdate from the graph");
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaStreamSynchronize(0));
    ok = true;
    for (int i = 0; i < kN; ++i)
        ok &= y[i] == 3.0f * x[i] + 1.0f;
    expect(ok, "the graph's a = 3 again");
    expect(g_host_node_runs == 3, "the host node ran once per launch");
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFreeHost(x));
    CHECK(cudaFreeHost(y));
}

int main(void)
{
    captured();
    built();
    printf("cudaGraphs: %s\n", g_failures ? "FAILED" : "PASSED");
    return g_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

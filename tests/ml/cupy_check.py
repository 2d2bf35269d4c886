# CuPy on the GPU, check by check (as torch_eager_check.py: one JSON line per
# check, compared between a native and a guest run by compare_ml.py): array
# operations, an elementwise kernel and a raw kernel compiled at run time by
# NVRTC.
import cupy as cp
import numpy as np

from ml_checks import check, finish


@check("copies")
def copies():
    host = np.arange(1 << 16, dtype=np.float32)
    return {"roundtrip": float(np.abs(cp.asarray(host).get() - host).max())}, None


@check("arrays")
def arrays():
    a = cp.arange(1 << 20, dtype=cp.float32)
    b = cp.ones((512, 512), dtype=cp.float32)
    return {"arange_head": cp.arange(4, dtype=cp.float32).get().tolist(), "sum": float((a * 2).sum()),
            "matmul": float((b @ b).sum()), "max": float(a.max()), "std": round(float(a[:1000].std()), 3)}, None


@check("elementwise_kernel")
def elementwise_kernel():
    k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * x + y", "square_add")
    x = cp.arange(1024, dtype=cp.float32)
    return {"sum": float(k(x, cp.float32(1)).sum())}, None


@check("raw_kernel")
def raw_kernel():
    src = r'''
    extern "C" __global__ void scale(const float* x, float* y, float s, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = s * x[i];
    }'''
    k = cp.RawKernel(src, "scale")
    n = 1 << 16
    x = cp.arange(n, dtype=cp.float32)
    y = cp.empty_like(x)
    k(((n + 255) // 256,), (256,), (x, y, cp.float32(0.5), cp.int32(n)))
    return {"sum": float(y.sum())}, None


finish()

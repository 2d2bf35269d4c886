#!/usr/bin/env python3
# Each PyTorch/CuPy path one at a time (one process per workload shows which
# path fails where another would stop the run): prints OK or FAIL per step.
# Usage: ml_workloads.py [mm32 mmbf16 autograd conv sdpa graph cupy]
import os, sys, traceback
def step(name, fn):
    try:
        r = fn(); print("OK", name, r if r is not None else "", flush=True)
    except Exception as e:
        print("FAIL", name, type(e).__name__, str(e).splitlines()[0][:200], flush=True)
import torch
import torch.nn.functional as F
dev = "cuda"
def mm32():
    a = torch.randn(4096, 4096, device=dev); return float((a @ a).float().sum().item()) != 0
def mmbf16():
    a = torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16); return float((a @ a).float().abs().sum())
def autograd():
    m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.01); x = torch.randn(64, 256, device=dev); y = torch.randint(0, 10, (64,), device=dev)
    for _ in range(3):
        opt.zero_grad(); l = F.cross_entropy(m(x), y); l.backward(); opt.step()
    return round(l.item(), 4)
def conv():
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(16, 8, 3)).to(dev)
    x = torch.randn(8, 3, 32, 32, device=dev, requires_grad=True); y = m(x).sum(); y.backward(); return round(y.item(), 2)
def sdpa(backend):
    from torch.nn.attention import sdpa_kernel, SDPBackend
    q, k, v = (torch.randn(2, 8, 256, 64, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    with sdpa_kernel([getattr(SDPBackend, backend)]):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True); o.sum().backward()
    return round(float(o.float().abs().sum()), 1)
def graph():
    s = torch.cuda.Stream(); x = torch.ones(1024, device=dev)
    with torch.cuda.stream(s):
        y = x * 2
    torch.cuda.synchronize(); g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2 + 1
    g.replay(); torch.cuda.synchronize(); return float(y.sum())
which = sys.argv[1:] or ["mm32", "mmbf16", "autograd", "conv", "sdpa", "graph", "cupy"]
for w in which:
    if w == "mm32": step("matmul fp32 4096", mm32)
    if w == "mmbf16": step("matmul bf16 2048", mmbf16)
    if w == "autograd": step("mlp autograd", autograd)
    if w == "conv": step("conv fwd/bwd", conv)
    if w == "sdpa":
        for b in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"): step("sdpa " + b, lambda: sdpa(b))
    if w == "graph": step("cuda graph", graph)
    if w == "cupy":
        import cupy as cp
        step("cupy matmul", lambda: float((cp.ones((512, 512), dtype=cp.float32) @ cp.ones((512, 512), dtype=cp.float32)).sum()))
        step("cupy fft", lambda: float(cp.abs(cp.fft.fft(cp.arange(1024, dtype=cp.float32))).sum()))
        step("cupy solve", lambda: float(cp.linalg.solve(cp.eye(64, dtype=cp.float64) * 2, cp.ones(64)).sum()))
        import cupyx.scipy.sparse as sp
        step("cupy sparse", lambda: float((sp.identity(256, format="csr", dtype=cp.float32) @ cp.ones(256, dtype=cp.float32)).sum()))

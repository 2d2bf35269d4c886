# PyTorch eager on the GPU, check by check: run natively and as a guest
# (`kvmtool-gpu run --guest python3 --root / --vgpu cuda -- torch_eager_check.py`)
# and compare the two outputs with compare_ml.py. Each check prints one JSON
# line: its name, whether it passed, the values to compare between the two
# runs (seeded: the same on both sides up to floating-point tolerance) and,
# for the timed ones, a rate. A check that raises is reported and the rest go on.
import time

import torch

from ml_checks import check, finish
from train_steps import model_and_batch, training_step


def timed_steps(step, steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        out = step()
    torch.cuda.synchronize()
    return out, steps / (time.perf_counter() - t0)


def timed_matmul(n, dtype, seed, reps=20):
    """a @ b for n x n random matrices, reps times after three warm-ups: the
    last product and TFLOP/s by CUDA events around the timed ones."""
    torch.manual_seed(seed)
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    for _ in range(3):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        c = a @ b
    end.record()
    end.synchronize()
    return c, 2 * n**3 * reps / (start.elapsed_time(end) / 1e3) / 1e12


@check("device")
def device():
    assert torch.cuda.is_available()
    p = torch.cuda.get_device_properties(0)
    return {"name": p.name, "sms": p.multi_processor_count, "capability": list(torch.cuda.get_device_capability(0)),
            "memory_gib": round(p.total_memory / 2**30)}, None


@check("tensors")
def tensors():
    g = torch.Generator().manual_seed(1)
    host = torch.randn(1000, 1000, generator=g)
    dev = host.cuda()
    back = (dev * 3 + 1).cpu()
    pinned = torch.empty(1000, 1000).pin_memory()
    pinned.copy_(dev, non_blocking=True)
    torch.cuda.synchronize()
    ar = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
    return {"roundtrip": float((back - (host * 3 + 1)).abs().max()), "pinned": float((pinned - host).abs().max()),
            "sum": float(ar.sum()), "mean": float(dev.mean()), "max": float(dev.max()),
            "cumsum_last": float(ar[:1000].cumsum(0)[-1]), "sort_first": float(dev.flatten().sort().values[0])}, None


@check("matmul_fp32")
def matmul_fp32():
    torch.manual_seed(2)
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    ref = (a.double() @ b.double()).float()
    torch.backends.cuda.matmul.allow_tf32 = False
    c = a @ b
    return {"max_err": float((c - ref).abs().max()) < 1e-2, "ones": float((torch.ones(256, 256, device="cuda") @
                                                                            torch.ones(256, 256, device="cuda")).sum())}, None


@check("matmul_bf16_8192")
def matmul_bf16():
    c, tflops = timed_matmul(8192, torch.bfloat16, seed=3)
    return {"finite": bool(torch.isfinite(c).all())}, round(tflops, 1)


@check("matmul_fp32_4096")
def matmul_fp32_4096():
    # cublasSgemm (TF32 off) at n = 4096: the rate NVIDIA's cuBLAS reaches.
    torch.backends.cuda.matmul.allow_tf32 = False
    c, tflops = timed_matmul(4096, torch.float32, seed=5)
    return {"finite": bool(torch.isfinite(c).all())}, round(tflops, 2)


@check("autograd")
def autograd():
    torch.manual_seed(4)
    x = torch.randn(64, 32, device="cuda", requires_grad=True)
    w = torch.randn(32, 16, device="cuda", requires_grad=True)
    loss = torch.tanh(x @ w).pow(2).sum()
    loss.backward()
    return {"loss": float(loss), "gx": float(x.grad.abs().sum()), "gw": float(w.grad.abs().sum())}, None


@check("streams_events")
def streams_events():
    s = torch.cuda.Stream()
    e = torch.cuda.Event()
    x = torch.ones(1 << 20, device="cuda")
    with torch.cuda.stream(s):
        y = x * 2
        e.record(s)
    torch.cuda.current_stream().wait_event(e)
    z = y + 1
    torch.cuda.synchronize()
    return {"z": float(z.sum()), "query": bool(e.query())}, None


@check("cuda_graph")
def cuda_graph():
    static_in = torch.zeros(1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            static_out = static_in * 2 + 1
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = static_in * 2 + 1
    sums = []
    for v in (1.0, 2.0, 3.0):
        static_in.fill_(v)
        g.replay()
        sums.append(float(static_out.sum()))
    return {"replays": sums}, None


@check("allocator")
def allocator():
    blocks = [torch.empty(1 << 20, device="cuda") for _ in range(64)]
    peak = torch.cuda.max_memory_allocated()
    del blocks
    torch.cuda.empty_cache()
    return {"peak_mib": peak >> 20, "reserved_after": torch.cuda.memory_reserved() >> 20}, None


def train(kind, steps=100):
    step = training_step(*model_and_batch(kind))
    first = float(step())
    last, rate = timed_steps(step, steps)
    return {"first_loss": first, "last_loss": float(last)}, round(rate, 1)


@check("train_mlp")
def train_mlp():
    return train("mlp")


@check("train_cnn")
def train_cnn():
    return train("cnn")


@check("sdpa")
def sdpa():
    torch.manual_seed(9)
    shape = (4, 8, 256, 64)
    q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.float().pow(2).sum().backward()
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    return {"fwd_err_small": float((out.float() - ref).abs().max()) < 5e-2,
            "grad_finite": bool(torch.isfinite(q.grad).all() and torch.isfinite(k.grad).all())}, None


finish()

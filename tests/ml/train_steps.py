# The two small training loops of torch_eager_check.py (train_mlp, train_cnn)
# for a given number of timed steps, after three untimed ones: steps per
# second and the last loss. Run with two step counts, natively and as a
# guest, the difference of run's counters (the commands the guest waited
# for, its system calls) divided by the difference of steps is what one
# step costs. The timed steps lie between stat calls of two marker paths
# that do not exist, so a --trace-syscalls file shows where they begin and end.
# Usage: train_steps.py mlp|cnn STEPS
import os
import sys
import time

import torch


def model_and_batch(kind):
    """torch_eager_check.py's models: its train_mlp's and train_cnn's, and their batch shapes."""
    torch.manual_seed(7 if kind == "mlp" else 8)
    if kind == "mlp":
        return torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                   torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda(), (256, 512)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Flatten(), torch.nn.Linear(64 * 8 * 8, 10)).cuda(), (128, 3, 32, 32)


def training_step(model, batch):
    """One SGD step of `model` on a seeded random batch of shape `batch` with
    10 classes, as a function returning the step's loss."""
    torch.manual_seed(5)
    g = torch.Generator(device="cuda").manual_seed(6)
    x = torch.randn(*batch, device="cuda", generator=g)
    y = torch.randint(0, 10, (batch[0],), device="cuda", generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    kind, steps = sys.argv[1], int(sys.argv[2])
    step = training_step(*model_and_batch(kind))
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    os.path.exists("/kvmgpu-mark-start")
    t0 = time.perf_counter()
    for _ in range(steps):
        out = step()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    os.path.exists("/kvmgpu-mark-end")
    print(f"{kind} steps {steps} rate {steps / dt:.1f} loss {float(out.detach()):.5f}")


if __name__ == "__main__":
    main()

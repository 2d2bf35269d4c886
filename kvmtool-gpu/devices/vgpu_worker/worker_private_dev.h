// A /dev of the GPU worker's own, in its mount namespace: a small tmpfs
// holding the driver's nodes (/dev/nvidia*, /dev/nvidia-caps) and null,
// zero, full, random and urandom, each bound from the host's, and a
// /dev/shm of its own (the host's where an MPS client needs it). The driver
// opens its nodes for writing when it likes (graph memory opens
// /dev/nvidiactl long after start); with this /dev, and every other mount
// read-only and without device nodes, such an open reaches nothing of the
// host's but the GPU, so the sandbox can allow it.
#pragma once

#include <string>

namespace kvmgpu::vgpu {

// In a mount namespace of the worker's own, while it may still mount. false
// with *why when it could not be made (the host's /dev is then still there).
bool make_private_dev(bool host_shm, std::string* why);

} // namespace kvmgpu::vgpu

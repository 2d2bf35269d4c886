// The kernels the multigpu guest runs, for the native side of
// `bench multigpu`: the very sources the guests' fatbin is built from.
#include "guest-stub/kernels/matmul.cu"
#include "guest-stub/kernels/vector_add.cu"

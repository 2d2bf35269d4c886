# Linux-ABI CUDA guests: an unmodified CUDA runtime-API program built as an
# ordinary static x86-64 Linux executable (glibc, libstdc++, libgcc_eh, all
# linked statically), which the VMM starts in ring 3 and whose system calls it
# serves. The guest Driver API (cuda/) is the same source as the freestanding
# guests'; it and cudart (cudart/) sit on the Linux side of the platform seam
# (platform/linux.cpp) and replace NVIDIA's libcudart_static. Included from
# CMakeLists.txt where nvcc exists (KVMGPU_NVCC_INCLUDE set).

# The seam's Linux side, with the pure runtime pieces it reuses (the option
# parser, TSC conversions, the SG-list builder).
add_library(kvmgpu_linux_platform STATIC
  platform/linux.cpp
  runtime/cmdline.cpp
  runtime/sg_list.cpp
  runtime/tsc.cpp
)
target_include_directories(kvmgpu_linux_platform PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
target_compile_options(kvmgpu_linux_platform PRIVATE -Wall -Wextra)

add_library(kvmgpu_linux_cuda STATIC ${KVMGPU_GUEST_CUDA_SOURCES})
target_link_libraries(kvmgpu_linux_cuda PUBLIC kvmgpu_linux_platform)
kvmgpu_use_driver_entry_table(kvmgpu_linux_cuda)
target_compile_options(kvmgpu_linux_cuda PRIVATE -Wall -Wextra)
# Linux guests have threads: per-thread state is thread_local (api_lock.h).
target_compile_definitions(kvmgpu_linux_cuda PRIVATE GUEST_THREADS=1)

add_library(kvmgpu_linux_cudart STATIC ${KVMGPU_GUEST_CUDART_SOURCES})
target_include_directories(kvmgpu_linux_cudart SYSTEM PRIVATE ${KVMGPU_NVCC_INCLUDE})
target_link_libraries(kvmgpu_linux_cudart PUBLIC kvmgpu_linux_cuda)
target_compile_options(kvmgpu_linux_cudart PRIVATE -Wall -Wextra)
target_compile_definitions(kvmgpu_linux_cudart PRIVATE GUEST_THREADS=1)

# The guest cuBLAS (cublas/): cuBLAS's API over the vGPU, built against
# NVIDIA's cublas_v2.h; it checks each call with the VMM's own rules
# (kvmtool-gpu/abi/blas_checks.cpp, shared like the rest of abi/) before sending it.
add_library(kvmgpu_linux_cublas STATIC
  cublas/cublas_data.cpp
  cublas/cublas_gemm.cpp
  cublas/cublas_handle.cpp
  cublas/cublas_level1.cpp
  cublas/cublas_level2.cpp
  cublas/cublas_level3.cpp
  ${PROJECT_SOURCE_DIR}/kvmtool-gpu/abi/blas_checks.cpp
  ${PROJECT_SOURCE_DIR}/kvmtool-gpu/abi/blas_extent.cpp
)
target_include_directories(kvmgpu_linux_cublas SYSTEM PRIVATE ${KVMGPU_NVCC_INCLUDE})
target_link_libraries(kvmgpu_linux_cublas PUBLIC kvmgpu_linux_cudart)
target_compile_options(kvmgpu_linux_cublas PRIVATE -Wall -Wextra)

# The guest cuRAND (curand/): cuRAND's host API over the vGPU, built against
# NVIDIA's curand.h.
add_library(kvmgpu_linux_curand STATIC curand/curand_host.cpp curand/curand_tables.cpp)
target_include_directories(kvmgpu_linux_curand SYSTEM PRIVATE ${KVMGPU_NVCC_INCLUDE})
target_link_libraries(kvmgpu_linux_curand PUBLIC kvmgpu_linux_cudart)
target_compile_options(kvmgpu_linux_curand PRIVATE -Wall -Wextra)

# The guest cuFFT (cufft/): cuFFT's basic plans over the vGPU, against cufft.h.
add_library(kvmgpu_linux_cufft STATIC cufft/cufft_basic.cpp cufft/cufft_plans.cpp cufft/cufft_refused.cpp)
target_include_directories(kvmgpu_linux_cufft SYSTEM PRIVATE ${KVMGPU_NVCC_INCLUDE})
target_link_libraries(kvmgpu_linux_cufft PUBLIC kvmgpu_linux_cudart)
target_compile_options(kvmgpu_linux_cufft PRIVATE -Wall -Wextra)

# The names kvmgpu_add_cuda_guest links, the same in this tree and in the
# installed package (kvmtool-gpu/api/, which exports these libraries).
foreach(part platform cuda cudart cublas curand cufft)
  set_target_properties(kvmgpu_linux_${part} PROPERTIES EXPORT_NAME guest_${part})
  add_library(kvmgpu::guest_${part} ALIAS kvmgpu_linux_${part})
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/cuda_guest.cmake)

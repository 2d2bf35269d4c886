# Linux-ABI CUDA guests: an unmodified CUDA runtime-API program built as an
# ordinary static x86-64 Linux executable (glibc, libstdc++, libgcc_eh, all
# linked statically), which the VMM starts in ring 3 and whose system calls it
# serves. The guest Driver API (cuda/) and cudart (cudart/) are the same
# sources as the freestanding guests', on the Linux side of the platform seam
# (platform/linux.cpp); they replace NVIDIA's libcudart_static. Included from
# CMakeLists.txt where nvcc exists (KVMGPU_NVCC_INCLUDE set).

# The seam's Linux side, with the pure runtime pieces it reuses (the option
# parser, TSC conversions, the SG-list builder).
add_library(kvmgpu_linux_platform STATIC
  platform/linux.cpp
  runtime/cmdline.cpp
  runtime/sg_list.cpp
  runtime/tsc.cpp
)
target_include_directories(kvmgpu_linux_platform PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_options(kvmgpu_linux_platform PRIVATE -Wall -Wextra)

add_library(kvmgpu_linux_cuda STATIC ${KVMGPU_GUEST_CUDA_SOURCES})
target_link_libraries(kvmgpu_linux_cuda PUBLIC kvmgpu_linux_platform)
target_compile_options(kvmgpu_linux_cuda PRIVATE -Wall -Wextra)

add_library(kvmgpu_linux_cudart STATIC ${KVMGPU_GUEST_CUDART_SOURCES})
target_include_directories(kvmgpu_linux_cudart SYSTEM PRIVATE ${KVMGPU_NVCC_INCLUDE})
target_link_libraries(kvmgpu_linux_cudart PUBLIC kvmgpu_linux_cuda)
target_compile_options(kvmgpu_linux_cudart PRIVATE -Wall -Wextra)

# Flags of a CUDA guest's host code, given to nvcc (-Xcompiler) and to the
# program's other sources alike; the toolchain's defaults otherwise
# (exceptions, RTTI, PIE). Cache entries, so the function sees them when it
# is called from any folder.
set(KVMGPU_CUDA_GUEST_HOST_FLAGS -O2 CACHE INTERNAL "host flags of CUDA guests")
set(KVMGPU_CUDA_GUEST_GENCODE -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
    CACHE INTERNAL "nvcc targets of CUDA guests")

# kvmgpu_add_cuda_guest(<name> SOURCES <x.cu|x.cpp|x.c...> [INCLUDES <dirs...>]
#                       [NVCC_FLAGS <flags...>])
# builds ${KVMGPU_GUEST_DIR}/<name>.elf (target guest_<name>): nvcc compiles
# each .cu (device code as a fatbin in the object; host code by the host
# g++), CMake compiles the .cpp and .c files (as C++ and C) with the same
# host flags and INCLUDES (also given to nvcc) and the toolkit's headers, and
# g++ -static links them with the guest cudart and Driver API. Usable from
# any CMakeLists.txt added after guest-stub/.
function(kvmgpu_add_cuda_guest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;INCLUDES;NVCC_FLAGS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kvmgpu_add_cuda_guest(${name}): SOURCES is required")
  endif()
  string(REPLACE ";" "," host_flags "${KVMGPU_CUDA_GUEST_HOST_FLAGS}")
  set(include_flags)
  foreach(dir ${ARG_INCLUDES})
    get_filename_component(abs ${dir} ABSOLUTE)
    list(APPEND include_flags -I${abs})
  endforeach()
  set(objdir ${CMAKE_CURRENT_BINARY_DIR}/cuda_guest_${name})
  set(objects)
  set(other_sources)
  foreach(src ${ARG_SOURCES})
    get_filename_component(abs ${src} ABSOLUTE)
    if(abs MATCHES "\\.cu$")
      get_filename_component(base ${src} NAME)
      set(obj ${objdir}/${base}.o)
      add_custom_command(
        OUTPUT ${obj}
        COMMAND ${KVMGPU_NVCC} -c ${abs} -o ${obj} -ccbin ${CMAKE_CXX_COMPILER} ${KVMGPU_CUDA_GUEST_GENCODE}
                -Xcompiler=${host_flags} ${include_flags} ${ARG_NVCC_FLAGS} -MD -MF ${obj}.d
        DEPENDS ${abs}
        DEPFILE ${obj}.d
        COMMENT "nvcc (Linux-ABI guest): ${src}"
        VERBATIM)
      set_source_files_properties(${obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
      list(APPEND objects ${obj})
    else()
      list(APPEND other_sources ${abs})
    endif()
  endforeach()
  set(target guest_${name})
  add_executable(${target} ${objects} ${other_sources})
  target_include_directories(${target} PRIVATE ${ARG_INCLUDES})
  target_include_directories(${target} SYSTEM PRIVATE ${KVMGPU_NVCC_INCLUDE})
  target_compile_options(${target} PRIVATE ${KVMGPU_CUDA_GUEST_HOST_FLAGS})
  target_link_libraries(${target} PRIVATE kvmgpu_linux_cudart)
  target_link_options(${target} PRIVATE -static)
  kvmgpu_guest_image(${target} ${name})
endfunction()

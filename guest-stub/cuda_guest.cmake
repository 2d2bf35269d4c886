# kvmgpu_add_cuda_guest(): a CUDA runtime-API program built as a Linux-ABI
# guest. Included by linux_guests.cmake in this tree and by the installed
# package's kvmgpuConfig.cmake (KVMGPU_NVCC set; the kvmgpu::guest_*
# libraries defined).
# Flags of a CUDA guest's host code, given to nvcc (-Xcompiler) and to the
# program's other sources alike; the toolchain's defaults otherwise
# (exceptions, RTTI, PIE). Cache entries, so the function sees them when it
# is called from any folder.
set(KVMGPU_CUDA_GUEST_HOST_FLAGS -O2 CACHE INTERNAL "host flags of CUDA guests")
set(KVMGPU_CUDA_GUEST_GENCODE -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
    CACHE INTERNAL "nvcc targets of CUDA guests")
# Outside this tree (the installed package) the toolkit's headers are found
# from KVMGPU_NVCC, and images go to <build>/guests unless KVMGPU_GUEST_DIR says.
if(NOT KVMGPU_NVCC_INCLUDE)
  get_filename_component(kvmgpu_nvcc_bin ${KVMGPU_NVCC} DIRECTORY)
  get_filename_component(KVMGPU_NVCC_INCLUDE ${kvmgpu_nvcc_bin}/../include ABSOLUTE CACHE)
endif()
if(NOT KVMGPU_GUEST_DIR)
  set(KVMGPU_GUEST_DIR ${CMAKE_BINARY_DIR}/guests)
endif()

# kvmgpu_add_cuda_guest(<name> SOURCES <x.cu|x.cpp|x.c...> [INCLUDES <dirs...>]
#                       [NVCC_FLAGS <flags...>] [OUTPUT_DIR <dir>] [NATIVE] [CUBLAS] [CURAND] [CUFFT])
# builds ${KVMGPU_GUEST_DIR}/<name>.elf (target guest_<name>): nvcc compiles
# each .cu (device code as a fatbin in the object; host code by the host
# g++), CMake compiles the .cpp and .c files (as C++ and C) with the same
# host flags and INCLUDES (also given to nvcc) and the toolkit's headers, and
# g++ -static links them with the guest cudart and Driver API. Usable from
# any CMakeLists.txt added after guest-stub/, and from outside projects
# through find_package(kvmgpu) (docs/embedding.md).
# OUTPUT_DIR: the image goes to <dir>/<name>.elf instead, outside `all` and
# `guests`. NATIVE: the same objects are also linked with NVIDIA's cudart
# (libcudart_static, and the driver's stub libcuda) into <dir>/native/<name>
# (target native_<name>), to run natively beside the guest.
# CUBLAS, CURAND, CUFFT: the guest links the guest library; a native twin NVIDIA's.
function(kvmgpu_add_cuda_guest name)
  cmake_parse_arguments(ARG "NATIVE;CUBLAS;CURAND;CUFFT" "OUTPUT_DIR" "SOURCES;INCLUDES;NVCC_FLAGS" ${ARGN})
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
  # The program's own objects, shared by the guest and its native twin.
  set(target guest_${name})
  set(program_objects ${objects})
  if(other_sources)
    add_library(${target}_objects OBJECT ${other_sources})
    target_include_directories(${target}_objects PRIVATE ${ARG_INCLUDES})
    target_include_directories(${target}_objects SYSTEM PRIVATE ${KVMGPU_NVCC_INCLUDE})
    target_compile_options(${target}_objects PRIVATE ${KVMGPU_CUDA_GUEST_HOST_FLAGS})
    if(ARG_OUTPUT_DIR)
      set_target_properties(${target}_objects PROPERTIES EXCLUDE_FROM_ALL TRUE)
    endif()
    list(APPEND program_objects $<TARGET_OBJECTS:${target}_objects>)
  endif()
  add_executable(${target} ${program_objects})
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  if(ARG_CUBLAS)
    target_link_libraries(${target} PRIVATE kvmgpu::guest_cublas)
  endif()
  if(ARG_CURAND)
    target_link_libraries(${target} PRIVATE kvmgpu::guest_curand)
  endif()
  if(ARG_CUFFT)
    target_link_libraries(${target} PRIVATE kvmgpu::guest_cufft)
  endif()
  target_link_libraries(${target} PRIVATE kvmgpu::guest_cudart)
  target_link_options(${target} PRIVATE -static)
  if(NOT ARG_OUTPUT_DIR AND COMMAND kvmgpu_guest_image) # in this tree: part of `guests`
    kvmgpu_guest_image(${target} ${name})
  elseif(NOT ARG_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name} SUFFIX .elf RUNTIME_OUTPUT_DIRECTORY
                          ${KVMGPU_GUEST_DIR})
  else()
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name} SUFFIX .elf
                          RUNTIME_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR} EXCLUDE_FROM_ALL TRUE)
  endif()
  if(ARG_NATIVE)
    if(NOT ARG_OUTPUT_DIR)
      message(FATAL_ERROR "kvmgpu_add_cuda_guest(${name}): NATIVE needs OUTPUT_DIR")
    endif()
    get_filename_component(cuda_root ${KVMGPU_NVCC_INCLUDE}/.. ABSOLUTE)
    add_executable(native_${name} ${program_objects})
    if(ARG_CUBLAS) # the toolkit's shared library, found where the toolkit is on the GPU machine too
      target_link_libraries(native_${name} PRIVATE ${cuda_root}/lib64/libcublas.so)
      target_link_options(native_${name} PRIVATE -Wl,-rpath,${cuda_root}/lib64)
    endif()
    if(ARG_CURAND)
      target_link_libraries(native_${name} PRIVATE ${cuda_root}/lib64/libcurand.so)
      target_link_options(native_${name} PRIVATE -Wl,-rpath,${cuda_root}/lib64)
    endif()
    if(ARG_CUFFT)
      target_link_libraries(native_${name} PRIVATE ${cuda_root}/lib64/libcufft.so)
      target_link_options(native_${name} PRIVATE -Wl,-rpath,${cuda_root}/lib64)
    endif()
    target_link_libraries(native_${name} PRIVATE ${cuda_root}/lib64/libcudart_static.a
                          ${cuda_root}/lib64/stubs/libcuda.so dl pthread rt)
    # As the VMM's own binaries: only glibc (and the driver) needed where it runs.
    target_link_options(native_${name} PRIVATE -static-libstdc++ -static-libgcc)
    set_target_properties(native_${name} PROPERTIES LINKER_LANGUAGE CXX OUTPUT_NAME ${name} RUNTIME_OUTPUT_DIRECTORY
                          ${ARG_OUTPUT_DIR}/native EXCLUDE_FROM_ALL TRUE)
  endif()
endfunction()

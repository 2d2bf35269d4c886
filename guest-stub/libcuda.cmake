# The guest libcuda.so.1: the guest Driver API (cuda/) as the shared library
# NVIDIA's own cudart and libraries dlopen inside a Linux-ABI guest, with
# the private tables they ask cuGetExportTable for (libcuda/). Built with the
# host compiler only (no nvcc, no GPU). Outside kvmtool-gpu it loads, and
# cuInit answers CUDA_ERROR_NO_DEVICE (platform.h: vmm_present).
set(KVMGPU_LIBCUDA_SOURCES
  libcuda/context_local_storage.cpp
  libcuda/export_tables.cpp
  libcuda/integrity_check.cpp
  libcuda/runtime_tables.cpp
  libcuda/tools_module_table.cpp
  libcuda/unknown_tables.cpp
)
# Its own cuGetProcAddress table: the common markers and cuGetExportTable's.
set(libcuda_generated ${CMAKE_BINARY_DIR}/generated-libcuda)
set(libcuda_table ${libcuda_generated}/guest-stub/cuda/cuda_entry_points.h)
list(TRANSFORM KVMGPU_LIBCUDA_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/ OUTPUT_VARIABLE libcuda_paths)
string(REPLACE ";" "|" libcuda_table_sources "${guest_cuda_paths};${libcuda_paths}")
add_custom_command(
  OUTPUT ${libcuda_table}
  COMMAND ${CMAKE_COMMAND} "-DSOURCES=${libcuda_table_sources}" -DOUTPUT=${libcuda_table}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cuda/driver_entry_table.cmake
  DEPENDS ${guest_cuda_paths} ${libcuda_paths} ${CMAKE_CURRENT_SOURCE_DIR}/cuda/driver_entry_table.cmake
  COMMENT "libcuda.so.1's cuGetProcAddress table"
  VERBATIM)
add_custom_target(kvmgpu_libcuda_entry_table DEPENDS ${libcuda_table})
set(KVMGPU_LIBCUDA_ENTRY_TABLE ${libcuda_table} CACHE INTERNAL "libcuda.so.1's cuGetProcAddress table")
set(KVMGPU_LIBCUDA_GENERATED_DIR ${libcuda_generated} CACHE INTERNAL "where that table is generated")

add_library(kvmgpu_libcuda SHARED ${KVMGPU_GUEST_CUDA_SOURCES} ${KVMGPU_LIBCUDA_SOURCES}
            platform/linux.cpp runtime/cmdline.cpp runtime/sg_list.cpp runtime/tsc.cpp)
add_dependencies(kvmgpu_libcuda kvmgpu_libcuda_entry_table)
target_include_directories(kvmgpu_libcuda PRIVATE ${libcuda_generated} ${PROJECT_SOURCE_DIR})
target_compile_options(kvmgpu_libcuda PRIVATE -Wall -Wextra)
target_compile_definitions(kvmgpu_libcuda PRIVATE GUEST_THREADS=1 KVMGPU_PLATFORM_SHARED_LIBRARY=1)
set(libcuda_map ${CMAKE_CURRENT_SOURCE_DIR}/libcuda/libcuda.map)
# No C++ runtime needed where it is loaded: libstdc++ and libgcc inside.
# -Bsymbolic-functions: calls between its own cu* functions stay inside, not
# bound to a preloaded library of the same names.
target_link_options(kvmgpu_libcuda PRIVATE -static-libstdc++ -static-libgcc -Wl,--no-undefined -Wl,-Bsymbolic-functions
                    -Wl,--version-script=${libcuda_map})
target_link_libraries(kvmgpu_libcuda PRIVATE Threads::Threads)
# libcuda.so.1 (its SONAME) and the libcuda.so link, in ${KVMGPU_GUEST_DIR}/lib.
set_target_properties(kvmgpu_libcuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1 LINK_DEPENDS ${libcuda_map}
                      LIBRARY_OUTPUT_DIRECTORY ${KVMGPU_GUEST_DIR}/lib)

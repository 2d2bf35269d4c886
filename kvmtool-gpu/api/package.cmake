# The installed package of the embedding API (docs/embedding.md), included
# by the top-level CMakeLists.txt after guest-stub/, whose guest libraries
# (for kvmgpu_add_cuda_guest) it installs too where this build had nvcc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(kvmgpu_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kvmgpu)
install(TARGETS kvmgpu kvmgpu_static EXPORT kvmgpuTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kvmtool-gpu/include/kvmgpu DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kvmgpuTargets NAMESPACE kvmgpu:: DESTINATION ${kvmgpu_cmake_dir})
# The guest side of kvmgpu_add_cuda_guest, where this build had nvcc.
set(KVMGPU_PACKAGE_HAS_CUDA_GUESTS OFF)
if(TARGET kvmgpu_linux_cudart)
  set(KVMGPU_PACKAGE_HAS_CUDA_GUESTS ON)
  install(TARGETS kvmgpu_linux_platform kvmgpu_linux_cuda kvmgpu_linux_cudart kvmgpu_linux_cublas kvmgpu_linux_curand
                  kvmgpu_linux_cufft EXPORT kvmgpuGuestTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/kvmgpu-guest)
  install(EXPORT kvmgpuGuestTargets NAMESPACE kvmgpu:: DESTINATION ${kvmgpu_cmake_dir})
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kvmgpuConfig.cmake.in ${CMAKE_BINARY_DIR}/kvmtool-gpu/api/kvmgpuConfig.cmake
                              INSTALL_DESTINATION ${kvmgpu_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kvmtool-gpu/api/kvmgpuConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kvmtool-gpu/api/kvmgpuConfig.cmake ${CMAKE_BINARY_DIR}/kvmtool-gpu/api/kvmgpuConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/guest-stub/cuda_guest.cmake DESTINATION ${kvmgpu_cmake_dir})
configure_file(${CMAKE_CURRENT_LIST_DIR}/kvmgpu.pc.in ${CMAKE_BINARY_DIR}/kvmtool-gpu/api/kvmgpu.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kvmtool-gpu/api/kvmgpu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CUDA codelets (issue 5): built whenever nvcc and the CUDA toolkit are found
# and StarPU was built with CUDA (STARPU_USE_CUDA in starpu_config.h), also on
# machines without a GPU (the GPU tests skip there). -DSTARFRONT_CUDA=OFF
# turns them off; without nvcc everything else builds as before.
# Sets STARFRONT_HAVE_CUDA (ON/OFF) and, when ON, enables the CUDA language
# with architectures "90-real;90-virtual" (sm_90 machine code plus PTX).
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
endif()
check_language(CUDA)
set(_sf_cuda_default OFF)
if(CMAKE_CUDA_COMPILER AND NOT STARFRONT_CORE_ONLY)
  set(_sf_cuda_default ON)
endif()
option(STARFRONT_CUDA "Build the CUDA codelets (needs nvcc, the CUDA toolkit and a StarPU built with CUDA)"
       ${_sf_cuda_default})
set(STARFRONT_HAVE_CUDA OFF)
if(STARFRONT_CUDA AND NOT STARFRONT_CORE_ONLY)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "STARFRONT_CUDA=ON but no CUDA compiler (nvcc) was found: set CUDACXX or -DSTARFRONT_CUDA=OFF")
  endif()
  find_package(CUDAToolkit)
  set(_sf_starpu_cuda OFF)
  find_file(_sf_starpu_config starpu_config.h PATHS ${STARPU_INCLUDE_DIRS} NO_DEFAULT_PATH)
  if(_sf_starpu_config)
    file(STRINGS "${_sf_starpu_config}" _sf_use_cuda REGEX "^#define STARPU_USE_CUDA 1")
    if(_sf_use_cuda)
      set(_sf_starpu_cuda ON)
    endif()
  endif()
  if(NOT CUDAToolkit_FOUND)
    message(STATUS "starfront: nvcc found but not the CUDA toolkit libraries: CUDA codelets not built")
  elseif(NOT _sf_starpu_cuda)
    message(STATUS "starfront: StarPU was built without CUDA (no STARPU_USE_CUDA in starpu_config.h): CUDA codelets not built")
  else()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
    endif()
    enable_language(CUDA)
    # C++17 for the .cu files: CMake 3.25 (Debian 12) knows no CUDA20 dialect
    # flags for nvcc and refuses to generate; the kernels and the headers
    # they include need nothing newer.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(STARFRONT_HAVE_CUDA ON)
    message(STATUS "starfront: CUDA codelets ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  endif()
endif()

# Finds starfront's dependencies and fails with a clear message naming the
# Debian package (or script) that provides a missing one.
find_package(PkgConfig)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "pkg-config not found: run tools/deps/install-deps.sh (apt package pkg-config)")
endif()

function(starfront_missing what how)
  message(FATAL_ERROR "starfront: ${what} not found. ${how}")
endfunction()

# StarPU 1.4 (built by tools/deps/starpu.sh into .deps/starpu).
set(ENV{PKG_CONFIG_PATH} "${STARFRONT_STARPU_PREFIX}/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
if(NOT STARFRONT_CORE_ONLY)
  pkg_check_modules(STARPU IMPORTED_TARGET starpu-1.4)
endif()
if(NOT STARFRONT_CORE_ONLY AND NOT STARPU_FOUND)
  starfront_missing("StarPU 1.4 (pkg-config module starpu-1.4)"
    "Run tools/deps/install-deps.sh, or set STARFRONT_STARPU_PREFIX / PKG_CONFIG_PATH to an installation.")
endif()

# StarPU-MPI (issue 11): the distributed executor, built when Open MPI
# (libopenmpi-dev) and StarPU's MPI library (starpumpi-1.4, built by
# tools/deps/starpu.sh when mpicc exists) are both found. STARFRONT_MPI
# defaults to ON then, OFF otherwise; ON without them is an error.
set(_sf_mpi_found OFF)
if(NOT STARFRONT_CORE_ONLY)
  find_package(MPI COMPONENTS C QUIET)
  pkg_check_modules(STARPUMPI QUIET IMPORTED_TARGET starpumpi-1.4)
  if(MPI_C_FOUND AND STARPUMPI_FOUND)
    set(_sf_mpi_found ON)
  endif()
endif()
option(STARFRONT_MPI "Build the StarPU-MPI executor (mpirun -np P starfront solve)" ${_sf_mpi_found})
if(STARFRONT_MPI AND NOT _sf_mpi_found)
  starfront_missing("MPI support (MPI_C_FOUND=${MPI_C_FOUND}, pkg-config starpumpi-1.4 found=${STARPUMPI_FOUND})"
    "Install libopenmpi-dev and rebuild StarPU with MPI (tools/deps/install-deps.sh does both), or pass -DSTARFRONT_MPI=OFF.")
endif()
if(STARFRONT_MPI)
  message(STATUS "starfront: StarPU-MPI executor ON (MPI ${MPI_C_VERSION}, StarPU-MPI ${STARPUMPI_VERSION})")
elseif(NOT STARFRONT_CORE_ONLY AND _sf_mpi_found)
  message(STATUS "starfront: StarPU-MPI executor OFF (-DSTARFRONT_MPI=OFF)")
elseif(NOT STARFRONT_CORE_ONLY)
  message(STATUS "starfront: StarPU-MPI executor OFF (Open MPI or StarPU's starpumpi-1.4 not found: "
                 "tools/deps/install-deps.sh installs both)")
endif()

# Scotch (nested dissection ordering), 32-bit SCOTCH_Num build from Debian.
find_path(SCOTCH_INCLUDE_DIR scotch.h PATH_SUFFIXES scotch)
find_library(SCOTCH_LIBRARY scotch)
# libscotcherr is not linked: src/analysis/ordering.cpp defines SCOTCH_errorPrint.
if(NOT SCOTCH_INCLUDE_DIR OR NOT SCOTCH_LIBRARY)
  starfront_missing("Scotch" "Install the Debian package libscotch-dev (tools/deps/install-deps.sh does).")
endif()
add_library(starfront::scotch INTERFACE IMPORTED)
target_include_directories(starfront::scotch INTERFACE ${SCOTCH_INCLUDE_DIR})
target_link_libraries(starfront::scotch INTERFACE ${SCOTCH_LIBRARY})

# BLAS / LAPACK(E) from OpenBLAS.
pkg_check_modules(OPENBLAS IMPORTED_TARGET openblas)
pkg_check_modules(LAPACKE IMPORTED_TARGET lapacke)
if(NOT OPENBLAS_FOUND OR NOT LAPACKE_FOUND)
  starfront_missing("OpenBLAS / LAPACKE" "Install libopenblas-dev and liblapacke-dev (tools/deps/install-deps.sh does).")
endif()

pkg_check_modules(HWLOC IMPORTED_TARGET hwloc)
if(NOT HWLOC_FOUND)
  starfront_missing("hwloc" "Install libhwloc-dev (tools/deps/install-deps.sh does).")
endif()

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  starfront_missing("CLI11" "Install libcli11-dev (tools/deps/install-deps.sh does).")
endif()
find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  starfront_missing("nlohmann-json" "Install nlohmann-json3-dev (tools/deps/install-deps.sh does).")
endif()

# CHOLMOD (SuiteSparse), for tests and benchmarks only.
find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse)
find_library(CHOLMOD_LIBRARY cholmod)
if(CHOLMOD_INCLUDE_DIR AND CHOLMOD_LIBRARY)
  set(STARFRONT_HAVE_CHOLMOD ON)
  add_library(starfront::cholmod INTERFACE IMPORTED)
  target_include_directories(starfront::cholmod INTERFACE ${CHOLMOD_INCLUDE_DIR})
  target_link_libraries(starfront::cholmod INTERFACE ${CHOLMOD_LIBRARY})
else()
  set(STARFRONT_HAVE_CHOLMOD OFF)
  message(STATUS "CHOLMOD not found: comparisons against it are skipped (apt package libsuitesparse-dev)")
endif()

if(STARFRONT_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)
  endif()
  if(NOT GTest_FOUND)
    starfront_missing("GoogleTest" "Install libgtest-dev (tools/deps/install-deps.sh does), or pass -DSTARFRONT_BUILD_TESTS=OFF.")
  endif()
endif()

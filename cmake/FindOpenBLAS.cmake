# FindOpenBLAS.cmake — locates OpenBLAS's CBLAS (Debian: libopenblas-dev, whose
# default is the pthreads build) for EMLX's f32/f64/c64 matmul, and defines the
# imported target OpenBLAS::OpenBLAS. Tries pkg-config's `openblas` module
# first (Debian keeps cblas.h and the library under .../openblas-pthread/),
# then a plain search.
#
# Sets OpenBLAS_FOUND, OpenBLAS_INCLUDE_DIR, OpenBLAS_LIBRARY, OpenBLAS_VERSION.
# Installed next to emlxConfig.cmake for consumers of emlx::emlx_static.

if(TARGET OpenBLAS::OpenBLAS)
  set(OpenBLAS_FOUND TRUE)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_OpenBLAS QUIET openblas)
endif()

find_path(OpenBLAS_INCLUDE_DIR NAMES cblas.h
  HINTS ${PC_OpenBLAS_INCLUDEDIR} ${PC_OpenBLAS_INCLUDE_DIRS}
  PATH_SUFFIXES openblas-pthread openblas)
find_library(OpenBLAS_LIBRARY NAMES openblas
  HINTS ${PC_OpenBLAS_LIBDIR} ${PC_OpenBLAS_LIBRARY_DIRS}
  PATH_SUFFIXES openblas-pthread openblas)
set(OpenBLAS_VERSION "${PC_OpenBLAS_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLAS
  REQUIRED_VARS OpenBLAS_LIBRARY OpenBLAS_INCLUDE_DIR
  VERSION_VAR OpenBLAS_VERSION)
mark_as_advanced(OpenBLAS_INCLUDE_DIR OpenBLAS_LIBRARY)

if(OpenBLAS_FOUND AND NOT TARGET OpenBLAS::OpenBLAS)
  add_library(OpenBLAS::OpenBLAS UNKNOWN IMPORTED)
  set_target_properties(OpenBLAS::OpenBLAS PROPERTIES
    IMPORTED_LOCATION "${OpenBLAS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_INCLUDE_DIR}")
endif()

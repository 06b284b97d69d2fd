# FindLAPACKE.cmake — locates LAPACKE, the C interface of LAPACK (Debian:
# liblapacke-dev), for EMLX's linear algebra, and defines the imported target
# LAPACKE::LAPACKE. LAPACK itself comes through liblapacke's own dependency
# (Debian points liblapack.so.3 at OpenBLAS's when both are installed).
#
# Sets LAPACKE_FOUND, LAPACKE_INCLUDE_DIR, LAPACKE_LIBRARY.
# Installed next to emlxConfig.cmake for consumers of emlx::emlx_static.

if(TARGET LAPACKE::LAPACKE)
  set(LAPACKE_FOUND TRUE)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_LAPACKE QUIET lapacke)
endif()

find_path(LAPACKE_INCLUDE_DIR NAMES lapacke.h
  HINTS ${PC_LAPACKE_INCLUDEDIR} ${PC_LAPACKE_INCLUDE_DIRS})
find_library(LAPACKE_LIBRARY NAMES lapacke
  HINTS ${PC_LAPACKE_LIBDIR} ${PC_LAPACKE_LIBRARY_DIRS})
find_library(LAPACKE_LAPACK_LIBRARY NAMES lapack
  HINTS ${PC_LAPACKE_LIBDIR} ${PC_LAPACKE_LIBRARY_DIRS})

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LAPACKE
  REQUIRED_VARS LAPACKE_LIBRARY LAPACKE_LAPACK_LIBRARY LAPACKE_INCLUDE_DIR)
mark_as_advanced(LAPACKE_INCLUDE_DIR LAPACKE_LIBRARY LAPACKE_LAPACK_LIBRARY)

if(LAPACKE_FOUND AND NOT TARGET LAPACKE::LAPACKE)
  add_library(LAPACKE::LAPACKE UNKNOWN IMPORTED)
  set_target_properties(LAPACKE::LAPACKE PROPERTIES
    IMPORTED_LOCATION "${LAPACKE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LAPACKE_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${LAPACKE_LAPACK_LIBRARY}")
endif()

# FindSLEEF.cmake — locates SLEEF (Debian: libsleef-dev), the vectorised libm
# EMLX's kernels call for transcendentals, and defines the imported target
# SLEEF::sleef. Tries pkg-config's `sleef` module first, then a plain search
# (Debian puts sleef.h under /usr/include/<multiarch>/).
#
# Sets SLEEF_FOUND, SLEEF_INCLUDE_DIR, SLEEF_LIBRARY, SLEEF_VERSION.
# Installed next to emlxConfig.cmake so consumers of emlx::emlx_static can
# find the same dependency.

if(TARGET SLEEF::sleef)
  set(SLEEF_FOUND TRUE)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_SLEEF QUIET sleef)
endif()

find_path(SLEEF_INCLUDE_DIR NAMES sleef.h
  HINTS ${PC_SLEEF_INCLUDEDIR} ${PC_SLEEF_INCLUDE_DIRS})
find_library(SLEEF_LIBRARY NAMES sleef
  HINTS ${PC_SLEEF_LIBDIR} ${PC_SLEEF_LIBRARY_DIRS})
set(SLEEF_VERSION "${PC_SLEEF_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SLEEF
  REQUIRED_VARS SLEEF_LIBRARY SLEEF_INCLUDE_DIR
  VERSION_VAR SLEEF_VERSION)
mark_as_advanced(SLEEF_INCLUDE_DIR SLEEF_LIBRARY)

if(SLEEF_FOUND AND NOT TARGET SLEEF::sleef)
  add_library(SLEEF::sleef UNKNOWN IMPORTED)
  set_target_properties(SLEEF::sleef PROPERTIES
    IMPORTED_LOCATION "${SLEEF_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SLEEF_INCLUDE_DIR}")
endif()

find_package(PkgConfig)

PKG_CHECK_MODULES(PC_GR_SPEAD gnuradio-spead)

FIND_PATH(
    GR_SPEAD_INCLUDE_DIRS
    NAMES gnuradio/spead/api.h
    HINTS $ENV{SPEAD_DIR}/include
        ${PC_SPEAD_INCLUDEDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/include
          /usr/local/include
          /usr/include
)

FIND_LIBRARY(
    GR_SPEAD_LIBRARIES
    NAMES gnuradio-spead
    HINTS $ENV{SPEAD_DIR}/lib
        ${PC_SPEAD_LIBDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/lib
          ${CMAKE_INSTALL_PREFIX}/lib64
          /usr/local/lib
          /usr/local/lib64
          /usr/lib
          /usr/lib64
          )

include("${CMAKE_CURRENT_LIST_DIR}/gnuradio-speadTarget.cmake")

INCLUDE(FindPackageHandleStandardArgs)
FIND_PACKAGE_HANDLE_STANDARD_ARGS(GR_SPEAD DEFAULT_MSG GR_SPEAD_LIBRARIES GR_SPEAD_INCLUDE_DIRS)
MARK_AS_ADVANCED(GR_SPEAD_LIBRARIES GR_SPEAD_INCLUDE_DIRS)

# pkgconfig.cmake - values for cmake/tileconv.pc.in.
#
# TC_PC_PREFIX: the .pc file finds its prefix from its own location
# (${pcfiledir}), so `cmake --install build --prefix DIR` gives a correct
# file whatever CMAKE_INSTALL_PREFIX was at configure time.
# Absolute LIBDIR/INCLUDEDIR settings are kept as given.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _tc_up "/_root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_root")
  set(TC_PC_PREFIX "\${pcfiledir}/${_tc_up}")
endif()
foreach(_tc_d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_tc_d}}")
    set(TC_PC_${_tc_d} "${CMAKE_INSTALL_${_tc_d}}")
  else()
    set(TC_PC_${_tc_d} "\${prefix}/${CMAKE_INSTALL_${_tc_d}}")
  endif()
endforeach()

# TC_PC_LIBS_PRIVATE: what a program linking the static libtileconv.a needs
# besides it (`pkg-config --static --libs tileconv`). The shared library
# records its own dependencies, so plain `--libs` needs none of these.
set(TC_PC_LIBS_PRIVATE "")
if(TC_HAVE_FFTW)
  # "-L<dir>;-lfftw3f" as fftw3f.pc gives it
  list(APPEND TC_PC_LIBS_PRIVATE ${FFTW3F_LDFLAGS} ${FFTW3_LDFLAGS})
endif()
if(TC_HAVE_CUDA)
  # the CUDA runtime and cuFFT are C++ underneath
  list(APPEND TC_PC_LIBS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR}" -lcufft -lcudart -lstdc++)
endif()
list(APPEND TC_PC_LIBS_PRIVATE -lpthread -lm)
foreach(l ${CMAKE_DL_LIBS}) # libdl before glibc 2.34 (threads.c's dlsym)
  list(APPEND TC_PC_LIBS_PRIVATE -l${l})
endforeach()
list(REMOVE_DUPLICATES TC_PC_LIBS_PRIVATE)
list(JOIN TC_PC_LIBS_PRIVATE " " TC_PC_LIBS_PRIVATE)

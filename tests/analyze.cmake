# tests/analyze.cmake - `tileconv analyze --no-measure` checked against every
# number of the seeds' tiled-convolution tables (tests/test_analyze.py).
# Included from tests/CMakeLists.txt: include(${CMAKE_CURRENT_SOURCE_DIR}/analyze.cmake)
# The script needs only the Python 3 standard library; /usr/bin/python3 is
# preferred (Debian's, with numpy and scipy).
if(EXISTS /usr/bin/python3)
  set(TC_ANALYZE_PYTHON /usr/bin/python3)
else()
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(TC_ANALYZE_PYTHON ${Python3_EXECUTABLE})
endif()
if(TC_ANALYZE_PYTHON)
  add_test(NAME analyze COMMAND ${TC_ANALYZE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test_analyze.py $<TARGET_FILE:tileconv_cli>)
  set_tests_properties(analyze PROPERTIES TIMEOUT 120 LABELS "tools")
else()
  message(STATUS "tileconv: test 'analyze' not registered: no Python 3 interpreter")
endif()
if(TC_ANALYZE_PYTHON)
  # seed 002's layer arithmetic (tileconv analyze --layers) against hand values
  add_test(NAME analyze_layers COMMAND ${TC_ANALYZE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test_analyze_layers.py $<TARGET_FILE:tileconv_cli>)
  set_tests_properties(analyze_layers PROPERTIES TIMEOUT 120 LABELS "tools"
    FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed,")
endif()
if(TC_ANALYZE_PYTHON)
  # bench/dnn_targets.py (the CPU layer issue's targets over suite runs) on
  # synthetic runs
  add_test(NAME dnn_targets COMMAND ${TC_ANALYZE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test_dnn_targets.py)
  set_tests_properties(dnn_targets PROPERTIES TIMEOUT 60 LABELS "tools"
    FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed,")
endif()

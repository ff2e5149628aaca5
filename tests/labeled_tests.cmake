# Registers every doctest TEST_CASE of one test executable with CTest, labelled by its doctest
# test suite (each test file opens one: TEST_SUITE_BEGIN("unit"), a test may say otherwise with
# `* doctest::test_suite("slow")`). Run as a script after each build of the executable
# (tests/CMakeLists.txt, farm_add_test_executable). doctest's own discovery can label too, but it
# asks for each test's suite with --test-case=NAME, which splits NAME at commas; here each label's
# tests are listed with --test-suite=LABEL instead. A test in no known suite fails the build.
#
# Inputs: TEST_EXECUTABLE, TEST_LABELS (a ;-list), TEST_WORKING_DIR, CTEST_FILE.

function(list_tests out)
  execute_process(COMMAND "${TEST_EXECUTABLE}" --list-test-cases ${ARGN}
                  OUTPUT_VARIABLE text RESULT_VARIABLE rc WORKING_DIRECTORY "${TEST_WORKING_DIR}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot list the tests of ${TEST_EXECUTABLE} (${rc}): ${text}")
  endif()
  string(REPLACE ";" "\\;" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(names)
  foreach(line IN LISTS lines)
    if(line STREQUAL "" OR line MATCHES "^===+$" OR line MATCHES "^\\[doctest\\] ")
      continue()
    endif()
    list(APPEND names "${line}")
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

set(script "")
set(labelled)
foreach(label IN LISTS TEST_LABELS)
  list_tests(names "--test-suite=${label}")
  foreach(name IN LISTS names)
    # doctest filters: a comma separates patterns (escaped here); names hold no * ? [ by convention.
    string(REPLACE "," "\\," filter "${name}")
    string(APPEND script "add_test([==[${name}]==] \"${TEST_EXECUTABLE}\" [==[--test-case=${filter}]==])\n")
    # A filter that matched no test would pass with "test cases: 0": fail it instead.
    string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES LABELS ${label} "
                         "WORKING_DIRECTORY \"${TEST_WORKING_DIR}\" "
                         "FAIL_REGULAR_EXPRESSION [==[test cases: +0 [|]]==] "
                         # A test that cannot run here says so and returns: a skip, not a pass.
                         "SKIP_REGULAR_EXPRESSION [==[SKIPPED [(]not passed[)]]==])\n")
    list(APPEND labelled "${name}")
  endforeach()
endforeach()

list_tests(all)
foreach(name IN LISTS all)
  list(FIND labelled "${name}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "test '${name}' of ${TEST_EXECUTABLE} is in none of the suites ${TEST_LABELS}: "
                        "open its file with TEST_SUITE_BEGIN(\"unit\") (or integration, cluster, slow)")
  endif()
endforeach()

file(WRITE "${CTEST_FILE}" "${script}")

# Registers the doctest TEST_CASEs of one test executable with CTest, labelled by their doctest
# test suite (each test file opens one: TEST_SUITE_BEGIN("unit"), a test may say otherwise with
# `* doctest::test_suite("slow")`). Run as a script after each build of the executable
# (tests/CMakeLists.txt, farm_discover_tests). doctest's own discovery can label too, but it
# asks for each test's suite with --test-case=NAME, which splits NAME at commas; here each label's
# tests are listed with --test-suite=LABEL instead. A test in no known suite fails the build.
#
# Integration, cluster and slow tests are one CTest test each (they take seconds and run in
# parallel). Unit tests are one CTest test per source file, named "unit: FILE": a unit test takes
# milliseconds, while loading a test executable (OpenImageIO's 260 shared libraries) takes ~0.4 s
# of CPU, so one process per unit test spent most of `ctest -L unit` in the dynamic loader. A
# failing group prints doctest's output, naming the failing case.
#
# A test whose tool or files are missing says MESSAGE("skipped: ...") and returns; the run then
# exits 77 unless something failed (tests/test_main.cpp), and CTest reports it as skipped.
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
# A filter that matched no test would pass with "test cases: 0": fail it instead.
set(properties "WORKING_DIRECTORY \"${TEST_WORKING_DIR}\" SKIP_RETURN_CODE 77 FAIL_REGULAR_EXPRESSION [==[test cases: +0 [|]]==]")
foreach(label IN LISTS TEST_LABELS)
  list_tests(names "--test-suite=${label}")
  list(APPEND labelled ${names})
  if(label STREQUAL "unit")
    # The files of the unit tests, from doctest's XML listing (it names each case's file).
    execute_process(COMMAND "${TEST_EXECUTABLE}" --list-test-cases "--test-suite=${label}" --reporters=xml
                    OUTPUT_VARIABLE xml RESULT_VARIABLE rc WORKING_DIRECTORY "${TEST_WORKING_DIR}")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "cannot list the unit test files of ${TEST_EXECUTABLE} (${rc})")
    endif()
    string(REGEX MATCHALL "filename=\"[^\"]*\"" files "${xml}")
    list(REMOVE_DUPLICATES files)
    foreach(file IN LISTS files)
      string(REGEX REPLACE "^filename=\"(.*)\"$" "\\1" file "${file}")
      string(REGEX REPLACE "^.*/tests/" "" short "${file}")
      set(name "unit: ${short}")
      string(APPEND script "add_test([==[${name}]==] \"${TEST_EXECUTABLE}\" [==[--test-suite=unit]==] "
                           "[==[--source-file=${file}]==])\n")
      string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES LABELS unit ${properties})\n")
    endforeach()
    continue()
  endif()
  foreach(name IN LISTS names)
    # doctest filters: a comma separates patterns (escaped here); names hold no * ? [ by convention.
    string(REPLACE "," "\\," filter "${name}")
    string(APPEND script "add_test([==[${name}]==] \"${TEST_EXECUTABLE}\" [==[--test-case=${filter}]==])\n")
    string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES LABELS ${label} ${properties})\n")
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

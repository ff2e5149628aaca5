"""The doctest case names, as ctest sees them. doctest_discover_tests reads `--list-test-cases`
line by line into a CMake list, so a ';' in a name splits it into several ctest tests whose
`--test-case=` filters match nothing: they "pass" in a second without running anything (17 cases
were lost that way, among them the chaos, liveness and ssh cluster tests). Two cases of one name
would also run as one. This guards both."""
import collections
import os
import re
import unittest

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CASE = re.compile(r'\bTEST_CASE\(\s*"((?:[^"\\]|\\.)*)"')


def case_names():
    names = []
    for root, _, files in os.walk(TESTS):
        for name in files:
            if name.endswith((".cpp", ".h")):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    for m in CASE.finditer(f.read()):
                        names.append((m.group(1), os.path.relpath(path, TESTS)))
    return names


class TestCaseNamesTest(unittest.TestCase):
    def test_the_scan_finds_the_suite(self):
        # A regex that stopped matching would make the checks below vacuous.
        self.assertGreater(len(case_names()), 100)

    def test_no_name_holds_a_semicolon(self):
        bad = [f"{path}: {name}" for name, path in case_names() if ";" in name]
        self.assertEqual(bad, [], "ctest would split these names at ';' and run none of them")

    def test_names_are_unique(self):
        counts = collections.Counter(name for name, _ in case_names())
        self.assertEqual([n for n, c in counts.items() if c > 1], [])


if __name__ == "__main__":
    unittest.main()

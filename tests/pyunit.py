"""Runs a Python test file's unittest cases and ends with the summary line
tests/run.sh counts, as the cmocka binaries print it."""
import unittest


def main():
    """The exit status: 0 when every test passed."""
    result = unittest.main(exit=False, verbosity=2).result
    n = result.testsRun
    bad = len(result.failures) + len(result.errors)
    if bad:
        print(f"[  FAILED  ] {bad} test(s).")
    print(f"[  PASSED  ] {n - bad} test(s).")
    return 1 if bad else 0

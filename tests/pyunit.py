"""Runs a Python test file's unittest cases and ends with the summary line
tests/run.sh counts, as the cmocka binaries print it."""
import unittest


def main():
    """The exit status: 0 when every test passed."""
    result = unittest.main(exit=False, verbosity=2).result
    n = result.testsRun
    # a test counts once however many of its subtests failed
    bad = len({getattr(t, "test_case", t).id() for t, _ in result.failures + result.errors})
    skipped = len(result.skipped)
    # a skip is a skip, not a pass: its reason on a SKIP line, as the
    # cmocka tests print them (tests/run.sh lists and counts them)
    for test, reason in result.skipped:
        print(f"SKIP {test.id()}: {reason}")
    if bad:
        print(f"[  FAILED  ] {bad} test(s).")
    print(f"[  PASSED  ] {n - bad - skipped} test(s).")
    if skipped:
        print(f"[  SKIPPED ] {skipped} test(s).")
    return 1 if bad else 0

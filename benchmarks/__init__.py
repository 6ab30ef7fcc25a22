"""The benchmarks: ``python -m benchmarks NAME [--quick] [options]`` over the table in :mod:`benchmarks.suites`.

A development tool beside ``tests/`` (not in the wheel): every suite imports ``hybridrag.*`` and
writes the docs page the table names; ``python -m benchmarks --list`` shows them all.
"""

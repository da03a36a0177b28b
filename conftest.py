"""pytest set-up for tests/ and geoeval/'s doctests alike (this folder holds both)."""

# --cpu-report (or GEOEVAL_CPU_REPORT=N): the suite's CPU per test, file and process
pytest_plugins = ["tests.cpu_budget"]

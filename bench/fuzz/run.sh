#!/bin/sh
# The HTTP fuzzer of the test command (test/integration/service/fuzz-http.test.ts), run longer: prints
# requests per second, the slowest answer, the classes of input covered and the statuses seen, and
# fails on an answer slower than FUZZ_MAX_MS (10 s; the test command sets no such limit).
#   bench/fuzz/run.sh [runs] [seed]        (default 20000 requests, seed 1616)
# Needs the test database (TEST_DATABASE_URL, CHRONOMAP_TEST_TEMPLATE) like the tests.
set -eu
cd "$(dirname "$0")/../.."
FUZZ_RUNS="${1:-20000}" FUZZ_SEED="${2:-1616}" FUZZ_MAX_MS="${FUZZ_MAX_MS:-10000}" \
  npm run --silent test:tap -- --timeout=3600 test/integration/service/fuzz-http.test.ts 2>&1 | grep -E 'fuzz:|^(not )?ok|->'

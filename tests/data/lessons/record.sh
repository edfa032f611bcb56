#!/bin/sh
# Re-records every lesson's expected outputs (tests/data/lessons/*.json) and the outputs of
# examples/recorded.ipynb from the built shardscope; review the diff before committing it.
set -e
cd "$(dirname "$0")/../../.."
SHARDSCOPE_RECORD_LESSONS=1 build/tests/app_lessons_tests "$@"

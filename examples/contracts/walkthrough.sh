#!/usr/bin/env bash
# Walk through a semantic-contract release check on a copy of this example project:
# the released 1.0.0 contract passes, a dollars-to-cents change is BLOCKED, a schema-only check
# would have let it through, and declaring a major release makes it READY.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here" "$work/project"
cd "$work/project"
export RUNTIME__DLTHUB_TELEMETRY=false DLT_DATA_DIR="$work/dlt_data"
cli="$root/.venv/bin/dlt-contract-ops"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. The models match the released contract 1.0.0"
"$cli" contract check -s orders

step "2. A producer moves unit_price to cents and drops the UTC promise"
sed -i.bak -e 's/unit="USD", description/unit="USD_cents", description/' \
    -e 's/Semantics(timezone="UTC")/Semantics()/' pipelines/orders.py
"$cli" contract check -s orders --version 1.1.0
echo "exit code: $?"

step "3. What a names-and-types check would say about the same change"
"$cli" contract check -s orders --version 1.1.0 --schema-only
echo "exit code: $?"

step "4. The same change as GitHub annotations, for CI"
"$cli" contract check -s orders --version 1.1.0 --format github

step "5. Declared as a major release, it is READY; snapshot it"
"$cli" contract check -s orders --version 2.0.0 && \
    "$cli" contract snapshot -s orders --version 2.0.0

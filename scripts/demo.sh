#!/usr/bin/env bash
# The demo: load a dlt pipeline into DuckDB, add columns behind the models' back, reconcile.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
demo="$root/.demo/basic_project"
rm -rf "$root/.demo"
mkdir -p "$root/.demo"
cp -r "$root/examples/basic_project" "$demo"
rm -f "$demo"/*.duckdb "$demo"/*.duckdb.wal  # a fresh warehouse every run
export DLT_DATA_DIR="$root/.demo/dlt_data"
export RUNTIME__DLTHUB_TELEMETRY=false
py="$root/.venv/bin/python"
cli="$root/.venv/bin/dlt-contract-ops"
cd "$demo"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. Load the product_events source into DuckDB"
"$py" run_pipeline.py | tail -n 3

step "2. Reconcile: the warehouse matches the models"
"$cli" reconcile -s product_events

step "3. Add two columns behind the models' back (ALTER TABLE in DuckDB)"
"$py" make_drift.py

step "4. Reconcile again: the logging sink alerts (stderr) and the finding is printed"
"$cli" reconcile -s product_events

step "5. The same finding as JSON, for machines"
"$cli" reconcile -s product_events --dry-run --format json

step "6. A field goes dark: the provider stops sending actor_login (a later load, all NULL)"
"$py" backdate.py
"$py" run_pipeline.py --actor-login-dark | tail -n 1

step "7. Reconcile with --include-removal: coverage windows on dlt's own _dlt_load_id"
"$cli" reconcile -s product_events --include-removal --dry-run

step "8. --fail-on-drift turns findings into exit code 3 (for CI)"
set +e
"$cli" reconcile -s product_events --dry-run --fail-on-drift > /dev/null
rc=$?
set -e
echo "exit code: $rc"
[ "$rc" -eq 3 ] || { echo "expected exit code 3" >&2; exit 1; }

step "9. The ingest gate: an approved nullable addition loads, a renamed date is rejected"
"$py" gate_orders.py 2>/dev/null

step "10. A producer renames order_date to sale_date: one rename finding, not two"
"$py" rename_orders.py | tail -n 1
"$cli" reconcile -s shop_orders --include-removal --dry-run

step "11. Acknowledge the events drift until a date: still reported, not alerted, not failing"
id=$("$cli" reconcile -s product_events --dry-run --format json 2>/dev/null \
  | "$py" -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["findings"][0]["id"])')
"$cli" ack "$id" --until 14d --reason "ip-address ships in the next model release" --by demo
set +e
"$cli" reconcile -s product_events --fail-on-drift
rc=$?
set -e
echo "exit code: $rc (the only finding is acknowledged: it does not fail the run)"
"$cli" acks

step "12. Semantic drift: a week of daily ticket loads, then one where 4% of statuses are 'other'"
"$py" load_tickets.py | tail -n 1

step "13. Reconcile everything with --include-distribution: status 'other' went from 0% to 4%"
"$cli" reconcile --all --include-removal --include-distribution --dry-run
# the metrics behind the finding, from the JSON output; the demo fails without the shift
"$cli" reconcile --all --include-removal --include-distribution --dry-run --format json \
  2>/dev/null > "$root/.demo/reconcile.json"
"$py" - "$root/.demo/reconcile.json" <<'PY'
import json
import sys

found = False
for r in json.load(open(sys.argv[1]))["results"]:
    for f in r["findings"] if r["detector"] == "distribution" else []:
        for m in f["metrics"]:
            print(f"  metric {r['source']}.{f['table']}.{m['column']}: {m['metric']} "
                  f"{m['category'] or ''} {m['baseline']:.1%} -> {m['current']:.1%}")
            found |= (f["table"], m["column"], m["metric"], m["category"]) == (
                "tickets", "status", "category_share", "other") and m["current"] >= 0.03
if not found:
    sys.exit("expected a category_share finding: tickets.status 'other' from 0% to 4%")
PY

step "14. The per-load history behind it (dlt-contract-ops profile)"
"$cli" profile -s support_tickets --table tickets --column status

step "15. Record the nightly sweep (not a dry run: it appends to the finding index)"
"$cli" reconcile --all --include-removal --include-distribution > /dev/null 2>&1 || true

step "16. After the sweep a lake lands: the same events as a Delta table, with a column the model lacks"
"$py" load_lake.py | tail -n 1
cat >> .dlt/config.toml <<'TOML'

[sources.product_events_lake.contract_ops]
ref = "pipelines.events:product_events"
pipeline_name = "product_events_lake"
destination = "filesystem"
dataset_name = "product_events_raw"

[product_events_lake.destination.filesystem]
bucket_url = "lake"
TOML
# the columns come from the Delta log, the samples from the table's current version
"$cli" reconcile -s product_events_lake --dry-run

step "17. The morning report: what is new since the sweep (the lake), every finding, pictures"
"$cli" report --html "$root/.demo/report.html"
# docs/report.png is this page: chromium --headless --hide-scrollbars --window-size=1200,3000
#   --screenshot=docs/report.png .demo/report.html (the height: the page's)
"$py" - "$root/.demo/report.html" <<'PY'
import sys

page = open(sys.argv[1], encoding="utf-8").read()
wanted = ["badge additive", "badge removal", "badge distribution", "badge rename",
          "badge acknowledged", 'class="chart cov"', 'class="chart metric"',
          'class="chart handoff"', 'class="chart timeline"', "New since the last sweep (1)",
          'class="legend"']
missing = [w for w in wanted if w not in page]
if missing:
    sys.exit(f"the report lacks {missing}")
print(f"  {sys.argv[1]}: {len(page.encode()) / 1024:.0f} KiB, every kind of finding drawn")
PY

step "18. Fix a finding: --suggest prints the model change as a diff, --apply writes it"
"$cli" reconcile -s product_events --suggest 2>/dev/null
"$cli" reconcile -s product_events --suggest --apply 2>&1 >/dev/null
echo "payload_size is declared now (ip-address, made outside dlt, no field can declare):"
"$cli" reconcile -s product_events --dry-run

step "19. A source nobody modelled: a CRM API (CamelCase fields, a nested list), loaded as is"
"$py" load_crm.py
"$cli" init | grep -E "crm_api|Wrote"

step "20. models infer: a Pydantic model per table, bound in .dlt/config.toml (review, commit)"
"$cli" models infer -s crm_api
sed -n '/^class Accounts(/,$p' inferred_models/crm_api/accounts.py

step "21. The bound model guards the source: clean, until the API sends a field nobody modelled"
"$cli" reconcile -s crm_api
"$py" load_crm.py --loyalty
out=$("$cli" reconcile -s crm_api)  # a scheduled sweep: the logging sink alerts (stderr)
echo "$out"
grep -q "loyalty_tier" <<<"$out" || { echo "the demo expected the new loyalty_tier column"; exit 1; }

step "22. The fix loop on the inferred model: --suggest --apply, and the next sweep is clean"
"$cli" reconcile -s crm_api --suggest 2>/dev/null
"$cli" reconcile -s crm_api --suggest --apply 2>&1 >/dev/null
"$cli" reconcile -s crm_api --dry-run

step "23. The next scheduled sweep: the loyalty_tier drift is gone, so its alert is resolved"
out=$("$cli" reconcile -s crm_api 2>&1)
echo "$out"
grep -q "resolved: additive drift of \`accounts\`" <<<"$out" \
  || { echo "the demo expected the loyalty_tier finding resolved"; exit 1; }

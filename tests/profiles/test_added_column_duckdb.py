"""A declared column the model gains after its table exists is profiled from then on.

dlt derives `columns: discard_value` from a pydantic model (its default `extra="ignore"`) and
keeps it on the table, so a field added to the model later is DROPPED at extract by dlt
itself, sweep or no sweep (dlt-hub/dlt#3537). A source that means to grow its model says
`schema_contract={"columns": "evolve"}`, as this one does.
"""

from __future__ import annotations

import json

from dlt_contract_ops.engine.profile_history import profile_history
from tests.profiles.conftest import SOURCE, load
from tests.profiles.test_distribution_duckdb import STEADY, _sweep
from tests.projects import Project

EVOLVING = SOURCE.replace(
    "write_disposition=disposition, **hints,",
    'write_disposition=disposition, schema_contract={"columns": "evolve"}, **hints,',
)
WITH_CHANNEL = EVOLVING.replace(
    "    amount: Optional[float] = None\n",
    "    amount: Optional[float] = None\n    channel: Optional[str] = None\n",
).replace(
    '"amount": float(i % 17) + batch / 10,',
    '"amount": float(i % 17) + batch / 10, "channel": "web" if i % 4 else "app",',
)


def test_a_column_added_to_the_model_later_is_profiled_from_then_on(shop: Project) -> None:
    assert EVOLVING != SOURCE
    assert WITH_CHANNEL.count("channel") == 2
    shop.module("shop_mod", EVOLVING)
    load(shop, *STEADY[:2])
    assert _sweep(shop).findings == []  # in-process sweep between loads

    shop.module("shop_mod", WITH_CHANNEL)
    load(shop, {"batch": 2}, {"batch": 3})
    # a fresh process, as a scheduled sweep is (see the in-process case below)
    proc = shop.cli("profile", "-s", "shop", "--table", "orders", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["tables"]["orders"]
    loads = sorted({r["load_id"] for r in rows})
    assert len(loads) == 4
    channel = {r["load_id"]: r for r in rows if r["column"] == "channel"}
    assert sorted(channel) == loads[2:]  # only the loads after the model gained it
    for r in channel.values():
        assert r["null_rate"] == 0.0
        assert r["categories"] == {"app": 0.25, "web": 0.75}
    # the earlier loads keep their profiles: nothing was re-profiled
    assert {r["column"] for r in rows if r["load_id"] == loads[0]} == {
        "amount", "code", "id", "note", "region", "status"}


# was a bug: a project module imported by an earlier run in this process was kept
def test_an_in_process_sweep_after_the_model_changed_reads_the_new_model(shop: Project) -> None:
    shop.module("shop_mod", EVOLVING)
    load(shop, *STEADY[:2])
    _sweep(shop)
    shop.module("shop_mod", WITH_CHANNEL)
    load(shop, {"batch": 2})
    rows = profile_history("shop", project_dir=shop.root, table="orders")["orders"]
    assert any(r["column"] == "channel" for r in rows)

"""Pretend the first load happened three days ago (moves `_dlt_load_id` into the past).

Removal detection windows on dlt's own `_dlt_load_id`, so a real pipeline needs no stamped
column; this script only saves the demo three days of waiting.
"""

import time

import duckdb

if __name__ == "__main__":
    con = duckdb.connect("product_events_pipeline.duckdb")
    three_days_ago = f"{time.time() - 3 * 86400:.7f}"
    con.execute("UPDATE product_events_raw.events SET _dlt_load_id = ?", [three_days_ago])
    con.close()
    print("moved the existing events three days into the past")

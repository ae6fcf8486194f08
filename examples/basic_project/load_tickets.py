"""Load a week of daily support tickets, then today's load where 4% of them are `other`.

    python load_tickets.py

Each daily load gets its own `_dlt_load_id`; like backdate.py, the script moves the earlier
loads' ids one day apart into the past, which saves the demo a week of waiting.
"""

import time

import dlt
import duckdb
from pipelines.tickets import support_tickets

DAYS = 7
OTHER_SHARE = 0.04

if __name__ == "__main__":
    pipeline = dlt.pipeline("support_tickets_pipeline", destination="duckdb",
                            dataset_name="support_tickets_raw")
    now = time.time()
    for day in range(DAYS):
        info = pipeline.run(support_tickets(day=day, count=480 + 10 * (day % 5)))
        days_ago = f"{now - (DAYS - day) * 86400:.7f}"
        with duckdb.connect("support_tickets_pipeline.duckdb") as con:
            con.execute("UPDATE support_tickets_raw.tickets SET _dlt_load_id = ? "
                        "WHERE _dlt_load_id = ?", [days_ago, info.loads_ids[0]])
    pipeline.run(support_tickets(day=DAYS, count=500, other_share=OTHER_SHARE))
    print(f"loaded {DAYS} daily loads of tickets (no `other`), then one where "
          f"{OTHER_SHARE:.0%} are `other`")

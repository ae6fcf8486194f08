"""Commit the classic crime: add columns to the warehouse behind the models' back."""

import duckdb

if __name__ == "__main__":
    con = duckdb.connect("product_events_pipeline.duckdb")
    con.execute('ALTER TABLE product_events_raw.events ADD COLUMN payload_size BIGINT')
    con.execute('UPDATE product_events_raw.events SET payload_size = 512 + id * 7')
    con.execute('ALTER TABLE product_events_raw.events ADD COLUMN "ip-address" VARCHAR')
    con.execute("UPDATE product_events_raw.events SET \"ip-address\" = '10.0.0.' || (id % 250) "
                "WHERE id % 3 = 0")
    con.close()
    print("added `payload_size` and `ip-address` to product_events_raw.events")

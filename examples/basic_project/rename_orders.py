"""Load orders, pretend that load was three days ago, then load a batch whose producer
renamed `order_date` to `sale_date`.

    python rename_orders.py
"""

import time

import dlt
import duckdb
from pipelines.orders import shop_orders

if __name__ == "__main__":
    pipeline = dlt.pipeline("shop_orders_pipeline", destination="duckdb",
                            dataset_name="shop_orders_raw")
    pipeline.run(shop_orders(start=0))
    with duckdb.connect("shop_orders_pipeline.duckdb") as con:
        three_days_ago = f"{time.time() - 3 * 86400:.7f}"
        con.execute("UPDATE shop_orders_raw.orders SET _dlt_load_id = ?", [three_days_ago])
    pipeline.run(shop_orders(start=100, renamed=True))
    print("loaded 20 orders with order_date (3 days ago), then 20 with sale_date (now)")

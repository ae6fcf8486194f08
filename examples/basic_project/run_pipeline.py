"""Load the demo source into DuckDB (`product_events_pipeline.duckdb` in this folder).

    python run_pipeline.py                       # a healthy load
    python run_pipeline.py --actor-login-dark    # a load where `actor_login` went dark
"""

import sys

import dlt
from pipelines.events import product_events

if __name__ == "__main__":
    dark = "--actor-login-dark" in sys.argv
    pipeline = dlt.pipeline(
        pipeline_name="product_events_pipeline",
        destination="duckdb",
        dataset_name="product_events_raw",
    )
    info = pipeline.run(product_events(start=1000 if dark else 0, actor_login_dark=dark))
    print(info)

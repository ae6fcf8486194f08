"""Load the demo source into DuckDB (`product_events_pipeline.duckdb` in this folder)."""

import dlt

from pipelines.events import product_events

if __name__ == "__main__":
    pipeline = dlt.pipeline(
        pipeline_name="product_events_pipeline",
        destination="duckdb",
        dataset_name="product_events_raw",
    )
    info = pipeline.run(product_events())
    print(info)

"""Load the demo events into a local Delta bucket (`lake/` in this folder) through dlt's
`filesystem` destination, with a `session_id` column the `Event` model does not declare.

    python load_lake.py
"""

import dlt
from pipelines.events import product_events

if __name__ == "__main__":
    source = product_events()
    # the producer moved on: a field the model does not declare is let in (`evolve`)
    source.events.apply_hints(table_format="delta", schema_contract="evolve")
    source.events.add_map(lambda row: {**row, "session_id": f"s{row['id'] % 9}"})
    pipeline = dlt.pipeline(
        pipeline_name="product_events_lake",
        destination=dlt.destinations.filesystem("lake"),
        dataset_name="product_events_raw",
    )
    print(pipeline.run(source.with_resources("events"), loader_file_format="parquet"))

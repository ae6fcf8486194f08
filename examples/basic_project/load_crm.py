"""Load the CRM source (no models) into DuckDB (`crm_pipeline.duckdb` in this folder).

    python load_crm.py              # the API as it was
    python load_crm.py --loyalty    # the API now sends `LoyaltyTier` too
"""

import sys

import dlt
from pipelines.crm import crm_api

if __name__ == "__main__":
    pipeline = dlt.pipeline("crm_pipeline", destination="duckdb", dataset_name="crm_raw")
    info = pipeline.run(crm_api(loyalty="--loyalty" in sys.argv))
    print(f"loaded {pipeline.pipeline_name}: {', '.join(info.loads_ids)}")

"""A CRM's REST API as most dlt sources are written: no Pydantic model anywhere.

The records come as the API sends them (CamelCase keys, a nested list of contacts per
account), so dlt names the columns (`account_id`, `annual_revenue`) and puts the list in a
child table (`accounts__contacts`). `dlt-contract-ops models infer` writes the models.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import dlt

_START = datetime(2026, 11, 2, 9, tzinfo=timezone.utc)
_SEGMENTS = ("smb", "mid_market", "enterprise")


def _account(i: int, loyalty: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "AccountId": i,
        "AccountName": f"Account {i}",
        "Segment": _SEGMENTS[i % 3],
        "AnnualRevenue": Decimal(f"{1200 + 37 * i}.50"),
        "CreatedAt": _START + timedelta(hours=i),
        "Contacts": [{"Email": f"c{i}-{k}@example.com", "IsPrimary": k == 0} for k in range(2)],
    }
    if loyalty:  # the API starts sending a field nobody modelled
        row["LoyaltyTier"] = "gold" if i % 2 else "silver"
    return row


@dlt.source
def crm_api(loyalty: bool = False) -> Any:
    @dlt.resource(primary_key="AccountId", write_disposition="merge")
    def accounts() -> Iterator[dict[str, Any]]:
        yield from (_account(i, loyalty) for i in range(120))

    return accounts

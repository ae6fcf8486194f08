"""The adapter contract and its shared implementation, under their historical import path.

`protocol` holds the `DestinationAdapter` protocol, `naming` the catalog naming and
metadata reading, `connection` opening, cancelling and closing the session, `execution` the
`SqlClientAdapter` that runs queries, `timeouts` the `Timeouts` every adapter applies.
Import from those; this module keeps `from dlt_contract_ops.destinations.base import
SqlClientAdapter` working.
"""

from __future__ import annotations

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.execution import SqlClientAdapter
from dlt_contract_ops.destinations.naming import CatalogNames, capabilities, data_location
from dlt_contract_ops.destinations.protocol import DestinationAdapter, QueryKind
from dlt_contract_ops.destinations.timeouts import Timeouts

__all__ = [
    "CatalogNames",
    "DestinationAdapter",
    "QueryKind",
    "SqlClientAdapter",
    "TimeAxis",
    "Timeouts",
    "capabilities",
    "data_location",
]

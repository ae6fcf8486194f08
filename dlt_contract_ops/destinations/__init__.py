"""Destination adapters: the only place that builds and runs SQL."""

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.protocol import DestinationAdapter
from dlt_contract_ops.destinations.timeouts import Timeouts

__all__ = ["Capabilities", "DestinationAdapter", "TimeAxis", "Timeouts"]

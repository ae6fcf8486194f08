"""Destination adapters: the only place that builds and runs SQL."""

from dlt_contract_ops.destinations.base import DestinationAdapter, TimeAxis

__all__ = ["DestinationAdapter", "TimeAxis"]

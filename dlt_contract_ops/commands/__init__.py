"""Click commands beyond `reconcile`, registered on the `dlt-contract-ops` group in cli.py.

Each module imports only click at the top, so `dlt-contract-ops --help` stays fast and never
imports dlt or an alerting SDK.
"""

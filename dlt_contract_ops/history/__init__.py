"""The local finding index: what each sweep found, for the report's history."""

"""The sinks' loaded app project (one DuckDB load with a drifted column) serves here too."""

from tests.sinks.conftest import _loaded_app, app_project

__all__ = ["_loaded_app", "app_project"]

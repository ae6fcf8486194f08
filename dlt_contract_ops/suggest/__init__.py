"""Model patches for drift findings (`reconcile --suggest`)."""

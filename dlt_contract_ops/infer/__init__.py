"""`models infer`: Pydantic models written from what dlt loaded (stored schema and data)."""

"""Acknowledgements: the reviewable file and the book a run applies (`store`), and what the
`ack`, `acks` and `unack` commands do (`service`)."""

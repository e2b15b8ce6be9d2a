"""What the process runs beside its work: health and metrics endpoints, logs, tracing, TLS buffers, peering."""

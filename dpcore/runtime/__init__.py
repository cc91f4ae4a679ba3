"""Running work: one task/message protocol, the local process pool and the shared fair pool."""

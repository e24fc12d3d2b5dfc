"""Code generated from proto/kernel.proto by `make proto-py`; do not edit."""

"""SONiC's own hardware data: the HwSKUs sonic-buildimage publishes (skus.yaml)."""

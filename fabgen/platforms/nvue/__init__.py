"""Cumulus Linux NVUE: startup.yaml (with its OpenTelemetry export), the OTel collector, saved
`show` outputs, and the push driver with NVUE's `apply --confirm`."""

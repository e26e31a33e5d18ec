"""Expand an intent into a Fabric: switches, hosts, cabling and addressing."""

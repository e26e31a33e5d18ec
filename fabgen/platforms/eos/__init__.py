"""Arista EOS: the running-config, gnmic over EOS's OpenConfig paths, the ANTA catalog and
inventory, and the napalm push driver with EOS's session commit timer."""

"""FRR lab: the rendered SONiC underlay running in real FRR, one network namespace per switch.

`fabgen frr-lab INTENT` (and tests/test_frrlab.py) renders the intent's SONiC switches, gives
each a namespace with its config_db.json's interfaces, wires them per the cabling plan (a veth
per cable), starts FRR's zebra, staticd, bfdd and bgpd in each as SONiC's bgp container does,
and boots the frr.conf the container builds from config_db.json (fabgen.platforms.sonic.frr,
checked line for line against the real frrcfgd templates by tests/test_sonic_frr.py). It then
checks every BGP session Established, every BFD session up, every announced prefix installed in
every other switch's kernel with the ECMP width eBGP gives, and drops one leaf uplink's packets
(tc blackhole; the link stays up) to time detection by BFD and, with BFD off on that one
session, by the BGP hold timer.

Modules: `model` (the lab and its expectations, pure), `netns` (namespaces, daemons, tc),
`lab` (bring up, check, measure), `run` (from a render context to a result).

Why a command of fabgen, not a script: it renders with the same code and version as the push,
and an operator can run it on any intent before a change (root, Debian's frr and frr-snmp).
"""

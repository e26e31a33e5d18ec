"""SONiC: config_db.json (QoS, buffers, PFC watchdog, BGP through frrcfgd), the frr.conf the
switch renders from it, gnmic over sonic-gnmi, saved `show` outputs, the push driver, and the
FRR lab (`fabgen frr-lab`)."""

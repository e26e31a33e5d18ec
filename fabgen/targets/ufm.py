"""UFM as UFM: where UFM Enterprise keeps its subnet manager's files, and the setup script that
puts fabgen's values there on a UFM HA pair.

Every path is UFM's, as its manuals print it (tests/test_ufm.py pins them with their source):

- UFM Enterprise User Manual v6.15.8 - v6.24.2, "Appendix - SM Default Files": the SM
  configuration, node name map, partitions, QoS policy and (v6.15.8, v6.19.4 LTS) SM log under
  /opt/ufm/files;
- the same manual, "Appendix - Partitioning" (v6.15.8, v6.19.3, v6.22.1): user partitions go in
  /opt/ufm/files/conf/partitions.conf.user_ext, which UFM (or
  /opt/ufm/scripts/sync_partitions_conf.sh) merges into the partitions.conf it generates; its
  own partitions.conf "cannot be removed or manually modified";
- gv.cfg: "conf/gv.cfg", /opt/ufm/files/conf/gv.cfg in the Partitioning appendix;
- SHARP Rev 3.12.0, "NVIDIA SHARP Installation": sharp_am's configuration in UFM is
  conf/sharp/sharp_am.cfg, beside gv.cfg.

UFM names no file for OpenSM's root and compute-node GUID lists (its SM configuration REST API
shows `root_guid_file` under /opt/ufm/files/conf/opensm/); fabgen puts its two lists in that
directory under its own names, and opensm.conf names them.
"""

from __future__ import annotations

__all__ = [
    "UFM_CN_GUIDS",
    "UFM_FILES",
    "UFM_GV_CFG",
    "UFM_NODE_NAME_MAP",
    "UFM_OPENSM_CONF",
    "UFM_OPENSM_DIR",
    "UFM_PARTITIONS",
    "UFM_PARTITIONS_USER_EXT",
    "UFM_QOS_POLICY",
    "UFM_ROOT_GUIDS",
    "UFM_SHARP_AM_CFG",
    "UFM_SM_LOG",
    "UFM_SYNC_PARTITIONS",
]

UFM_FILES = "/opt/ufm/files"
UFM_OPENSM_DIR = f"{UFM_FILES}/conf/opensm"
UFM_OPENSM_CONF = f"{UFM_OPENSM_DIR}/opensm.conf"
UFM_NODE_NAME_MAP = f"{UFM_OPENSM_DIR}/ib-node-name-map"
UFM_PARTITIONS = f"{UFM_OPENSM_DIR}/partitions.conf"
UFM_QOS_POLICY = f"{UFM_OPENSM_DIR}/qos-policy.conf"
UFM_SM_LOG = f"{UFM_FILES}/log/opensm.log"
UFM_PARTITIONS_USER_EXT = f"{UFM_FILES}/conf/partitions.conf.user_ext"
UFM_SYNC_PARTITIONS = "/opt/ufm/scripts/sync_partitions_conf.sh"
UFM_GV_CFG = f"{UFM_FILES}/conf/gv.cfg"
UFM_SHARP_AM_CFG = f"{UFM_FILES}/conf/sharp/sharp_am.cfg"
# fabgen's names, in UFM's OpenSM directory (module docstring).
UFM_ROOT_GUIDS = f"{UFM_OPENSM_DIR}/root_guids.txt"
UFM_CN_GUIDS = f"{UFM_OPENSM_DIR}/cn_guids.txt"

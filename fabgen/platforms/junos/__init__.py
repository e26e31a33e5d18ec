"""# Junos OS Evolved on the QFX5240 — platform package

Everything fabgen knows about Junos lives here; only `fabgen/platforms/registry/` imports it
(one line per face), and the catalog has the switch (`qfx5240-64od`).

## Modules
- `facts.py`: `FACTS` (contract/facts.py): capabilities, ECMP, hash fields, DLB, port naming,
  hardware, owned sections, gNMI port — each with its source
- `cos.py`: the QoS plan as `class-of-service` (classifier, forwarding classes, PFC profiles +
  watchdog, ECN drop profile from the plan's bytes, schedulers, scheduler map)
- `config.py`: `device_config(ctx, switch)`: the whole config as one dict in Juniper YANG JSON
  form
- `text.py`: that dict as YANG JSON, curly text (what the push loads) and `set` commands
- `target.py`: `JunosTarget`: `junos/<sw>.json`, `.conf`, `.set`, `junos/NOTES.txt` (split per
  switch)
- `saved.py`: parsers of `show ... | display json`, the files `fabgen verify` reads and their
  findings
- `telemetry.py`: `telemetry/gnmic-junos.yaml`: gnmic on the gNMI paths of Juniper's
  23.4R2-EVO models (OpenConfig and Juniper's augments), each with its source;
  `templates/junos-names.star.j2` names the answers (the OpenConfig naming is shared:
  `common/templates/openconfig-names.star.j2`)
- `alerts.py`: `SIGNALS`, the series the alert rules read, and what cannot be alerted on
- `outputs.py`: `OUTPUTS` (contract/outputs.py): target, collector, signals, saved outputs,
  report notes
- `push/candidate.py`: curly text parser, candidate = running minus owned statements plus
  render, management guard
- `push/driver.py`: `JunosDriver(Driver)`: napalm `junos`, `load override`, `commit confirmed`,
  confirm, rollback
- `push/backup.py`: how `fabgen diff` reads the files: the `.conf` statement by statement, owned
  statements only against a backup
- `push/face.py`: `PUSH` (contract/push.py)

## How the core sees it
- Name `junos` in the intent's `platforms` (appended to `INTENT_NAMES`).
- Capabilities: IP MTU 9202 (media 9216 [JVD] - 14-byte header [MTU]); watchdog actions
  drop|forward [PFCWD]; 1 ms steps, `recovery` settable; strict queues need not sit above DWRR;
  commit-confirm (whole minutes); ECMP 512 (the 23.4R2-EVO YANG `maximum-ecmp` ceiling: no
  QFX5240 figure is published); adaptive = flowlet DLB [JVD, APSTRA]; hash = the 5-tuple.
- Ports: `et-0/0/<cage-1>` unsplit, `et-0/0/<cage-1>:<k>` split [JVD].
- Push: napalm `junos` (NETCONF), mode replace (`load override` of a candidate built from the
  running configuration), diff and commit-confirm by the device; backups compared on
  `facts.OWNED`; the management part (`system` but host-name, `re0:mgmt-*`, `em*`, `fxp*`,
  `routing-instances mgmt_junos`) guarded.
- Verify: `bgp.json`, `bfd.json` (with BFD), `interfaces.json`, `lldp.json`, `cos.json` saved
  by `verify/collect-junos.sh`; media MTU converted to the plan's IP MTU; in each of fabgen's
  congestion notification profiles PFC on the RDMA DSCPs only, the lossless priority pausing
  the RDMA queue, and the watchdog as planned (element names from Juniper's 23.4R2-EVO RPC YANG,
  junos-rpc-class-of-service; how a DSCP input map prints its code points is assumed).
- Telemetry and alerts: gnmic dials gNMI on port 32767 (the JVD's) over TLS. PFC frames per
  priority come from Juniper's augment `jnx-pfc-statistics` (in/out-mac-pause-frames), lossless
  drops from the augment's `out-queue` tail drops, link, BGP and BFD state from OpenConfig;
  every path is in Juniper's 23.4R2-EVO models and none is marked not-supported by Juniper's
  deviations. No model of that release has a PFC watchdog or ECN-mark counter: no
  PfcWatchdogTriggered or EcnMarksOnNonRoceQueue rule for Junos (the report says so). Which of
  the paths a QFX5240 streams is **not verified on a switch**. The config turns the
  Packet Forwarding Engine sensors' zero suppression off (`services analytics zero-suppression
  no-zero-suppression`, owned by fabgen): with zeros suppressed a drop counter's first drops
  arrive as a new series and `increase()` sees none (test_telemetry.py shows the miss).
- Headroom report: Junos sizes PFC headroom itself from `input cable-length` (one profile per
  distinct cable length, `fabgen-pfc-<m>m`); no Juniper table to quote, so the report's
  headroom table says NOT SIZED.

## What is not from a public source (also in `junos/NOTES.txt` of every render)
- ECN thresholds: Junos drop profiles take whole-percent fill levels of the memory allocated to
  the queue [Juniper "Configuring CoS WRED Drop Profiles"]; Juniper publishes no QFX5240
  per-queue allocation. fabgen converts the plan's bytes against the switch's whole 165.2 MB
  buffer [COS], rounded down, so marking starts no later than planned (maybe earlier); the
  usual 150 KB..1.5 MB becomes 0..1 %. Not verified on a switch.
- Shared buffer partitions: **not written**. Juniper's JVD values (66/24/10, 66/10, dedicated
  15/30) need 23.4X100; the 23.4R2-EVO YANG has only `shared-buffer percent`
  (kept as `cos.SHARED_BUFFER_JVD`). A test shows libyang refusing the 23.4X100 form.
- MTU 9216, ECMP 512, CNP transmit-rate 5 %, DLB inactivity 128 µs: Juniper-validated (JVD) or
  schema values, not published hardware limits.
- `load-balance per-packet` (JVD); the 23.4R2-EVO YANG calls it deprecated in favour of `per-flow`.
- Saved-output fixtures (`tests/platforms/junos/data`) are written from Juniper's documented
  `| display json` format, not captured from a switch.

## How it is validated
- `tests/platforms/junos/test_yang.py`: every role's JSON validated by yanglint against
  Juniper/yang 23.4R2-EVO (`FABGEN_JUNOS_YANG` = `.../23.4/23.4R2-EVO/native/conf-and-rpcs`;
  skipped without it); unknown statements, 23.4X100 syntax and bad enum values fail. The
  backslash-escaping step (`tests/platforms/junos/yang.py`) is unit-tested and shown to turn a
  module libyang refuses into one it takes.
- `test_push.py`: napalm's real `junos` driver against `tests/fakes/fake_junos.py` (NETCONF
  over SSH on 127.0.0.1): dry run, commit confirmed + confirm, expired confirm reverting,
  rollback, refused statement, management guard.
- `test_config.py`: plan values read back, Juniper values pinned, three renderings equal,
  injection, refusals. `test_saved.py`: parsers and telemetry facts.
- `test_telemetry.py`: the gNMI fixture the alert tests run on
  (`tests/fixtures/gnmi/junos-openconfig-updates.json`) parsed by libyang as data of Juniper's
  23.4R2-EVO OpenConfig modules and augments (unknown leaves and wrong types refused), every
  subscribed path under no `deviate not-supported` of `jnx-openconfig-dev.yang`.
  The contract's timeline cases (tests/platforms/junos/gnmi.py) run every Junos alert through
  gnmic's event model, the rendered processor in starlark-go and `promtool test rules`, storm
  and healthy.
- `test_contract.py`: the shared platform contract (tests/platforms/contract.py) with a Junos
  lab (`lab.py`): `fabgen push` through napalm `junos` to the fake device (dry run, commit
  confirmed then confirm keeping management, a refused statement, a failed health check
  rolling back), the example's configs through libyang, verify on `| display json` outputs.
"""

"""Checks of the switch and NIC models an intent names: known to the catalog, each OS on hardware
it runs on, breakouts the cages' lanes allow."""

from __future__ import annotations

from fabgen import catalog
from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent, SwitchSpec
from fabgen.platforms.registry import facts as registry
from fabgen.suggest import close_matches, closest
from fabgen.topology import sizing

__all__ = ["breakout_lanes", "catalog_names"]


def catalog_names(intent: Intent, diags: Diagnostics) -> None:
    nics = catalog.nics()
    node = intent.cluster.node
    nic = nics.get(node.nic)
    if nic is None:
        guess = closest(node.nic, list(nics))
        diags.error(f"unknown NIC model {node.nic!r}", ("cluster", "node", "nic"),
                    f"did you mean {guess!r}?" if guess else "known: " + ", ".join(nics))
    else:
        if node.nic_ports > nic.max_ports:
            diags.error(f"{nic.name} has {nic.max_ports} port(s)",
                        ("cluster", "node", "nic_ports"))
        speed = sizing.link_speed(intent)
        if speed > nic.speed_gbps:
            diags.error(f"{nic.name} ports run at most {nic.speed_gbps}G, not {speed}G",
                        ("fabric", "speed"))
    transport = "infiniband" if intent.fabric.transport == "infiniband" else "ethernet"
    known = catalog.switches()
    topo = intent.topology
    for role in ("leaf", "spine", "core"):
        spec = getattr(topo, role)
        if spec is None or spec.model is None:
            continue
        model = known.get(spec.model)
        loc = ("topology", role, "model")
        if model is None:
            guess = closest(spec.model, list(known))
            diags.error(f"unknown switch model {spec.model!r}", loc,
                        f"did you mean {guess!r}?" if guess else "known: " + ", ".join(known))
        elif model.transport != transport:
            diags.error(f"{model.name} is an {model.transport} switch; this fabric is "
                        f"{intent.fabric.transport}", loc)
    if topo.tiers == 2 and topo.core is not None:
        diags.warn("core is ignored in a 2-tier fabric", ("topology", "core"))
    _runs_on(intent, diags)


def _runs_on(intent: Intent, diags: Diagnostics) -> None:
    """Each role's OS on its switch model's hardware (its facts' `runs_on`): an OS on
    another vendor's switch than its own would render configs no switch can load. The error
    sits where the OS was chosen (platforms.<role>), else at the model (the OS by default);
    a custom switch has no vendor to check."""
    if intent.fabric.transport != "roce":
        return
    topo, plats = intent.topology, intent.platforms
    known = catalog.switches()
    # Where each role's OS and model come from: its own field, else the role it defaults to.
    os_from = {"leaf": "leaf", "spine": "spine" if plats.spine else "leaf"}
    os_from["core"] = "core" if plats.core else os_from["spine"]
    model_from = {"leaf": "leaf", "spine": "spine" if topo.spine else "leaf"}
    model_from["core"] = "core" if topo.core else model_from["spine"]
    # One error per OS choice and model, naming every role that has both.
    clashes: dict[tuple[str, str], list[str]] = {}
    # Cores: when 3 tiers are asked for or a core is described (with tiers: auto an
    # undescribed core is the spine's model and OS, checked with the spines).
    core = topo.tiers == 3 or (topo.tiers != 2 and (topo.core or plats.core) is not None)
    for role in ("leaf", "spine", *(("core",) if core else ())):
        spec = getattr(topo, model_from[role])
        model = known.get(spec.model) if spec is not None and spec.model else None
        if model is not None and not _runs_on_vendor(getattr(plats, os_from[role]),
                                                     model.vendor):
            clashes.setdefault((os_from[role], model.key), []).append(role)
    for (chosen, key), roles in clashes.items():
        platform, model, first = getattr(plats, chosen), known[key], roles[0]
        named = model.name if model.name.lower().startswith(model.vendor.lower()) \
            else f"{model.vendor} {model.name}"
        loc = (("platforms", chosen) if chosen in plats.model_fields_set
               else ("topology", model_from[first], "model"))
        # Did you mean: the OSes that run on this switch (the closest spelling first), and
        # the models this OS runs on.
        fits = [p for p in registry.INTENT_NAMES if _runs_on_vendor(p, model.vendor)]
        fits = list(dict.fromkeys([*close_matches(platform, fits), *fits]))
        models = [k for k, m in known.items()
                  if m.transport == model.transport and _runs_on_vendor(platform, m.vendor)]
        hint = " ".join(filter(None, (
            f"did you mean {' or '.join(repr(f) for f in fits)}?" if fits else "",
            f"{platform} runs on {', '.join(models)}" if models else "")))
        diags.error(f"{platform} does not run on {key} ({', '.join(roles)}), the {named}: "
                    f"{platform} runs on {registry.get(platform).runs_on.what}", loc,
                    hint or None)


def _runs_on_vendor(platform: str, vendor: str) -> bool:
    """Whether `platform` runs on a switch of catalog vendor `vendor`."""
    return vendor in registry.get(platform).runs_on.vendors


def breakout_lanes(intent: Intent, diags: Diagnostics) -> None:
    """A breakout splits a native port's electrical lanes evenly, or the ports cannot be named
    (render would stop at the first port name: issue 18). Catalog breakouts are the vendor's;
    a custom switch's is the intent's, on an 8-lane OSFP/QSFP-DD port."""
    from fabgen.catalog import Breakout
    from fabgen.catalog.ports import native_lanes

    topo = intent.topology
    specs: list[tuple[tuple[str, ...], object]] = [
        (("topology", role), getattr(topo, role)) for role in ("leaf", "spine", "core")]
    for net in ("storage", "management"):
        extra = getattr(topo, net)
        if extra is not None:
            specs += [(("topology", net, role), getattr(extra, role))
                      for role in ("leaf", "spine")]
    for base, spec in specs:
        if not isinstance(spec, SwitchSpec) or spec.model is not None or spec.breakout is None:
            continue
        count = Breakout.parse(spec.breakout).count
        lanes = native_lanes("custom")
        if lanes % count:
            ways = ", ".join(str(n) for n in range(1, lanes + 1) if lanes % n == 0)
            diags.error(f"a {count}-way breakout cannot split a custom switch's {lanes}-lane "
                        "ports evenly", (*base, "breakout"), f"split {ways} ways")

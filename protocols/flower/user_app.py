"""``flower-app``: a user's own Flower app, run and recorded by fedsec in either engine.

The app is a Flower app folder (``app=<folder>``: a ``pyproject.toml`` whose
``[tool.flwr.app.components]`` name the ``serverapp`` and ``clientapp`` as ``module:attr``
and whose ``[tool.flwr.app.config]`` is its run config), or two ``module:attr`` names
importable from the working directory (``server_app=``, ``client_app=``). fedsec wraps the
ServerApp's Grid and the ClientApp exactly as it does the shipped app's (:mod:`.recorder`,
:class:`.client.RecordedClientApp`); the user adds :func:`.client.record_plaintext` (and, if
the rows should be ground truth, :func:`.client.expose_data`) to the ClientApp for the
plaintext updates. Each run-config entry of the app is a parameter too (``--set lr=0.05``,
or swept in an audit), checked against the app's own entries and converted to their types.

fedsec knows nothing of the app's model or data: the run's dataset and partition only say
how many clients there are (client ``i`` gets ``partition-id`` ``i``). What the run reports
is the message counts and whatever the ServerApp leaves in its ``context.state``: each
number of a MetricRecord as a metric (``<record>.<name>``), each ArrayRecord as a value
(``state/<record>``, flattened). A strategy's result is returned to the app's ``main``, not to
Flower; an app that wants it reported saves it there.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.errors import FedsecError, ValidationError
from fedsec.outcomes import Outcome
from fedsec.protocols.flower import tags
from fedsec.protocols.flower.protocol import FlowerProtocol, check_engine
from fedsec.registry import register
from fedsec.validation import check_float, param_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation

OWNER = "protocol 'flower-app'"
SCALARS = (bool, int, float, str)


def read_project(folder: Path) -> dict[str, Any]:
    """The ``pyproject.toml`` of a Flower app folder, or FedsecError saying what is missing."""
    path = folder / "pyproject.toml"
    if not folder.is_dir():
        raise FedsecError(f"The Flower app folder {str(folder)!r} does not exist; set app= to "
                          "a folder holding the app's pyproject.toml.")
    if not path.is_file():
        raise FedsecError(f"{str(folder)!r} holds no pyproject.toml; a Flower app folder "
                          "names its ServerApp and ClientApp in its pyproject.toml's "
                          "[tool.flwr.app.components] (flwr new writes one).")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise FedsecError(f"{str(path)!r} is not valid TOML: {error}.") from None


def app_table(project: Mapping[str, Any]) -> dict[str, Any]:
    """The ``[tool.flwr.app]`` table of a project."""
    return dict(dict(dict(project.get("tool", {})).get("flwr", {})).get("app", {}))


def flat_config(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A run-config table flattened as Flower does (nested keys joined by ``.``).

    >>> flat_config({"lr": 0.1, "model": {"hidden": 8}})
    {'lr': 0.1, 'model.hidden': 8}
    """
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            out.update(flat_config(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def load_component(ref: str, folder: Path | None, kind: str) -> Any:
    """The ``ServerApp`` or ``ClientApp`` (``kind``) that ``module:attr`` names, imported
    with ``folder`` first on ``sys.path``; FedsecError naming what is wrong."""
    from flwr.clientapp import ClientApp
    from flwr.serverapp import ServerApp

    module_name, _, attributes = ref.partition(":")
    if folder is not None and str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    try:
        value: Any = importlib.import_module(module_name)
        for attribute in attributes.split("."):
            value = getattr(value, attribute)
    except (ImportError, AttributeError) as error:
        where = f" in {str(folder)!r}" if folder is not None else " from the working directory"
        raise FedsecError(f"The app's {kind} {ref!r} cannot be loaded{where}: {error}.") from None
    expected = ServerApp if kind == "serverapp" else ClientApp
    if not isinstance(value, expected):
        raise FedsecError(f"The app's {kind} {ref!r} is a {type(value).__name__}, not a "
                          f"Flower {expected.__name__}.")
    return value


@register("protocol", "flower-app")
class FlowerUserApp(FlowerProtocol):
    """Your own Flower app, from its folder (app=) or module:attr names, in Flower's simulation or
    deployment engine, every message recorded (the flower extra).

    A user's Flower app (from its folder or ``module:attr`` names), every message recorded.
    """

    paper = ""
    default_dataset = "iris"
    exposes = frozenset({tags.TRAIN_INSTRUCTION, tags.TRAIN_INSTRUCTION_ARRAYS,
                         tags.TRAIN_REPLY, tags.TRAIN_REPLY_ARRAYS, tags.EVALUATE_INSTRUCTION,
                         tags.EVALUATE_INSTRUCTION_ARRAYS, tags.EVALUATE_REPLY})

    @dataclass(frozen=True, kw_only=True)
    class Params:
        app: str = ""
        """The Flower app folder (its pyproject.toml names the components and run config)."""
        server_app: str = ""
        """The ServerApp as ``module:attr`` (default: the folder's ``serverapp``)."""
        client_app: str = ""
        """The ClientApp as ``module:attr`` (default: the folder's ``clientapp``)."""
        engine: str = "simulation"
        """Flower's engine: ``simulation`` or ``deployment`` (SuperLink and SuperNodes as
        processes of their own on 127.0.0.1, TLS)."""
        run_config: dict[str, Any] = field(default_factory=dict)
        """Run-config entries set for this run (any entry of the app's own can also be given
        by its name as a parameter)."""
        timeout: float = 3600.0
        """Seconds a run in the deployment engine may take."""

        def __post_init__(self) -> None:
            check_engine(self.engine, owner=OWNER)
            check_float(self.timeout, owner=OWNER, name="timeout", min_value=0.0,
                        min_inclusive=False)
            for name in ("server_app", "client_app"):
                ref = getattr(self, name)
                if not isinstance(ref, str) or ":" not in ref:
                    raise param_error(OWNER, name, "a 'module:attr' name (or app= a Flower "
                                      "app folder whose pyproject.toml names it)", ref)
            if not isinstance(self.run_config, Mapping) or not all(
                    isinstance(v, SCALARS) for v in self.run_config.values()):
                raise param_error(OWNER, "run_config", "a table of booleans, numbers and "
                                  "strings", self.run_config)

    def __init__(self, **params: Any) -> None:
        fields = {f.name for f in dataclasses.fields(self.Params)}
        app = str(params.get("app", "") or "")
        project = read_project(Path(app).expanduser().resolve()) if app else {}
        table = app_table(project)
        defaults = flat_config(table.get("config", {}))
        entries = {k: v for k, v in params.items() if k not in fields}
        unknown = sorted(set(entries) - set(defaults))
        if unknown:
            raise ValidationError(
                f"{OWNER} has no parameter {', '.join(map(repr, unknown))}, and "
                + (f"the app's run config has no such entry. Its entries: "
                   f"{', '.join(sorted(defaults)) or 'none'}; " if app else
                   "no app folder (app=) names run-config entries; ")
                + f"its parameters: {', '.join(sorted(fields))}.")
        overrides = {**dict(params.get("run_config") or {}), **entries}
        config = {k: _typed(v, defaults.get(k), k) for k, v in overrides.items()}
        components = dict(table.get("components", {}))
        known = {k: v for k, v in params.items() if k in fields and k != "run_config"}
        if app:
            known["app"] = str(Path(app).expanduser().resolve())
            for name, key in (("server_app", "serverapp"), ("client_app", "clientapp")):
                if not known.get(name):
                    if key not in components:
                        raise FedsecError(
                            f"{known['app']!r}'s pyproject.toml names no {key} in "
                            f"[tool.flwr.app.components]; add {key} = \"package.module:app\" "
                            f"there, or set {name}=module:attr.")
                    known[name] = str(components[key])
        elif not (params.get("server_app") and params.get("client_app")):
            raise param_error(OWNER, "app", "a Flower app folder (or server_app= and "
                              "client_app= as module:attr)", app)
        super().__init__(**known, run_config=config)
        self._defaults = defaults
        self._project = project

    def _folder(self) -> Path | None:
        return Path(self.params.app) if self.params.app else None

    def apps(self) -> tuple[Any, Any]:
        folder = self._folder()
        return (load_component(self.params.server_app, folder, "serverapp"),
                load_component(self.params.client_app, folder, "clientapp"))

    def deployed_apps(self, folder: Path) -> tuple[Any, Any]:
        return (load_component(self.params.server_app, folder, "serverapp"),
                load_component(self.params.client_app, folder, "clientapp"))

    def deployment_options(self) -> dict[str, Any]:
        folder = self._folder()
        if folder is None:
            return {"timeout": self.params.timeout, "pythonpath": [os.getcwd()]}
        return {"timeout": self.params.timeout, "source": folder, "project": self._project}

    def run_config(self, federation: Federation) -> dict[str, Any]:
        return {**self._defaults, **self.params.run_config}

    def outcome(self, server_context: Any, federation: Federation,
                summary: Mapping[str, Any]) -> Outcome:
        state = server_context.state
        metrics: dict[str, float] = {}
        for key, record in state.metric_records.items():
            for name, value in record.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    metrics[f"{key}.{name}"] = float(value)
        values = {f"state/{key}": np.concatenate(
            [np.asarray(a.numpy(), dtype=np.float64).ravel() for a in record.values()]
            or [np.zeros(0)]) for key, record in state.array_records.items()}
        return Outcome(metrics=metrics, values=values)

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        """None: fedsec does not know what the app trains, so nothing to compare with."""
        return Outcome()


def _typed(value: Any, default: Any, key: str) -> Any:
    """``value`` (a string from ``--set``, or a TOML value) as the type of the app's own
    ``default`` for ``key``."""
    if not isinstance(value, str) or default is None or isinstance(default, str):
        return value
    try:
        if isinstance(default, bool):
            lowered = value.lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                raise ValueError(value)
            return lowered in ("true", "1", "yes", "on")
        return type(default)(value)
    except ValueError:
        raise ValidationError(f"The run-config entry {key!r} of {OWNER} must be "
                              f"{type(default).__name__} (the app's default is {default!r}). "
                              f"Got {value!r} instead.") from None

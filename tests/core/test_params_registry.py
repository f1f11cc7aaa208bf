"""Parameter parsing, validation messages, and the plug-in registry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from fedsec import plugin_registry, registry
from fedsec.errors import FedsecError, UnknownNameError, ValidationError
from fedsec.interfaces import Attack
from fedsec.params import build_params, parse_assignments
from fedsec.validation import check_float, check_int


@dataclass(frozen=True, kw_only=True)
class Params:
    n_landmarks: int = 10
    gamma: float = 1.0
    exact: bool = False
    method: str = "P"

    def __post_init__(self) -> None:
        check_int(self.n_landmarks, owner="FedCG", name="n_landmarks", min_value=1)


def test_strings_are_converted_to_declared_types() -> None:
    p = build_params(Params, {"n_landmarks": "5", "gamma": "0.5", "exact": "true"}, owner="x")
    assert (p.n_landmarks, p.gamma, p.exact, p.method) == (5, 0.5, True, "P")


def test_error_messages_follow_one_format() -> None:
    with pytest.raises(ValidationError) as info:
        build_params(Params, {"n_landmarks": 0}, owner="FedCG")
    assert str(info.value) == (
        "The 'n_landmarks' parameter of FedCG must be an int >= 1. Got 0 instead."
    )
    with pytest.raises(ValidationError, match="Valid parameters: exact, gamma, method"):
        build_params(Params, {"n_landmark": 3}, owner="FedCG")
    with pytest.raises(ValidationError, match="must be int"):
        build_params(Params, {"n_landmarks": "many"}, owner="FedCG")
    with pytest.raises(ValidationError, match="finite number"):
        check_float(float("nan"), owner="o", name="x")
    with pytest.raises(ValidationError):
        check_int(True, owner="o", name="x")


def test_assignments_parse() -> None:
    assert parse_assignments(["a=1", "b = x"], what="p") == {"a": "1", "b": "x"}
    with pytest.raises(ValidationError, match="key=value"):
        parse_assignments(["novalue"], what="p")


def test_builtins_are_registered() -> None:
    assert "secure-sum" in registry.names("protocol")
    assert "plain" in registry.names("backend")
    assert "contribution-readout" in registry.names("attack")
    assert "gaussian-noise" in registry.names("defense")
    assert "reconstruction-error" in registry.names("scorer")


def test_unknown_names_list_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"Valid protocol names: .*secure-sum"):
        registry.get("protocol", "secure-summ")
    with pytest.raises(UnknownNameError, match="component kind"):
        registry.get("gadget", "x")


def test_module_path_loads_a_user_class() -> None:
    cls = registry.get("attack", "fedsec.attacks.contribution_readout:ContributionReadout")
    assert issubclass(cls, Attack)
    with pytest.raises(ValidationError, match=r"is not a Attack subclass"):
        registry.get("attack", "fedsec.scoring:ReconstructionError")
    with pytest.raises(ValidationError, match="Cannot import"):
        registry.get("attack", "no_such_module_q:X")


def test_duplicate_registration_is_refused() -> None:
    with pytest.raises(FedsecError, match="already registered"):
        @registry.register("protocol", "secure-sum")
        class Other:
            pass


def test_entry_points_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from fedsec.interfaces import Scorer

    class ThirdParty(Scorer):
        def score(self, reconstruction, truth):
            return {}

    class EntryPoint:
        name, value = "third-party", "pkg:ThirdParty"

        def load(self):
            return ThirdParty

    monkeypatch.setattr(plugin_registry, "entry_points",
                        lambda group: [EntryPoint()] if group == "fedsec.scorers" else [])
    monkeypatch.setattr(registry.scorers, "_loaded", False)
    monkeypatch.setattr(registry.scorers, "_entry_points", None)
    try:
        assert registry.get("scorer", "third-party") is ThirdParty
    finally:
        registry.unregister("scorer", "third-party")


def test_a_scenario_module_is_loaded_from_its_folder_appended_to_the_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from fedsec.plugin_registry import import_from

    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    (tmp_path / "scenario_helper_q.py").write_text("VALUE = 42\n")
    (tmp_path / "scenario_attack_q.py").write_text(
        "import json\nimport scenario_helper_q\nclass A:\n"
        "    value = scenario_helper_q.VALUE\n    json_is_real = hasattr(json, 'JSONDecoder')\n")
    (tmp_path / "json.py").write_text("raise RuntimeError('the scenario shadowed json')\n")
    module = import_from("scenario_attack_q", [tmp_path])
    assert module.A.value == 42 and module.A.json_is_real  # its neighbour, and the real json
    assert sys.path[-1] == str(tmp_path) and sys.path[0] != str(tmp_path)


@pytest.mark.parametrize("name", ["colorsys", "sklearn"])
def test_a_scenario_module_may_not_shadow_an_installed_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    import sys

    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", {k: v for k, v in sys.modules.items()
                                         if k.partition(".")[0] != name})
    (tmp_path / f"{name}.py").write_text("class Shadow:\n    pass\n")
    with pytest.raises(ValidationError, match="may not shadow"):
        registry.get("attack", f"{name}:Shadow", search=[tmp_path])
    assert name not in sys.modules or not hasattr(sys.modules[name], "Shadow")

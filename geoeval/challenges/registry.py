"""The registry of box protocols: name → :class:`BoxProtocol`, one entry each.

Every box protocol (PASCAL VOC, COCO, ROBIN, Neovision2, DOTA) is one entry:
its readers, its evaluator, its terminal tables, its command-line command and
its parameters. What reads the registry instead of naming protocols:

* ``geoeval boxes <name>`` (:mod:`geoeval.cli.boxes`): one command per entry,
  the entry's own command module when it names one, else a command generated
  from :attr:`BoxProtocol.parameters` (each an option with its choices or rule);
* the public API: ``geoeval.<api>`` is the evaluator of the entry whose
  :attr:`BoxProtocol.api` it is (``geoeval.evaluate_dota``), and
  ``geoeval.evaluate_boxes(name, …)`` runs any entry with its parameters checked;
* the JSON report: the evaluator's result's ``to_dict()`` (``--json``).

A new protocol is one module (an evaluator ``f(reference, submission,
**parameters) -> result`` whose result has ``to_dict()`` and ``warnings``,
and a table builder ``tables(result) -> renderables``) and one :func:`register`
call (below, or in a plug-in at import time, before the command line is built).
Evaluators, tables, readers and commands may be given as ``"module:function"``,
imported on first use, as the matcher registry does (the tables and commands
live in layers above this one).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from geoeval import validate
from geoeval.errors import InputError


def resolve(target: Callable[..., Any] | str) -> Callable[..., Any]:
    """``target`` itself, or the function a ``"module:function"`` string names."""
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Option:
    """One parameter of a protocol: a keyword of its evaluator and an option of its command.

    Attributes
    ----------
    keyword : str
        The evaluator's keyword; the option is ``--`` and the keyword with dashes.
    default : int, float, str or bool
        Value when not given; its type is the option's type (``bool``: a flag).
    help : str
        One line for ``--help`` and the docs.
    choices : tuple
        The allowed values (shown as ``[1|2]``), or empty.
    rule : geoeval.validate.Rule, optional
        The valid range of a number.
    kind : type, optional
        The value's type when the default (``None``) does not tell it.
    flag : str, optional
        The command-line option when it is not ``--`` and the keyword with dashes.
    """

    keyword: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    rule: validate.Rule | None = None
    kind: type | None = None
    flag: str | None = None

    @property
    def option(self) -> str:
        """The command-line option: ``--task`` for ``task`` (or :attr:`flag`)."""
        return self.flag or "--" + self.keyword.replace("_", "-")

    @property
    def value_type(self) -> type:
        """The value's type: :attr:`kind`, else the default's."""
        return self.kind or type(self.default)

    def check(self, value: Any, name: str | None = None) -> Any:
        """``value`` checked (one of the choices, within the rule); else
        :class:`~geoeval.validate.BadValue` naming ``name`` (default the keyword)."""
        name = name or self.keyword
        if self.choices:
            for choice in self.choices:
                if value == choice or str(value) == str(choice):
                    return choice
            shown = ", ".join(str(c) for c in self.choices)
            raise validate.BadValue(name, f"must be one of {shown}, got {value!r}")
        if self.rule is not None:
            value = self.rule.check(name, value)
        if self.value_type is bool and not isinstance(value, bool):
            raise validate.BadValue(name, f"must be true or false, got {value!r}")
        return value


@dataclass(frozen=True)
class BoxProtocol:
    """One registered box protocol.

    Attributes
    ----------
    name : str
        Registry key: ``geoeval boxes <name>``.
    evaluate : callable or str
        ``f(reference, submission, **parameters) -> result``; the result has
        ``to_dict()`` (the JSON report) and ``warnings``.
    tables : callable or str
        ``tables(result) -> list of renderables``: what the command prints.
    title : str
        One line: the command's help summary.
    readers : tuple of (callable or str)
        The readers of its inputs (documentation and introspection; the
        evaluator reads paths itself).
    reference, submission : str
        Help of the ``REFERENCE`` and ``SUBMISSION`` arguments.
    parameters : tuple of Option
        The evaluator's parameters; a generated command offers each as an option.
    api : str
        Its public name: ``geoeval.<api>`` is the evaluator.
    command : callable or str, optional
        A command written by hand (``"geoeval.cli.boxes_voc:voc_command"``);
        ``None``: generated from the entry.
    examples : tuple of str
        ``$ geoeval boxes …`` lines shown in a generated command's help.
    source : str
        Where the protocol comes from (authors, year, section; the reference code).
    """

    name: str
    evaluate: Callable[..., Any] | str
    tables: Callable[..., Any] | str
    title: str
    readers: tuple[Callable[..., Any] | str, ...] = ()
    reference: str = "Reference (ground truth)."
    submission: str = "Submission (detections, with confidences)."
    parameters: tuple[Option, ...] = ()
    api: str = ""
    command: Callable[..., Any] | str | None = None
    examples: tuple[str, ...] = ()
    source: str = ""

    def arguments(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The evaluator's keywords: each parameter from ``options`` (checked) or its
        default; an unknown keyword is an :class:`InputError` listing the known ones."""
        known = {p.keyword: p for p in self.parameters}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise InputError(f"{self.name}: unknown parameter {unknown[0]!r} (known: "
                             f"{', '.join(known) or 'none'})")
        return {k: p.check(options[k]) if k in options else p.default for k, p in known.items()}

    def run(self, reference: Any, submission: Any, **options: Any) -> Any:
        """Evaluate ``submission`` against ``reference`` with checked parameters."""
        return resolve(self.evaluate)(reference, submission, **self.arguments(options))


_PROTOCOLS: dict[str, BoxProtocol] = {}
#: Names every box command has already (its arguments, ``--json``, ``--quiet``, ``--strict``).
RESERVED = ("reference", "submission", "out", "json_path", "quiet", "strict", "help")


def register(protocol: BoxProtocol) -> BoxProtocol:
    """Add ``protocol`` to the registry (its name and API name must be new, its
    parameters' names none of :data:`RESERVED`)."""
    taken = [p.keyword for p in protocol.parameters
             if p.keyword in RESERVED or p.option.lstrip("-") in ("json", *RESERVED)]
    if taken:
        raise ValueError(f"box protocol {protocol.name!r}: parameter {taken[0]!r} clashes "
                         "with an option every box command has")
    if protocol.name in _PROTOCOLS:
        raise ValueError(f"a box protocol called {protocol.name!r} is already registered")
    if protocol.api and any(p.api == protocol.api for p in _PROTOCOLS.values()):
        raise ValueError(f"the API name {protocol.api!r} is already taken")
    _PROTOCOLS[protocol.name] = protocol
    return protocol


def unregister(name: str) -> None:
    """Remove a protocol from the registry."""
    del _PROTOCOLS[name]


@contextmanager
def registered(protocol: BoxProtocol) -> Iterator[BoxProtocol]:
    """``protocol`` registered for the ``with`` block only (tests, experiments)."""
    register(protocol)
    try:
        yield protocol
    finally:
        unregister(protocol.name)


def names() -> tuple[str, ...]:
    """Names of the registered protocols, in registration order."""
    return tuple(_PROTOCOLS)


def get(name: str) -> BoxProtocol:
    """The protocol called ``name`` (:class:`InputError` listing the known ones)."""
    try:
        return _PROTOCOLS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown box protocol {name!r} (choose from "
                         f"{', '.join(_PROTOCOLS)})") from None


def by_api(api: str) -> BoxProtocol | None:
    """The protocol whose public name is ``api``, or ``None``."""
    return next((p for p in _PROTOCOLS.values() if p.api == api), None)


def evaluate_boxes(name: str, reference: Any, submission: Any, **options: Any) -> Any:
    """Run the box protocol ``name`` with its parameters checked by its entry.

    Examples
    --------
    ``geoeval.evaluate_boxes("dota", "labelTxt/", "results/", task=2)`` is
    ``geoeval.evaluate_dota("labelTxt/", "results/", task=2)`` with ``task``
    checked against the entry's choices.
    """
    return get(name).run(reference, submission, **options)


_IOU = validate.IOU
_EPS = validate.Rule(low=0.0, high=1.0, high_open=True)
_ROBIN = (
    Option("preset", "rough", "Thresholds: rough 0.15/0.5/0.15, precise 0.05/0.2/0.05.",
           choices=("rough", "precise")),
    Option("eps1", None, "Localisation threshold ε1 (overrides the preset).", rule=_EPS,
           kind=float),
    Option("eps2", None, "Completeness threshold ε2.", rule=_EPS, kind=float),
    Option("eps3", None, "Correctness threshold ε3.", rule=_EPS, kind=float),
)

register(BoxProtocol(
    "voc", "geoeval.challenges.voc:evaluate_voc", "geoeval.report.box_tables:voc_tables",
    "PASCAL VOC: per-class precision x recall, AP (every-point and 11-point), mAP.",
    readers=("geoeval.io.boxes:read_boxes",),
    parameters=(Option("iou_threshold", 0.5, "Minimum IoU of a true positive.", rule=_IOU),
                Option("plus_one", False, "Devkit areas (x2 - x1 + 1)(y2 - y1 + 1).",
                       flag="--voc-plus-one")),
    api="evaluate_voc", command="geoeval.cli.boxes_voc:voc_command",
    source="Everingham et al. 2010; Padilla et al. 2020 (Object-Detection-Metrics)"))
register(BoxProtocol(
    "coco", "geoeval.challenges.coco:evaluate_coco", "geoeval.report.box_tables:coco_tables",
    "COCO (bbox, segm, boundary): AP, AP50, AP75, APs/m/l, AR1/10/100, ARs/m/l as the "
    "official evaluators.",
    readers=("geoeval.io.boxes:read_coco_pair",),
    parameters=(Option("iou_type", "bbox", "Compare boxes, instance masks or boundaries.",
                       choices=("bbox", "segm", "boundary")),
                Option("dilation_ratio", 0.02, "--iou-type boundary: band width as a "
                       "fraction of the image diagonal.",
                       rule=validate.RULES["dilation_ratio"])),
    api="evaluate_coco", command="geoeval.cli.boxes_coco:coco_command",
    source="Lin et al. 2014; pycocotools COCOeval"))
register(BoxProtocol(
    "robin", "geoeval.challenges.robin:evaluate_robin", "geoeval.report.box_tables:robin_tables",
    "ROBIN detection: criterion G, precision/recall over all images, R*, P*, EER, AUC.",
    readers=("geoeval.io.boxes:read_boxes",),
    parameters=(*_ROBIN,
                Option("points", False, "Detections are access points (box centres)."),
                Option("difficult_alpha", 0.05,
                       "Significance level of the difficult-image test.",
                       rule=validate.Rule(low=0.0, high=1.0, low_open=True, high_open=True)),
                Option("per_category", False, "Also score each category as its own "
                                              "detector.")),
    api="evaluate_robin", command="geoeval.cli.boxes_robin:robin_command",
    source="D'Angelo et al. 2006 (ROBIN evaluation protocol)"))
register(BoxProtocol(
    "robin-categories", "geoeval.challenges.robin_categories:robin_categories",
    "geoeval.report.box_tables:robin_category_tables",
    "ROBIN categorisation: confusion matrix η, D, U, D*, U*, EDU, rejection, ERR.",
    readers=("geoeval.io.boxes:read_boxes",),
    parameters=(*_ROBIN,),
    api="robin_categories", command="geoeval.cli.boxes_robin:robin_categories_command",
    source="D'Angelo et al. 2006, §4.2-4.3"))
register(BoxProtocol(
    "neovision2", "geoeval.challenges.neovision2:evaluate_neovision2",
    "geoeval.report.box_tables:neovision2_tables",
    "Neovision2: NMOTDA per class and domain, detection only, ROC and Az.",
    readers=("geoeval.io.neovision2:read_neovision2",),
    parameters=(Option("iou_threshold", 0.2, "Match when IoU ≥ this.", rule=_IOU),
                Option("roc_max_fppf", None, "Right end of the FPPF axis for Az.",
                       rule=validate.Rule(low=0.0, low_open=True), kind=float)),
    api="evaluate_neovision2", command="geoeval.cli.boxes_neovision2:neovision2_command",
    source="Ekambaram et al. 2012 (DARPA Neovision2 evaluation)"))
register(BoxProtocol(
    "dota", "geoeval.challenges.dota:evaluate_dota", "geoeval.report.box_tables:dota_tables",
    "DOTA: per-class AP and mAP of oriented (task 1) or horizontal (task 2) boxes, "
    "as DOTA_devkit.",
    readers=("geoeval.io.boxes:read_dota_labels", "geoeval.io.boxes:read_dota_results"),
    reference="Reference: folder of DOTA labelTxt files (one per image).",
    submission="Submission: folder of Task1_<class>.txt (task 1) or Task2_<class>.txt "
               "(task 2) files.",
    parameters=(
        Option("task", 1, "1: oriented boxes (four corners); 2: horizontal boxes.",
               choices=(1, 2)),
        Option("version", "1.0", "DOTA version: its class list (1.5: difficult objects "
                                 "counted, as its devkit scripts do).",
               choices=("1.0", "1.5", "2.0")),
        Option("metric", "voc07", "voc07: the devkit's 11-point AP; area: every-point AP.",
               choices=("voc07", "area"))),
    api="evaluate_dota",
    examples=(
        "$ geoeval boxes dota sample_data/boxes/dota/labelTxt sample_data/boxes/dota/det",
        "$ geoeval boxes dota sample_data/boxes/dota/labelTxt sample_data/boxes/dota/det "
        "--task 2 --metric area --json dota.json"),
    source="Xia et al. 2018, §5; Ding et al., DOTA_devkit (dota_evaluation_task1.py, "
           "dota_evaluation_task2.py, commit 9938855)"))

register(BoxProtocol(
    "crowdai", "geoeval.challenges.crowdai:evaluate_crowdai",
    "geoeval.report.box_tables:crowdai_tables",
    "CrowdAI building polygons: mask AP/AR, Boundary AP, IoU, C-IoU, N ratio, MTA and "
    "PoLiS, each as the script the papers use.",
    readers=("geoeval.io.boxes:read_coco",),
    reference="Reference: COCO JSON with polygon segmentations and image sizes "
              "(CrowdAI's annotation.json).",
    submission="Submission: COCO results JSON with polygon segmentations and scores.",
    parameters=(Option("dilation_ratio", 0.02, "Boundary AP's band width as a fraction of "
                       "the image diagonal (at least one pixel).",
                       rule=validate.RULES["dilation_ratio"]),),
    api="evaluate_crowdai",
    examples=(
        "$ geoeval boxes crowdai sample_data/boxes/crowdai/annotation.json "
        "sample_data/boxes/crowdai/results.json",
        "$ geoeval boxes crowdai sample_data/boxes/crowdai/annotation.json "
        "sample_data/boxes/crowdai/results.json --json crowdai.json"),
    source="Girard et al. 2021 (frame-field learning), Zorzi et al. 2022 (PolyWorld), Xu "
           "et al. 2023 (HiSup); their scripts at the commits of docs/crowdai.md"))

#: The built-in protocols.
BUILTIN: tuple[str, ...] = names()
